import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

@Suite("Password accounts")
struct PasswordAccountTests {
    static func signUp(_ server: TestServer, _ username: String, _ password: String, extra: [String: JSONValue] = [:]) async throws -> TestResponse {
        var body: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        body.merge(extra) { $1 }
        return try await server.request(.post, "/v1/auth/password/signup", json: .object(body))
    }

    static func logIn(_ server: TestServer, _ username: String, _ password: String) async throws -> TestResponse {
        try await server.request(.post, "/v1/auth/password/login", json: ["username": .string(username), "password": .string(password)])
    }

    static func bearer(_ response: TestResponse) throws -> [String: String] {
        try response.bearer
    }

    static func audit(_ server: TestServer, event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(event: event, limit: 1000)
    }

    static func credential(_ server: TestServer, userID: String) async throws -> SQLRow? {
        try await server.database.read { try $0.queryOne("SELECT * FROM password_credentials WHERE user_id = ?", [.text(userID)]) }
    }

    @Test("S11, S9: sign-up, login, change; the old password is refused and the other sessions are gone")
    func s11Lifecycle() async throws {
        try await TestServer.with({ $0.password.argon2 = .owaspMinimum }) { (server: TestServer) async throws in
            let signUp = try await Self.signUp(server, "Ada@Example.com", "correct horse battery", extra: ["given_name": "Ada"])
            #expect(signUp.status == 201)
            #expect(signUp.headers["Cache-Control"] == "no-store")
            let created = try signUp.tokens
            #expect(created.created && created.tokenType == "Bearer")
            #expect(created.user.email == "ada@example.com" && !created.user.emailVerified)
            #expect(created.user.givenName == "Ada")
            let userID = created.user.id
            let claims = try Insecure.unverifiedContents(of: created.accessToken).claims
            #expect(claims["amr"] == ["pwd"])

            // S11: Argon2id PHC string with the configured parameters and a 16-byte salt.
            let row = try #require(try await Self.credential(server, userID: userID))
            #expect(try row.string("username") == "ada@example.com")
            let phc = try row.string("password_hash")
            #expect(phc.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
            #expect(Base64.decode(Array(phc.split(separator: "$")[3].utf8), padded: false)?.count == 16)
            #expect(!phc.contains("correct horse"))

            let login = try await Self.logIn(server, "ADA@example.com", "correct horse battery")
            #expect(login.status == 200)
            let other = try login.tokens
            #expect(!other.created && other.user.id == userID)
            let otherRefresh = other.refreshToken

            let change = try await server.request(
                .post, "/v1/auth/password/change", json: ["current_password": "correct horse battery", "new_password": "tr0ubadour & stapler"],
                headers: try Self.bearer(signUp))
            #expect(change.status == 204)
            #expect(change.body.isEmpty)
            #expect(try await Self.credential(server, userID: userID)?.string("password_hash") != phc)

            let old = try await Self.logIn(server, "ada@example.com", "correct horse battery")
            #expect(old.status == 401)
            #expect(try old.wireError.error == .invalidCredentials)
            #expect(try await Self.logIn(server, "ada@example.com", "tr0ubadour & stapler").status == 200)

            // The other session ended; the one that changed the password lives on.
            #expect(try await SessionTests.refresh(server, otherRefresh).wireError.grantFailure == .revoked)
            #expect(try await server.request(.get, "/v1/me", headers: try Self.bearer(login)).status == 401)
            #expect(try await server.request(.get, "/v1/me", headers: try Self.bearer(signUp)).status == 200)

            let events = try await AuditLog(database: server.database).entries(userID: userID, limit: 100).map { "\($0.event) \($0.outcome)" }
            for expected in ["password.signup success", "password.login success", "password.changed success", "session.revoked success", "password.login failure"] {
                #expect(events.contains(expected), "\(expected)")
            }
            let changed = try #require(try await Self.audit(server, event: "password.changed").first)
            #expect(changed.details["sessions_ended"] == "1")
            #expect(changed.ip == "127.0.0.1")
            #expect(server.application.metrics.value(.signIns, ["method": "pwd", "outcome": "success"]) == 3)
            #expect(server.application.metrics.value(.signIns, ["method": "pwd", "outcome": "failure"]) == 1)
        }
    }

