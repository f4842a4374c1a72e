// latchkey-demo: `latchkey demo` runs this (the `latchkey` binary is the server and links only
// FoundationEssentials; the demo is an SDK client, so it links Foundation and LatchkeyClient).
//
//   latchkey-demo [--url URL]    default http://127.0.0.1:8080
//
// Exits 0 when every step answered as it should, 1 at the first that did not, 2 on bad usage.
import Foundation
import LatchkeyClient

var arguments = Array(CommandLine.arguments.dropFirst())
var base = "http://127.0.0.1:8080"
while let argument = arguments.first {
    arguments.removeFirst()
    if argument == "--url", let value = arguments.first {
        arguments.removeFirst()
        base = value
    } else {
        FileHandle.standardError.write(Data("usage: latchkey demo [--url URL]\n".utf8))
        exit(2)
    }
}
while base.hasSuffix("/") { base.removeLast() }
guard let url = URL(string: base), url.scheme == "http" || url.scheme == "https", url.host != nil else {
    FileHandle.standardError.write(Data("latchkey demo: --url must be an http or https URL\n".utf8))
    exit(2)
}
do {
    try await Demo(base: url).run()
    print("\nThe story holds: every step answered as Apple's server rules say it should.")
    exit(0)
} catch let failure as DemoFailure {
    print("   ✗ \(failure.message)")
    exit(1)
} catch let error as LatchkeyError {
    let hint = error.code == .network ? "; is the server running (make run)?" : ""
    print("   ✗ the SDK answered \(error)\(hint)")
    exit(1)
} catch {
    print("   ✗ \(error)")
    exit(1)
}
