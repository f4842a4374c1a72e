import Foundation
import Testing

@Suite("Footprint")
struct FootprintTests {
    /// `Sources/`, found from this file's path.
    static let sources = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Sources")

    @Test("the server imports FoundationEssentials only: Foundation and FoundationNetworking (curl) cost 12 MB resident")
    func foundationEssentialsOnly() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 50)
        var offenders: [String] = []
        // The client SDK and the binaries built on it (the demo, the SDK probe) are app code on
        // Foundation by design; none of them is linked into `latchkey`.
        let clientSide = ["/latchkey-bench/", "/LatchkeyClient/", "/latchkey-demo/", "/latchkey-sdk-probe/"]
        for file in files where !clientSide.contains(where: file.path.contains) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                if words.contains("import"), words.last == "Foundation" || words.last == "FoundationNetworking" {
                    offenders.append("\(file.lastPathComponent): \(line)")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
