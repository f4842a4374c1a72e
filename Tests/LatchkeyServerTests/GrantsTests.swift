import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Testing

/// `GET /v1/grants` and `DELETE /v1/grants/{client_id}` over HTTP: the consents a user gave,
/// and withdrawing one, which ends that client's sessions of the user and nothing else.
@Suite("Grants")
struct GrantsTests {
    static func bearer(_ token: TokenResponse) -> [String: String] { ["Authorization": "Bearer \(token.accessToken)"] }

    /// Makes `session` one an OAuth grant of `clientID` created, as the token endpoint will.
    static func assign(_ session: TokenResponse, to clientID: String, on server: TestServer) async throws {
        try await server.database.write { connection in
            try connection.execute("UPDATE sessions SET client_id = ? WHERE id = ?", [.text(clientID), .text(session.session.id)])
        }
    }

    @Test("GET lists the caller's consents with client names and sorted scopes; DELETE withdraws one, revokes that client's sessions (consent_revoked) and no others, audited; then 404")
    func listAndWithdraw() async throws {
        try await TestServer.with { server in
            let clients = ClientService(database: server.database, clock: { server.clock.now })
            let (photos, _) = try await clients.register(ClientRegistration(name: "Example Photos", redirectURIs: ["https://photos.example/cb"], confidential: true))
            let (notes, _) = try await clients.register(ClientRegistration(name: "Example Notes", redirectURIs: ["com.example.notes:/cb"]))
            let ada = try await server.createUser()
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let granted = server.clock.now
            let consents = ConsentRepository()
            try await server.database.write { connection in
                try consents.remember(userID: ada.id, clientID: photos.id, scopes: ["openid", "email"], at: granted, on: connection)
                try consents.remember(userID: grace.id, clientID: photos.id, scopes: ["openid"], at: granted, on: connection)
            }
            server.clock.advance(by: 60)
            try await server.database.write { connection in
                try consents.remember(userID: ada.id, clientID: notes.id, scopes: ["openid"], at: server.clock.now, on: connection)
                try consents.remember(userID: ada.id, clientID: photos.id, scopes: ["profile"], at: server.clock.now, on: connection)
            }

            // Ada's own /v1 session (the caller), two of Photos, one of Notes; Grace's of Photos.
            let caller = try await server.startSession(for: ada)
            let photos1 = try await server.startSession(for: ada)
            let photos2 = try await server.startSession(for: ada)
            let notes1 = try await server.startSession(for: ada)
            let gracePhotos = try await server.startSession(for: grace)
            for session in [photos1, photos2, gracePhotos] { try await Self.assign(session, to: photos.id, on: server) }
            try await Self.assign(notes1, to: notes.id, on: server)

            #expect(try await server.request(.get, "/v1/grants").status == 401)
            let listed = try await server.request(.get, "/v1/grants", headers: Self.bearer(caller))
            #expect(listed.status == 200)
            let later = WireTimestamp(server.clock.now)
            #expect(try listed.decode(WireGrantList.self).grants == [
                WireGrant(clientID: photos.id, clientName: "Example Photos", scopes: ["email", "openid", "profile"], grantedAt: WireTimestamp(granted), updatedAt: later),
                WireGrant(clientID: notes.id, clientName: "Example Notes", scopes: ["openid"], grantedAt: later, updatedAt: later),
            ])
            #expect(try listed.json["grants"]?.arrayValue?.first?.objectValue?.keys.sorted() == ["client_id", "client_name", "granted_at", "scopes", "updated_at"])

            let withdrawn = try await server.request(.delete, "/v1/grants/\(photos.id)", headers: Self.bearer(caller))
            #expect(withdrawn.status == 204)
            #expect(withdrawn.body.isEmpty)

            // The database: Ada's Photos sessions revoked for consent_revoked; the rest untouched.
            let rows = try await server.database.read { try $0.query("SELECT id, revoked_at, revoked_reason FROM sessions", []) }
            var reasons: [String: String?] = [:]
            for row in rows { reasons[try row.string("id")] = row.optionalString("revoked_reason") }
            #expect(reasons[photos1.session.id] == .some("consent_revoked"))
            #expect(reasons[photos2.session.id] == .some("consent_revoked"))
            for untouched in [caller, notes1, gracePhotos] { #expect(reasons[untouched.session.id] == .some(nil), "\(untouched.session.id)") }
            #expect(try await server.database.read { try ConsentRepository().scopes(userID: grace.id, clientID: photos.id, on: $0) } == ["openid"])

            // Over the wire: Photos' refresh token answers consent_revoked; the others still refresh.
            let refused = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(photos1.refreshToken)])
            #expect(refused.status == 400)
            #expect(try refused.wireError.reason == "consent_revoked")
            // Notes is a public third-party client: its grant refreshes at its own token endpoint.
            let kept = try await server.request(
                .post, "/oauth/token",
                body: Array(PercentEncoding.encodeForm(["grant_type": "refresh_token", "refresh_token": notes1.refreshToken, "client_id": notes.id]).utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(kept.status == 200, "\(kept.text)")

            let entries = try await AuditLog(database: server.database).entries(userID: ada.id, limit: 10)
            let withdrawal = try #require(entries.first { $0.event.rawValue == "consent.withdrawn" })
            #expect(withdrawal.outcome == .success && withdrawal.ip == "127.0.0.1" && withdrawal.requestID?.isEmpty == false)
            #expect(withdrawal.details == ["client_id": photos.id, "sessions_revoked": "2"])
            let revocations = entries.filter { $0.event.rawValue == "session.revoked" }
            #expect(Set(revocations.compactMap { $0.details["session_id"] }) == [photos1.session.id, photos2.session.id])
            #expect(revocations.allSatisfy { $0.details["reason"] == "consent_revoked" && $0.requestID == withdrawal.requestID })

            let after = try await server.request(.get, "/v1/grants", headers: Self.bearer(caller))
            #expect(try after.decode(WireGrantList.self).grants.map(\.clientID) == [notes.id])
            let twice = try await server.request(.delete, "/v1/grants/\(photos.id)", headers: Self.bearer(caller))
            #expect(twice.status == 404)
            #expect(try twice.wireError.error == .notFound)
            #expect(try await server.request(.delete, "/v1/grants/cl_unknown", headers: Self.bearer(caller)).status == 404)
            #expect(try await server.request(.delete, "/v1/grants/\(photos.id)").status == 401)
        }
    }

    @Test("a user without consents gets an empty list; one user cannot withdraw another's consent")
    func emptyAndOwnOnly() async throws {
        try await TestServer.with { server in
            let (photos, _) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example Photos", redirectURIs: ["https://photos.example/cb"]))
            let ada = try await server.createUser()
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let now = server.clock.now
            try await server.database.write { try ConsentRepository().remember(userID: grace.id, clientID: photos.id, scopes: ["openid"], at: now, on: $0) }
            let caller = try await server.startSession(for: ada)
            let listed = try await server.request(.get, "/v1/grants", headers: Self.bearer(caller))
            #expect(try listed.json == ["grants": []])
            #expect(try await server.request(.delete, "/v1/grants/\(photos.id)", headers: Self.bearer(caller)).status == 404)
            #expect(try await server.database.read { try ConsentRepository().scopes(userID: grace.id, clientID: photos.id, on: $0) } == ["openid"])
        }
    }
}