    @Test("S12: a 64-character password, and non-ASCII ones typed composed or decomposed, work")
    func s12LongAndUnicode() async throws {
        try await TestServer.with { server in
            let long = String(repeating: "abcdefgh", count: 8)
            #expect(long.count == 64)
            #expect(try await Self.signUp(server, "long", long).status == 201)
            #expect(try await Self.logIn(server, "long", long).status == 200)
            #expect(try await Self.logIn(server, "long", String(long.dropLast())).status == 401, "no truncation")
            let longer = String(repeating: "x", count: 1000) + "y"
            #expect(try await Self.signUp(server, "longer", longer).status == 201)
            #expect(try await Self.logIn(server, "longer", String(repeating: "x", count: 1000) + "z").status == 401, "no truncation at 1000 either")

            let composed = "Mot de passe: \u{E9}t\u{E9} \u{00F1}and\u{00FA} \u{6771}\u{4EAC}"  // é, ñ, ú precomposed
            let decomposed = "Mot de passe: e\u{301}te\u{301} n\u{303}andu\u{301} \u{6771}\u{4EAC}"
            #expect(Array(composed.utf8) != Array(decomposed.utf8))
            #expect(try await Self.signUp(server, "\u{FF2A}os\u{E9}", composed).status == 201, "full-width J in the username")
            #expect(try await Self.logIn(server, "jose\u{301}", decomposed).status == 200, "the decomposed form signs in")
            #expect(try await Self.logIn(server, "JOS\u{C9}", composed).status == 200)
            let stored = try await server.database.read { try $0.query("SELECT username FROM password_credentials ORDER BY username") }.map { try $0.string("username") }
            #expect(stored == ["jos\u{E9}", "long", "longer"])
        }
    }

    @Test("S12: common and short passwords are refused with a clear message, and nothing is written")
    func s12Refusals() async throws {
        try await TestServer.with { server in
            for password in ["Password1", "QWERTYUIOP", "iloveyou", "\u{FF50}assword1"] {  // "ｐassword1": full-width p
                let response = try await Self.signUp(server, "ada", password)
                #expect(response.status == 400, "\(password)")
                let refusal = try response.wireError
                #expect(refusal.error == .invalidRequest)
                #expect(refusal.passwordRefusal == .common)
                #expect(refusal.errorDescription.contains("commonly used passwords"))
            }
            let short = try await Self.signUp(server, "ada", "s3cr\u{E9}t")
            #expect(try short.wireError.passwordRefusal == .tooShort)
            #expect(try short.wireError.errorDescription == "password must be at least 8 characters long")
            let tooLong = try await Self.signUp(server, "ada", String(repeating: "z", count: 1025))
            #expect(try tooLong.wireError.passwordRefusal == .tooLong)
            let users = try await server.database.read { try $0.query("SELECT id FROM users") }
            #expect(users.isEmpty)
            #expect(try await Self.audit(server, event: "password.signup").isEmpty)
        }
    }

    @Test("S12: the common-password list compiled in is Django's file byte for byte, all 19,640 of it")
    func s12VendoredList() {
        let file = Array((CommonPasswords.vendoredList + "\n").utf8)
        #expect(HashFunction.sha256.hexDigest(file) == "29ca0fa5303165f012f3e9775e3e95a3071cdd59f219973ec1cbb308d0214a6f")
        #expect(CommonPasswords.shared.count == 19_640)
    }

