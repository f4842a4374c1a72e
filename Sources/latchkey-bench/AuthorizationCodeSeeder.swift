import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyServer
import LatchkeyStore

/// `latchkey-bench seed-oauth CONFIG DIR KIND COUNT`: authorization codes for `/oauth/token`
/// load, made as the authorization endpoint makes them for a signed-in browser, so
/// `scripts/bench` can measure the code exchange without driving the hosted pages.
///
/// The first call for a DIR registers the bench's clients (first-party, public, redirect
/// `com.example.bench:/callback`; one with RS256 ID tokens, one with ES256) and a signed-in
/// browser session, and remembers them in DIR. Each call then writes COUNT fresh codes of KIND
/// to standard output, `client_id code code_verifier` per line:
///
/// - `rs256`, `es256`: scope `openid profile email offline_access`, so the exchange signs an ID token with
///   that algorithm besides the access token and starts a session;
/// - `plain`: scope `offline_access`, no ID token.
///
/// Codes live 60 s (S22): seed a round's codes just before the round.
enum AuthorizationCodeSeeder {
    static let redirectURI = "com.example.bench:/callback"

    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 4, let kind = Kind(rawValue: arguments[2]), let count = Int(arguments[3]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench seed-oauth CONFIG DIR rs256|es256|plain COUNT\n".utf8))
            return 2
        }
        let directory = URL(filePath: arguments[1])
        return await Seeding.run("seed-oauth", configurationFile: arguments[0]) { application in
            try await codes(kind, count: count, directory: directory, application: application)
        }
    }

    /// COUNT codes of KIND, one line each.
    static func codes(_ kind: Kind, count: Int, directory: URL, application: LatchkeyApplication) async throws -> String {
        let clients = application.clients
        let authorization = application.services.authorization
        let setup: Setup
        if let existing = try Setup.load(from: directory) {
            setup = existing
        } else {
            setup = try await Setup.create(in: directory, application: application, clients: clients)
        }
        guard let client = try await clients.client(id: kind == .es256 ? setup.es256ClientID : setup.rs256ClientID),
            let browserSession = try await application.services.browserSessions.current(token: setup.browserSessionToken)
        else { throw SeedError("the bench's clients or browser session are gone from the database; remove \(directory.path)") }

        let context = RequestContext(ip: "127.0.0.1")
        return try await withThrowingTaskGroup(of: String.self) { group in
            // A few at a time: each code is its own write, as at the authorization endpoint.
            for worker in 0..<4 {
                group.addTask {
                    var lines = ""
                    for _ in stride(from: worker, to: count, by: 4) {
                        let verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
                        let request = try AuthorizationRequest.check(
                            [
                                "client_id": client.id, "redirect_uri": redirectURI, "response_type": "code", "scope": kind.scope,
                                "code_challenge": Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8))),
                                "code_challenge_method": "S256", "nonce": Base64URL.encode(SecureRandom.bytes(count: 16)),
                            ], client: client)
                        let step = try await authorization.next(request, browserSession: browserSession, context: context)
                        guard case .respond(let response) = step, case .code(let code) = response.result else {
                            throw SeedError("the authorization endpoint did not issue a code: \(step)")
                        }
                        lines += "\(client.id) \(code) \(verifier)\n"
                    }
                    return lines
                }
            }
            return try await group.reduce(into: "") { $0 += $1 }
        }
    }

    enum Kind: String {
        case rs256, es256, plain

        var scope: String { self == .plain ? "offline_access" : "openid profile email offline_access" }
    }

    /// The clients and the browser session the first call made, kept in DIR/setup.txt.
    struct Setup {
        var rs256ClientID: String
        var es256ClientID: String
        var browserSessionToken: String

        static func file(in directory: URL) -> URL { directory.appendingPathComponent("setup.txt") }

        static func load(from directory: URL) throws -> Setup? {
            guard let text = try? String(contentsOf: file(in: directory), encoding: .utf8) else { return nil }
            let fields = text.split(whereSeparator: \.isWhitespace).map(String.init)
            guard fields.count == 3 else { throw SeedError("\(file(in: directory).path) is not what seed-oauth wrote") }
            return Setup(rs256ClientID: fields[0], es256ClientID: fields[1], browserSessionToken: fields[2])
        }

        static func create(in directory: URL, application: LatchkeyApplication, clients: ClientService) async throws -> Setup {
            func register(_ algorithm: String) async throws -> String {
                try await clients.register(
                    ClientRegistration(name: "Bench \(algorithm)", redirectURIs: [redirectURI], firstParty: true, idTokenAlgorithm: algorithm)
                ).client.id
            }
            let users = UserRepository(database: application.database)
            let user = try await application.database.write { try users.create(email: "oauth-bench@example.com", now: Date(), on: $0) }
            let (_, token) = try await application.services.browserSessions.start(userID: user.id, amr: ["pwd"], ip: "127.0.0.1", userAgent: nil)
            let setup = Setup(rs256ClientID: try await register("RS256"), es256ClientID: try await register("ES256"), browserSessionToken: token)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try "\(setup.rs256ClientID) \(setup.es256ClientID) \(setup.browserSessionToken)\n".write(
                to: file(in: directory), atomically: true, encoding: .utf8)
            return setup
        }
    }

    struct SeedError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
