import Foundation
import Testing

/// The SDK core stays portable: Foundation, the C library of the platform, and the wire models;
/// Apple's frameworks only in the Apple glue. No OpenSSL, libevent, SQLite or server module.
@Suite("SDK portability")
struct PortabilityTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/LatchkeyClient")

    @Test("Every import of Sources/LatchkeyClient is Foundation, the platform's libc or the wire models; Apple frameworks only in Apple/")
    func imports() throws {
        let portable: Set<String> = ["Foundation", "FoundationNetworking", "Darwin", "Glibc", "Musl", "LatchkeyWire", "LatchkeyJSON"]
        let apple: Set<String> = ["AuthenticationServices", "DeviceCheck", "LocalAuthentication", "Security"]
        let files = try #require(FileManager.default.enumerator(atPath: Self.sources.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "found the sources at \(Self.sources.path)")
        for file in files {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                    words[..<index].allSatisfy({ ["public", "package", "internal", "private", "@preconcurrency"].contains($0) })
                else { continue }
                let module = words[index + 1]
                let allowed = file.hasPrefix("Apple/") ? portable.union(apple) : portable
                #expect(allowed.contains(module), "\(file) imports \(module)")
            }
        }
    }
}
