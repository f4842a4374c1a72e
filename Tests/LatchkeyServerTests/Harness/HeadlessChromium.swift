import Foundation
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// Debian's headless Chromium, driven through chromium-driver by Selenium in
/// `Fixtures/browser_flows.py`, against a test server on the loopback.
///
/// The suites that use it are enabled where `LATCHKEY_PYTHON` is set (`make test` sets it); there a
/// missing Chromium, chromium-driver or Selenium fails the test with what to install
/// (`scripts/bootstrap test`, `scripts/requirements-test.txt`), never a skip.
enum HeadlessChromium {
    static let fixtures = Fixtures(bundle: .module)
    /// Debian's `chromium` and `chromium-driver`.
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    /// Where the flows leave a screenshot of each page they reach:
    /// `.build/test-artifacts/screenshots/` of the package, one `NAME.png` per page, replaced on
    /// every run.
    static let screenshots = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/test-artifacts/screenshots")

    /// Fails the test unless Python, Chromium and chromium-driver are there.
    static func requireInstalled() throws -> URL {
        let python = try #require(interopPython, "needs LATCHKEY_PYTHON: the venv of scripts/requirements-test.txt (make test sets it)")
        for program in [chromium, chromedriver] {
            try #require(FileManager.default.isExecutableFile(atPath: program), "\(program) is missing: run scripts/bootstrap test")
        }
        return URL(fileURLWithPath: python)
    }

    /// Runs one flow of `browser_flows.py` (`sign-in`, `sign-up`, `apache`), or of another
    /// fixture script (`browser_passkeys.py`), with `config` (its
    /// `base` and `screenshots` are filled in) and returns what the browser saw.
    ///
    /// The test server's clock is set to the wall clock first: the browser, the TOTP codes it
    /// types and any relying party live in real time. A step that failed in the browser is
    /// recorded as an issue with the page it failed on.
    static func run(
        _ flow: String, _ config: [String: JSONValue], on server: TestServer, script name: String = "browser_flows.py"
    ) async throws -> JSONValue {
        let python = try requireInstalled()
        let script = try fixtures.url(name)
        var input = config
        input["base"] = .string(server.baseURL)
        input["screenshots"] = .string(screenshots.path)
        input["chromium"] = .string(chromium)
        input["chromedriver"] = .string(chromedriver)
        let stdin = JSONValue.object(input).serializedString
        server.clock.advance(by: Date().timeIntervalSince(server.clock.now))
        let result = try await Subprocess.runDetached(python, [script.path, flow], input: stdin)
        let output = try #require(
            try? JSONValue(parsing: Array(result.output.utf8)),
            "browser_flows.py \(flow) exited \(result.status) without its JSON: \(result.error.suffix(2000))")
        if let failure = output["failed"]?.stringValue {
            Issue.record("the \(flow) flow failed in the browser: \(failure), on \(output["failed_at"] ?? .null)")
        }
        return output
    }

    /// A page as `browser_flows.py` reports it: which server (`latchkey`, `rp` for its callback
    /// server), the path, and the first heading.
    static func page(_ server: String, _ path: String, _ heading: String) -> JSONValue {
        ["server": .string(server), "path": .string(path), "h1": .string(heading)]
    }
}
