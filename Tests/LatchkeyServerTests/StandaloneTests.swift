import Foundation
import Testing

/// A clone of the repository is all a user has: every document the code, tests and docs cite
/// must be in it.
@Suite("The repository stands alone")
struct StandaloneTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Markdown file cited in a Swift file, a script or a Markdown file, with the file citing it.
    static func citations() throws -> [(citer: String, document: String)] {
        var found: [(String, String)] = []
        for folder in ["Sources", "Tests", "docs", "scripts", "Fuzz"] {
            let files = try #require(FileManager.default.enumerator(at: root.appending(path: folder), includingPropertiesForKeys: nil))
                .compactMap { $0 as? URL }.filter { ["swift", "md", ""].contains($0.pathExtension) && !$0.hasDirectoryPath }
            for file in files where !file.path.contains("/Fixtures/") {
                guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
                let citer = String(file.path.dropFirst(root.path.count + 1))
                for match in text.matches(of: /(?:\.\.\/|\/)?[A-Za-z][A-Za-z0-9_-]*\.md\b/) {
                    found.append((citer, String(match.output)))
                }
            }
        }
        return found
    }

    @Test("every Markdown document that code, tests, scripts and docs cite exists in the repository, and none lies outside it")
    func citedDocumentsExist() throws {
        let citations = try Self.citations()
        #expect(citations.count > 20)
        let names = Set(
            (try FileManager.default.subpathsOfDirectory(atPath: Self.root.path))
                .filter { $0.hasSuffix(".md") && !$0.hasPrefix(".build") }
                .map { URL(filePath: $0).lastPathComponent })
        let missing = citations.filter { $0.document.hasPrefix("../") || !names.contains(URL(filePath: $0.document).lastPathComponent) }
        #expect(missing.isEmpty, "\(missing.map { "\($0.citer) cites \($0.document)" })")
    }
}
