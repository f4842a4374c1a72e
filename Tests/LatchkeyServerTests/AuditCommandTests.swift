import Foundation
import LatchkeyJSON
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// `latchkey audit` over the audit log a real server process wrote from real sign-ups and sign-ins.
@Suite("Audit command")
struct AuditCommandTests {
    static let password = "a long enough passphrase"

    /// One answer from the server: the status and the body.
    static func post(port: Int, _ path: String, _ json: String) throws -> (status: Int, body: [UInt8]) {
        guard case .response(let bytes) = RawHTTP.exchange(port: port, RawHTTP.post(path, json: json), timeout: 30),
            let response = RawHTTP.parse(bytes)
        else { throw ServerProcessError(description: "no answer to POST \(path)") }
        return (response.status, response.body)
    }

    /// The JSON lines of `latchkey audit --json …`; raw JSON, as the audit log's format is no wire body.
    static func entries(_ deployment: BackupTests.Deployment, _ arguments: [String]) throws -> [JSONValue] {
        let result = try deployment.latchkey(["audit", "--json"] + arguments)
        #expect(result.status == 0, "\(result.error)")
        return try result.output.split(separator: "\n").map { try JSONValue(parsing: Array($0.utf8)) }
    }

    @Test("S27: audit lists what a running server recorded for sign-ups and sign-ins, newest first, filtered by user, event, time and count")
    func s27FiltersOverRealSignIns() async throws {
        let deployment = try BackupTests.Deployment()
        defer { deployment.remove() }
        // Before the server starts: its first entry (the development client's registration) is written at start.
        let started = Date()
        let (server, port) = try await deployment.serve()
        defer { server.stop() }
        let ada = try Self.post(port: port, "/v1/auth/password/signup", #"{"username":"ada@example.com","password":"\#(Self.password)"}"#)
        #expect(ada.status == 201)
        #expect(try Self.post(port: port, "/v1/auth/password/login", #"{"username":"ada@example.com","password":"not the password"}"#).status == 401)
        let login = try Self.post(port: port, "/v1/auth/password/login", #"{"username":"ada@example.com","password":"\#(Self.password)"}"#)
        #expect(login.status == 200)
        #expect(try Self.post(port: port, "/v1/auth/password/signup", #"{"username":"grace@example.com","password":"\#(Self.password)"}"#).status == 201)
        let adaID = try WireTokenResponse(parsing: ada.body).user.id

        // Everything, newest first, while the server is still running.
        let all = try Self.entries(deployment, [])
        let times = all.compactMap { $0["time"]?.stringValue }
        #expect(times.count == all.count && times == times.sorted(by: >))
        // The oldest is the development client's registration, at the server's first start.
        #expect(all.map { $0["event"]?.stringValue ?? "" } == [
            "session.created", "password.signup", "session.created", "password.login", "password.login", "session.created", "password.signup",
            "client.registered",
        ])
        let signup = try #require(all.dropLast().last)
        #expect(signup["user_id"]?.stringValue == adaID)
        #expect(signup["outcome"]?.stringValue == "success")
        #expect(signup["ip"]?.stringValue == "127.0.0.1")
        #expect(signup["request_id"]?.stringValue?.isEmpty == false)
        #expect(signup["details"] == .object([:]))

        let logins = try Self.entries(deployment, ["--user", adaID, "--event", "password.login"])
        #expect(logins.map { $0["outcome"]?.stringValue ?? "" } == ["success", "failure"])
        #expect(logins.last?["details"] == .object(["reason": "wrong_password"]))
        #expect(try Self.entries(deployment, ["--user", adaID]).count == 5)
        #expect(try Self.entries(deployment, ["--limit", "2"]) == Array(all.prefix(2)))
        #expect(try Self.entries(deployment, ["--since", "1h"]) == all)
        let fromStart = Date(timeIntervalSince1970: started.timeIntervalSince1970.rounded(.down))
        #expect(try Self.entries(deployment, ["--since", fromStart.ISO8601Format()]) == all)
        #expect(try Self.entries(deployment, ["--since", "2099-01-01T00:00:00Z"]).isEmpty)
        // Half an hour before the start, written in UTC+1: read as UTC it would lie after the entries.
        let inOffset = fromStart.addingTimeInterval(-1800).formatted(
            Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: try #require(TimeZone(secondsFromGMT: 3600))))
        #expect(inOffset.hasSuffix("+01:00"))
        #expect(try Self.entries(deployment, ["--since", inOffset]) == all)
        #expect(try Self.entries(deployment, ["--since", "2000-01-01t00:00:00.250+01:00"]) == all)

        // Nothing secret reaches the output.
        let everything = try deployment.latchkey(["audit", "--json"]).output + (try deployment.latchkey(["audit"]).output)
        #expect(!everything.contains(Self.password))
        let loginTokens = try WireTokenResponse(parsing: login.body)
        #expect(!everything.contains(loginTokens.refreshToken))
        #expect(!everything.contains(loginTokens.accessToken))
    }

    @Test("audit prints an aligned table whose columns start where the header's do, and escapes control characters")
    func table() async throws {
        let deployment = try BackupTests.Deployment()
        defer { deployment.remove() }
        let (server, port) = try await deployment.serve()
        #expect(try Self.post(port: port, "/v1/auth/password/signup", #"{"username":"ada@example.com","password":"\#(Self.password)"}"#).status == 201)
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)
        // An entry whose details carry text a client could have chosen.
        let database = try SQLiteDatabase(configuration: .init(path: deployment.database.path))
        try await AuditLog(database: database).record(
            .init(time: Date(), event: AuditEvent(rawValue: "test.hostile"), outcome: .failure, details: ["agent": "evil\u{1b}[2J\u{202e} \"quoted\" \\", "plain": "a:b/c"]))
        await database.close()

        let result = try deployment.latchkey(["audit"])
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        // The header, the hostile entry, the sign-up's two and the development client's registration.
        #expect(lines.count == 5)
        let header = try #require(lines.first)
        #expect(header.split(separator: " ", omittingEmptySubsequences: true) == ["TIME", "USER", "EVENT", "OUTCOME", "IP", "REQUEST", "DETAILS"])
        let eventColumn = header.distance(from: header.startIndex, to: try #require(header.range(of: "EVENT")).lowerBound)
        let detailsColumn = header.distance(from: header.startIndex, to: try #require(header.range(of: "DETAILS")).lowerBound)
        for line in lines.dropFirst() {
            let characters = Array(line)
            let event = String(characters[eventColumn...].prefix { $0 != " " })
            #expect(characters[eventColumn - 1] == " " && ["test.hostile", "session.created", "password.signup", "client.registered"].contains(event), "\(line)")
            #expect(characters.count < detailsColumn || (characters[detailsColumn - 1] == " " && characters[detailsColumn] != " "), "\(line)")
        }
        #expect(lines[1].hasSuffix(#"agent="evil\u{1b}[2J\u{202e} \"quoted\" \\" plain=a:b/c"#), "\(lines[1])")
        #expect(!result.output.unicodeScalars.contains { $0 == "\u{1b}" || $0 == "\u{202e}" })
        #expect(lines[1].contains("  -  "), "no user, shown as -")
    }

    @Test("audit refuses a bad --since or --limit with its usage, and a missing database without creating one")
    func badInput() throws {
        let deployment = try BackupTests.Deployment()
        defer { deployment.remove() }
        for arguments in [["--since", "yesterday"], ["--since", "5y"], ["--limit", "0"], ["--limit", "many"]] {
            let result = try deployment.latchkey(["audit"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.error.contains("usage: latchkey audit"), "\(arguments)")
        }
        let missing = try deployment.latchkey(["audit"])
        #expect(missing.status == 1)
        #expect(missing.error.hasPrefix("latchkey: no Latchkey database at \(deployment.database.path):"))
        #expect(!FileManager.default.fileExists(atPath: deployment.database.path))
    }
}
