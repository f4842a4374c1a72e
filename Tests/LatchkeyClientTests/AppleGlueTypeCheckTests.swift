import Foundation
import LatchkeyTestSupport
import Testing

/// The Apple glue (Sources/LatchkeyClient/Apple/) compiles only where AuthenticationServices,
/// LocalAuthentication and Security exist, so a Linux build never sees it. This suite runs
/// `scripts/typecheck-apple-glue`, which compiles it against our stand-ins for those frameworks
/// (Tests/AppleStandIns/) with strict concurrency and warnings as errors, and every Swift snippet
/// of docs/ios.md with it, and checks docs/apple-stand-ins.md against the stand-ins. It never
/// skips: without `swiftc` it fails.
@Suite("Apple glue type-checks on Linux against the stand-ins", .serialized)
struct AppleGlueTypeCheckTests {
    /// The package root, from this file's path (Tests/LatchkeyClientTests/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs the script; returns its exit status and everything it printed. It compiles for tens
    /// of seconds: the wait is on a thread of its own, not on one of the task pool's.
    static func run(environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try runNow(environment: environment) }) }
        }
    }

    private static func runNow(environment: [String: String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = root.appendingPathComponent("scripts/typecheck-apple-glue")
        process.currentDirectoryURL = root
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try Subprocess.launch(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("scripts/typecheck-apple-glue: the glue, the stand-ins' report and every docs/ios.md snippet compile")
    func typeCheck() async throws {
        let (status, text) = try await Self.run()
        #expect(status == 0, "\(text)")
        // The summary names what was compiled; a run that compiled nothing must not pass.
        let summary = try #require(text.split(separator: "\n").last { $0.hasPrefix("typecheck-apple-glue: ") }, "\(text)")
        let numbers = summary.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count == 5, "\(summary)")
        #expect(numbers[0] >= 200, "stand-in declarations: \(summary)")
        #expect(numbers[3] >= 11, "Apple glue files: \(summary)")
        #expect(numbers[4] >= 12, "docs/ios.md snippets: \(summary)")
    }

    @Test("A snippet calling the glue with a wrong argument label fails the check, naming its line in the page")
    func brokenSnippetFails() async throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/ios.md"), encoding: .utf8)
        let call = "signIn(presentingFrom: window)"
        try #require(page.contains(call), "docs/ios.md no longer has the call this test breaks")
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("ios-broken-\(UUID().uuidString).md")
        try page.replacingOccurrences(of: call, with: "signIn(presenting: window)").write(to: broken, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: broken) }

        let (status, text) = try await Self.run(environment: ["IOS_DOC": broken.path])
        #expect(status != 0)
        #expect(text.contains("incorrect argument label in call (have 'presenting:', expected 'presentingFrom:')"), "\(text)")
        #expect(text.contains("docs/ios.md snippet from line"), "\(text)")
        #expect(text.contains("the docs/ios.md snippets do not compile"), "\(text)")
    }
}
