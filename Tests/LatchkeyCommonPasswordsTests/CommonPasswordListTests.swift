import Foundation
import LatchkeyCommonPasswords
import LatchkeyTestSupport
import Testing

/// The compiled-in list is the vendored file, and the Swift file is what the script makes of it,
/// so nobody edits one without the other. (The server's S12 test checks the file's sha256.)
@Suite("Common-password list")
struct CommonPasswordListTests {
    /// The repository, found from this file's path.
    static let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("S12: the compiled-in list plus a final newline is Vendor/common-passwords/common-passwords.txt byte for byte")
    func s12CompiledListIsTheVendoredFile() throws {
        let file = try Data(contentsOf: Self.repository.appending(path: "Vendor/common-passwords/common-passwords.txt"))
        #expect(Array((CommonPasswordList.text + "\n").utf8) == Array(file))
    }

    @Test("S12: CommonPasswordList.swift is exactly what scripts/generate-common-passwords writes from the vendored file")
    func s12GeneratedFileIsUpToDate() throws {
        let output = FileManager.default.temporaryDirectory.appending(path: "latchkey-common-passwords-\(UUID()).swift")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try Subprocess.run(
            URL(filePath: "/bin/sh"), [Self.repository.appending(path: "scripts/generate-common-passwords").path, output.path])
        #expect(result.status == 0, "\(result.error)")
        let generated = try Data(contentsOf: output)
        let committed = try Data(contentsOf: Self.repository.appending(path: "Sources/LatchkeyCommonPasswords/CommonPasswordList.swift"))
        #expect(generated == committed, "run scripts/generate-common-passwords and commit the result")
    }
}
