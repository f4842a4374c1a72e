import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// Runs the built `latchkey` executable the way an operator would and checks its exit status,
/// standard output and standard error.
@Suite("latchkey CLI")
struct CLITests {
    static func run(_ arguments: [String], input: String? = nil) throws -> Subprocess.Result {
        try Subprocess.run(Executables.latchkey, arguments, input: input)
    }

    /// A signed token and a JWK Set file that verifies it.
    struct Fixture {
        let directory: URL
        let jwksPath: String
        let signer: JWSSigner

        init() throws {
            directory = try TemporaryDirectory("cli").url
            signer = .es256(P256.Signing.PrivateKey(), keyID: "cli-key")
            jwksPath = directory.appendingPathComponent("jwks.json").path
            try Data(JWKSet(keys: [try signer.publicJWK]).json.serialized).write(to: URL(fileURLWithPath: jwksPath))
        }

        func token(expiresIn: TimeInterval = 300, audience: String = "com.example.app") throws -> String {
            var claims = JWTClaims()
            claims.issuer = "https://latchkey.test"
            claims.audience = [audience]
            claims.subject = "user-7"
            claims.issuedAt = Date()
            claims.expiresAt = Date().addingTimeInterval(expiresIn)
            return try signer.sign(claims)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test("version and help exit 0; no command is a usage error")
    func versionAndHelp() throws {
        let version = try Self.run(["version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("latchkey "))
        let help = try Self.run(["help"])
        #expect(help.status == 0)
        #expect(help.output.contains("jwt verify"))
        let nothing = try Self.run([])
        #expect(nothing.status == 2)
        #expect(nothing.error.contains("commands:"))
    }

    @Test("--version is version; help COMMAND is COMMAND --help; help of a group lists its commands")
    func versionAndHelpCommand() throws {
        let version = try Self.run(["version"])
        let flag = try Self.run(["--version"])
        #expect(flag.status == 0)
        #expect(flag.output == version.output)
        #expect(flag.output == "latchkey 0.1.0\n")
        for command in [["users", "set-password"], ["serve"], ["jwt", "verify"]] {
            let viaHelp = try Self.run(["help"] + command)
            #expect(viaHelp.status == 0, "\(command)")
            #expect(viaHelp.output == (try Self.run(command + ["--help"])).output, "\(command)")
            #expect(viaHelp.output.hasPrefix("usage: latchkey \(command.joined(separator: " "))"), "\(command)")
        }
        let group = try Self.run(["help", "users"])
        #expect(group.status == 0)
        #expect(group.output.contains("usage: latchkey users list") && group.output.contains("usage: latchkey users set-password"))
        let unknown = try Self.run(["help", "nosuch"])
        #expect(unknown.status == 2)
        #expect(unknown.error.hasPrefix("latchkey: unknown command 'nosuch'"))
    }

    @Test("a mistyped command, group or option gets a did-you-mean; a word like no command gets the list", arguments: [
        (["usrs", "list"], "unknown command 'usrs list' (did you mean 'users list'?)"),
        (["users", "lsit"], "unknown command 'users lsit' (did you mean 'users list'?)"),
        (["sessions", "revok", "ses_1"], "unknown command 'sessions revok' (did you mean 'sessions revoke'?)"),
        (["sever"], "unknown command 'sever' (did you mean 'serve'?)"),
        (["help", "jwt", "verfy"], "unknown command 'jwt verfy' (did you mean 'jwt verify'?)"),
        (["users", "list", "--confg", "x.json"], "unknown option --confg (did you mean --config?)"),
        (["serve", "--devv"], "unknown option --devv (did you mean --dev?)"),
    ])
    func didYouMean(arguments: [String], message: String) throws {
        let result = try Self.run(arguments)
        #expect(result.status == 2)
        #expect(result.error.contains("latchkey: " + message), "\(result.error)")
    }

    @Test("a word like no command gets no guess, but the list of commands")
    func noGuess() throws {
        let unrelated = try Self.run(["frobnicate"])
        #expect(unrelated.status == 2)
        #expect(!unrelated.error.contains("did you mean") && unrelated.error.contains("commands:"))
    }

    @Test("the command list and every option list are aligned, whatever the longest name")
    func aligned() throws {
        /// The column where the text after the first run of two or more spaces starts, per line.
        func columns(_ lines: some Sequence<Substring>) -> Set<Int> {
            Set(lines.map { line in
                let body = line.drop { $0 == " " }.firstRange(of: "  ")!
                let rest = line[body.upperBound...]
                return line.distance(from: line.startIndex, to: rest.firstIndex { $0 != " " }!)
            })
        }
        let help = try Self.run(["help"]).output
        let commandLines = help.split(separator: "\n").filter { $0.hasPrefix("  ") }
        #expect(commandLines.count > 10)
        #expect(columns(commandLines).count == 1, "\(help)")
        #expect(commandLines.contains { $0.hasPrefix("  apple import-transfers  ") }, "the longest name keeps two spaces")
        for command in [["serve"], ["jwt", "verify"], ["users", "set-password"], ["keys", "rotate"]] {
            let text = try Self.run(command + ["--help"]).output
            let options = text.split(separator: "\n").drop { $0 != "options:" }.dropFirst()
            #expect(options.count >= 2, "\(command)")
            #expect(columns(options).count == 1, "\(command): \(text)")
        }
    }

    @Test("every command answers --help with its usage and exit 0", arguments: [["version"], ["help"], ["jwt", "decode"], ["jwt", "verify"]])
    func helpEverywhere(command: [String]) throws {
        let result = try Self.run(command + ["--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("usage: latchkey \(command.joined(separator: " "))"))
    }

    @Test("a wrong flag, a missing --jwks or a missing token prints usage and exits 2")
    func usageErrors() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        for arguments in [
            ["jwt", "verify", "--bogus", "x"], ["jwt", "verify", "TOKEN"], ["jwt", "verify", "--jwks", fixture.jwksPath],
            ["jwt", "verify", "--jwks", fixture.jwksPath, "--alg", "none", "TOKEN"], ["version", "extra"], ["nosuch"],
        ] {
            let result = try Self.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.error.contains("latchkey"), "\(arguments)")
        }
    }

    @Test("jwt verify prints the claims and exits 0 when every check passes")
    func verifyValid() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let result = try Self.run([
            "jwt", "verify", "--jwks", fixture.jwksPath, "--iss", "https://latchkey.test", "--aud", "com.example.app",
            "--alg", "ES256", try fixture.token(),
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(try JSONValue(parsing: result.output)["sub"] == "user-7")
        // The token may also come from standard input.
        let piped = try Self.run(["jwt", "verify", "--jwks", fixture.jwksPath, "-"], input: try fixture.token() + "\n")
        #expect(piped.status == 0, "\(piped.error)")
    }

    @Test("jwt verify names the failed check and exits 1")
    func verifyFailures() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let cases: [(arguments: [String], check: String)] = [
            (["--iss", "https://latchkey.test", try fixture.token(expiresIn: -3600)], "expired"),
            (["--aud", "other.app", try fixture.token()], "wrong_audience"),
            (["--iss", "https://evil.test", try fixture.token()], "wrong_issuer"),
            (["--alg", "RS256", try fixture.token()], "algorithm_not_allowed"),
            ([String(try fixture.token().dropLast(4)) + "AAAA"], "invalid_signature"),
            (["not.a.token"], "malformed"),
        ]
        for (arguments, check) in cases {
            let result = try Self.run(["jwt", "verify", "--jwks", fixture.jwksPath] + arguments)
            #expect(result.status == 1, "\(check)")
            #expect(result.error.contains("verification failed: \(check)"), "\(check): \(result.error)")
            #expect(result.output.isEmpty)
        }
    }

    @Test("jwt verify refuses a key set URL that is plain http off loopback, without fetching it")
    func verifyRefusesInsecureURL() throws {
        let result = try Self.run(["jwt", "verify", "--jwks", "http://keys.example.com/jwks.json", "a.b.c"])
        #expect(result.status == 1)
        #expect(result.error.contains("https"))
    }

    @Test("jwt verify fetches the key set from a loopback URL")
    func verifyFromURL() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let server = try LoopbackFileServer(directory: fixture.directory)
        defer { server.stop() }
        let result = try Self.run(["jwt", "verify", "--jwks", "http://127.0.0.1:\(server.port)/jwks.json", try fixture.token()])
        #expect(result.status == 0, "\(result.error)")
        let missing = try Self.run(["jwt", "verify", "--jwks", "http://127.0.0.1:\(server.port)/nothing.json", try fixture.token()])
        #expect(missing.status == 1)
        #expect(missing.error.contains("404"))
    }

    @Test("jwt decode prints header and claims marked unverified")
    func decode() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let result = try Self.run(["jwt", "decode", try fixture.token()])
        #expect(result.status == 0)
        #expect(result.output.contains(#"header (unverified): {"alg":"ES256","kid":"cli-key","typ":"JWT"}"#))
        #expect(result.output.contains(#"claims (unverified): {"#))
        #expect(result.output.contains(#""sub":"user-7""#))
        let bad = try Self.run(["jwt", "decode", "garbage"])
        #expect(bad.status == 1)
    }
}

/// Python's `http.server` on an ephemeral loopback port, serving one directory.
struct LoopbackFileServer {
    let process = Process()
    let port: Int

    init(directory: URL) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try Subprocess.launch(process)
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "port "), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
            throw CLIServerError(description: "http.server did not start: \(text)")
        }
        self.port = port
    }

    /// SIGKILL, because a child of the test runner may inherit an ignored SIGTERM.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

struct CLIServerError: Error, CustomStringConvertible {
    var description: String
}
