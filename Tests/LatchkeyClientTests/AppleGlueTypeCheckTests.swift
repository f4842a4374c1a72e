import Foundation
import Testing

/// The Apple glue (Sources/LatchkeyClient/Apple/) compiles only where AuthenticationServices,
/// LocalAuthentication and Security exist, so a Linux build never sees it. This suite runs
/// `scripts/typecheck-apple-glue`, which compiles it against our stand-ins for those frameworks
/// (Tests/AppleStandIns/) with strict concurrency and warnings as errors, and every Swift snippet
/// of docs/ios.md with it, and checks docs/apple-stand-ins.md against the stand-ins. It never
/// skips: without `swiftc` it fails.
@Suite("Apple glue type-checks on Linux against the stand-ins")
struct AppleGlueTypeCheckTests {
    /// The package root, from this file's path (Tests/LatchkeyClientTests/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("scripts/typecheck-apple-glue: the glue, the stand-ins' report and every docs/ios.md snippet compile")
    func typeCheck() throws {
        let process = Process()
        process.executableURL = Self.root.appendingPathComponent("scripts/typecheck-apple-glue")
        process.currentDirectoryURL = Self.root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        // The summary names what was compiled; a run that compiled nothing must not pass.
        let summary = try #require(text.split(separator: "\n").last { $0.hasPrefix("typecheck-apple-glue: ") }, "\(text)")
        let numbers = summary.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count == 5, "\(summary)")
        #expect(numbers[0] >= 150, "stand-in declarations: \(summary)")
        #expect(numbers[3] >= 9, "Apple glue files: \(summary)")
        #expect(numbers[4] >= 8, "docs/ios.md snippets: \(summary)")
    }
}
