import Foundation
import LatchkeyJSON
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// README's "A 60-second tour" and `latchkey.example.json` hold: what a newcomer copies first
/// works as written.
@Suite("README tour and the example configuration")
struct TourTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The tour's shell lines, continuation lines joined.
    static func tourLines() throws -> [String] {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## A 60-second tour"), "README has no tour")
        let open = try #require(readme.range(of: "```sh\n", range: section.upperBound..<readme.endIndex))
        let close = try #require(readme.range(of: "\n```", range: open.upperBound..<readme.endIndex))
        var lines = [String]()
        var pending = ""
        for line in readme[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
            } else {
                lines.append(pending + line)
                pending = ""
            }
        }
        return lines
    }

    @Test("every line of README's tour runs as written against a fresh dev server, in order, each exiting 0")
    func tourRuns() async throws {
        for tool in ["/bin/bash", "/usr/bin/curl"] {
            #expect(FileManager.default.isExecutableFile(atPath: tool), "the tour needs \(tool) (scripts/bootstrap installs it)")
        }
        let python = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "print(1)"])
        #expect(python.status == 0, "the tour needs python3 on PATH")

        var lines = try Self.tourLines()
        // The first line starts the server (`make run`); the test starts the same thing itself,
        // `latchkey serve --dev` in a fresh directory, on a free port: 8080 may be taken here. Its
        // URL is the bound address, as for any chosen listen address; `make run` names itself
        // localhost (DevLocalhostTests).
        #expect(lines.first?.hasPrefix("make run ") == true, "the tour starts with make run")
        lines.removeFirst()
        let urlLine = "URL=http://localhost:8080"
        #expect(lines.filter { $0 == urlLine }.count == 1, "one line names the server: \(urlLine)")
        #expect(!lines.contains { $0.contains("8080") && $0 != urlLine }, "every other line reaches the server through $URL")

        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // `make run` builds into .build/release; here the binary under test stands there.
        let release = directory.appendingPathComponent(".build/release")
        try FileManager.default.createDirectory(at: release, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: release.appendingPathComponent("latchkey"), withDestinationURL: Executables.latchkey)
        try FileManager.default.copyItem(
            at: Self.repository.appendingPathComponent("latchkey.example.json"), to: directory.appendingPathComponent("latchkey.example.json"))

        let server = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
        defer { server.stop() }
        let port = try #require(URLComponents(string: server.baseURL)?.port)
        let script = lines.map { $0 == urlLine ? "URL=http://127.0.0.1:\(port)" : $0 }
        // Each command's failure stops the script and names the line; its output is not
        // printed, since it holds tokens.
        let result = try Subprocess.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "set -euo pipefail\ntrap 'echo \"tour: failed: $BASH_COMMAND\" >&2' ERR\n" + script.joined(separator: "\n")],
            directory: directory)
        #expect(result.status == 0, "\(result.error)")

        // What the tour claims happened did happen.
        #expect(result.output.contains(#"{"status":"ok"}"#))
        #expect(result.output.contains("The story holds"))
        #expect(result.output.contains("commands:"))
        #expect(result.output.contains("\n200\n"), "the new password signs Ada in")
        // Two password sign-ins of the tour's own (sign-up, login) and two of the demo's password
        // chapter (Grace's sign-up, her sign-in with the new password after the reset).
        #expect(result.output.contains(#"latchkey_sign_ins_total{method="pwd",outcome="success"} 4"#))
        #expect(result.output.contains(#"latchkey_sign_ins_total{method="email",outcome="success"} 1"#), "the demo's reset signs in by email")
    }

    @Test("latchkey.example.json loads, holds every setting, and every setting is in docs/configuration.md")
    func exampleConfiguration() throws {
        let path = Self.repository.appendingPathComponent("latchkey.example.json").path
        let configuration = try ConfigurationLoader.load(file: path, environment: [:])
        #expect(configuration.publicURL == "https://auth.example.com")
        #expect(ConfigurationLoader.exposureWarnings(configuration).isEmpty)

        func paths(_ json: JSONValue, prefix: String) -> [String] {
            guard case .object(let members) = json else { return [prefix] }
            return members.flatMap { paths($0.value, prefix: prefix.isEmpty ? $0.key : prefix + "." + $0.key) }
        }
        let example = paths(try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: path)))), prefix: "")
        #expect(Set(example) == Set(ConfigurationLoader.settingPaths), "the example lists each setting once")

        // The table writes `password.argon2.memory_kib`, `.iterations`: a key is documented when its
        // full path, or its last part after a documented sibling, is in a row.
        let docs = try String(contentsOf: Self.repository.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let rows = docs.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for setting in ConfigurationLoader.settingPaths {
            let last = "`." + setting.split(separator: ".").last! + "`"
            let parent = setting.split(separator: ".").dropLast().joined(separator: ".")
            let documented = rows.contains { $0.contains("`\(setting)`") || (!parent.isEmpty && $0.contains("`\(parent).") && $0.contains(last)) }
            #expect(documented, "docs/configuration.md documents \(setting)")
        }
    }
}
