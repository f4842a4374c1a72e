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
        for file in files where !file.path.contains("/latchkey-bench/") {
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