    @Test("S12: min_length is configurable upwards")
    func s12MinimumLength() async throws {
        try await TestServer.with({ $0.password.minLength = 12 }) { (server: TestServer) async throws in
            let response = try await Self.signUp(server, "ada", "eleven char")
            #expect(try response.wireError.errorDescription == "password must be at least 12 characters long")
            #expect(try await Self.signUp(server, "ada", "twelve chars").status == 201)
        }
    }

    @Test("S11: a hash made with other parameters is replaced on the next login")
    func s11Rehash() async throws {
        try await TestServer.with({ $0.password.argon2 = .owaspMinimum }) { (server: TestServer) async throws in
            let userID = try await Self.signUp(server, "ada", "correct horse battery").tokens.user.id
            let old = try Argon2id.hash(
                password: Array("correct horse battery".utf8), parameters: .init(memoryKiB: 8192, iterations: 1, parallelism: 1))
            try await server.database.write { try $0.execute("UPDATE password_credentials SET password_hash = ?", [.text(old)]) }
            #expect(try await Self.logIn(server, "ada", "correct horse battery").status == 200)
            let upgraded = try #require(try await Self.credential(server, userID: userID)?.string("password_hash"))
            #expect(upgraded.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
            #expect(try Argon2id.verify(password: Array("correct horse battery".utf8), phcString: upgraded))
            #expect(try await Self.audit(server, event: "password.login").first?.details["rehashed"] == "true")
            #expect(try await Self.logIn(server, "ada", "correct horse battery").status == 200)
        }
    }

    @Test("S24: bad bodies and usernames get 4xx JSON errors and change nothing; a taken username is 409")
    func s24BadInput() async throws {
        try await TestServer.with { server in
            let cases: [(JSONValue, String)] = [
                (["password": "correct horse battery"], "username is required"),
                (["username": "ada"], "password is required"),
                (["username": 5, "password": "correct horse battery"], "username must be a string"),
                (["username": "ad", "password": "correct horse battery"], "a username that is not an email is 3 to 64 characters"),
                (["username": "a b c", "password": "correct horse battery"], "a username that is not an email has only letters, digits, '.', '_' and '-'"),
                (["username": "a@b@c", "password": "correct horse battery"], "an email-like username has exactly one @ with text on both sides"),
                (["username": "ada", "password": "correct horse battery", "given_name": 7], "given_name must be a string"),
                (["username": "ada", "password": ""], "password must be at least 8 characters long"),
                (["username": "   ", "password": "correct horse battery"], "username is required"),
            ]
            for (body, description) in cases {
                let response = try await server.request(.post, "/v1/auth/password/signup", json: body)
                #expect(response.status == 400, "\(body)")
                #expect(try response.wireError.error == .invalidRequest)
                #expect(try response.wireError.errorDescription == description)
            }
            let notJSON = try await server.request(.post, "/v1/auth/password/login", body: Array("{".utf8), headers: ["Content-Type": "application/json"])
            #expect(notJSON.status == 400)
            let form = try await server.request(.post, "/v1/auth/password/login", body: Array("username=a".utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(form.status == 415)
            #expect(try await server.database.read { try $0.query("SELECT id FROM users") }.isEmpty)

            #expect(try await Self.signUp(server, "ada@example.com", "correct horse battery").status == 201)
            let taken = try await Self.signUp(server, " ADA@example.com", "another good passphrase")
            #expect(taken.status == 409)
            #expect(try taken.wireError.error == .conflict)
            #expect(try await server.database.read { try $0.query("SELECT id FROM users") }.count == 1)

            let unauthenticated = try await server.request(.post, "/v1/auth/password/change", json: ["current_password": "a", "new_password": "b"])
            #expect(unauthenticated.status == 401)
            #expect(unauthenticated.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#)
        }
    }

    @Test("S9, S11: of two changes from the same current password exactly one replaces it; the other is 401 and changes nothing")
    func s11ConcurrentChanges() async throws {
        try await TestServer.with { server in
            let signUp = try await Self.signUp(server, "ada", "correct horse battery")
            let bearer = try Self.bearer(signUp)
            let candidates = ["first new passphrase", "second new passphrase"]
            let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for candidate in candidates {
                    group.addTask {
                        let body = WirePasswordChangeRequest(currentPassword: "correct horse battery", newPassword: candidate)
                        return (candidate, try await server.request(.post, "/v1/auth/password/change", json: body.json, headers: bearer).status)
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1.0] = $1.1 }
            }
            #expect(statuses.values.sorted() == [204, 401], "\(statuses)")
            let winner = try #require(statuses.first { $0.value == 204 }?.key)
            let loser = try #require(statuses.first { $0.value == 401 }?.key)
            #expect(try await Self.logIn(server, "ada", winner).status == 200)
            #expect(try await Self.logIn(server, "ada", loser).status == 401)
            #expect(try await Self.logIn(server, "ada", "correct horse battery").status == 401)
        }
    }

    @Test("S9: change with a wrong current password is 401 and changes nothing; a user without a password gets 400")
    func s9ChangeRefusals() async throws {
        try await TestServer.with { server in
            let signUp = try await Self.signUp(server, "ada", "correct horse battery")
            let userID = try signUp.tokens.user.id
            let before = try await Self.credential(server, userID: userID)?.string("password_hash")
            let wrong = try await server.request(
                .post, "/v1/auth/password/change", json: ["current_password": "not it at all", "new_password": "tr0ubadour & stapler"],
                headers: try Self.bearer(signUp))
            #expect(wrong.status == 401)
            #expect(try wrong.wireError.error == .invalidCredentials)
            #expect(try await Self.credential(server, userID: userID)?.string("password_hash") == before)
            #expect(try await Self.audit(server, event: "password.change").first?.outcome == .failure)
            let common = try await server.request(
                .post, "/v1/auth/password/change", json: ["current_password": "correct horse battery", "new_password": "letmein123"],
                headers: try Self.bearer(signUp))
            #expect(try common.wireError.passwordRefusal == .common)

            let apple = try await server.createUser()
            let token = try await server.startSession(for: apple, amr: ["apple"])
            let none = try await server.request(
                .post, "/v1/auth/password/change", json: ["current_password": "whatever it is", "new_password": "tr0ubadour & stapler"],
                headers: ["Authorization": "Bearer \(token.accessToken)"])
            #expect(none.status == 400)
            #expect(try none.wireError.errorDescription == "this account has no password; it signs in another way")
        }
    }

    @Test("a user with a second factor gets 403 mfa_required after the right password, with no session yet")
    func mfaRequired() async throws {
        try await TestServer.with { server in
            let signUp = try await Self.signUp(server, "ada", "correct horse battery")
            let userID = try signUp.tokens.user.id
            let registered = try await SoftwareDevice().register(on: server, bearer: try signUp.bearer)
            #expect(registered.status == 201, "\(registered.text)")
            let sessionsBefore = try await server.application.services.sessions.sessions(userID: userID).count

            let login = try await Self.logIn(server, "ada", "correct horse battery")
            #expect(login.status == 403)
            let required = try login.wireError
            #expect(required.error == .mfaRequired)
            #expect(required.mfaToken != nil)
            #expect(required.factors?.first?.type == .deviceKey)
            #expect(try await server.application.services.sessions.sessions(userID: userID).count == sessionsBefore)
            #expect(server.application.metrics.value(.signIns, ["method": "pwd", "outcome": "mfa_required"]) == 1)
            #expect(try await Self.logIn(server, "ada", "wrong password!").status == 401, "a wrong password never reaches the second factor")
        }
    }

    @Test("password.enabled false leaves the endpoints out")
    func disabled() async throws {
        try await TestServer.with({ $0.password.enabled = false }) { (server: TestServer) async throws in
            #expect(try await Self.signUp(server, "ada", "correct horse battery").status == 404)
            #expect(try await Self.logIn(server, "ada", "correct horse battery").status == 404)
        }
    }

    @Test("latchkey users set-password reads the password from standard input and ends the user's sessions")
    func setPasswordCommand() async throws {
        try await TestServer.with { server in
            let signUp = try await Self.signUp(server, "ada", "correct horse battery")
            let userID = try signUp.tokens.user.id
            let appleUser = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let config = server.directory.appendingPathComponent("latchkey.json")
            // The server's own database, SQLite or PostgreSQL (LATCHKEY_TEST_ENGINE).
            let configuration = server.application.configuration
            var settings: [String: JSONValue] = ["database": .string(configuration.database), "master_key_file": .string(configuration.masterKeyFile)]
            if let passwordFile = configuration.databasePasswordFile { settings["database_password_file"] = .string(passwordFile) }
            try Data(JSONValue.object(settings).serialized).write(to: config)

            let set = try Subprocess.run(Executables.latchkey, ["users", "set-password", userID, "--config", config.path], input: "a brand new passphrase\n")
            #expect(set.status == 0, "\(set.error)")
            #expect(set.output == "password set for \(userID); their sessions have ended\n")
            #expect(!set.output.contains("brand new") && !set.error.contains("brand new"))
            #expect(try await Self.logIn(server, "ada", "a brand new passphrase").status == 200)
            #expect(try await SessionTests.refresh(server, try signUp.tokens.refreshToken).status == 400)
            #expect(try await Self.audit(server, event: "password.set_by_operator").first?.userID == userID)

            // A user without a password gets one under their email.
            let grace = try Subprocess.run(Executables.latchkey, ["users", "set-password", appleUser.id, "--config", config.path], input: "grace's new passphrase\n")
            #expect(grace.status == 0, "\(grace.error)")
            #expect(try await Self.logIn(server, "grace@example.com", "grace's new passphrase").status == 200)

            let common = try Subprocess.run(Executables.latchkey, ["users", "set-password", userID, "--config", config.path], input: "password123\n")
            #expect(common.status == 1)
            #expect(common.error.contains("commonly used passwords"))
            let empty = try Subprocess.run(Executables.latchkey, ["users", "set-password", userID, "--config", config.path], input: "")
            #expect(empty.status == 2)
            let unknown = try Subprocess.run(Executables.latchkey, ["users", "set-password", "usr_nobody", "--config", config.path], input: "a brand new passphrase\n")
            #expect(unknown.status == 1)
            #expect(unknown.error == "latchkey: no such user\n")
        }
    }

    @Test("apple-app-site-association is answered directly: 200, application/json, webcredentials and applinks, no redirect")
    func appSiteAssociation() async throws {
        try await TestServer.with({ $0.associatedDomains.webcredentials = ["ABCDE12345.com.example.app", "ABCDE12345.com.example.other"] }) { (server: TestServer) async throws in
            let port = server.application.boundPort
            let raw = await BlockingWorkers.run(1) { _ in RawHTTP.exchange(port: port, RawHTTP.get("/.well-known/apple-app-site-association")) }
            guard case .response(let bytes)? = raw.first, let (status, body) = RawHTTP.parse(bytes) else {
                Issue.record("no response")
                return
            }
            #expect(status == 200, "a redirect would break Password AutoFill")
            let head = String(decoding: bytes.prefix(512), as: UTF8.self).lowercased()
            #expect(head.contains("content-type: application/json"))
            #expect(!head.contains("location:"))
            // Raw JSON: apple-app-site-association is Apple's format, not a /v1 body LatchkeyWire models.
            let json = try JSONValue(parsing: body)
            #expect(json["webcredentials"]?["apps"] == ["ABCDE12345.com.example.app", "ABCDE12345.com.example.other"])
            #expect(json["applinks"]?["details"] == [], "no applinks configured, none listed")
        }
    }
}
