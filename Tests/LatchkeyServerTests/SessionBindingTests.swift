import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyWire
import Testing

/// An access token's `sid` and `sub` are two claims; bearer checks hold them together, so a
/// session's end stops every token of it and no token borrows another user's live session.
@Suite("Bearer tokens: session bound to subject")
struct SessionBindingTests {
    static func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    /// A token signed with the server's own current key, claiming `session` for `subject`.
    static func mint(_ server: TestServer, session: Session, subject: String) async throws -> String {
        var borrowed = session
        borrowed.userID = subject
        return try await server.application.services.accessTokens.token(for: borrowed, now: server.clock.now)
    }

    static func expectInvalidToken(_ response: TestResponse, _ comment: Comment? = nil) throws {
        #expect(response.status == 401, comment)
        #expect(response.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#, comment)
        #expect(try response.wireError.error == .invalidToken, comment)
    }

    @Test("S9: a verifying token with user A's sub and user B's live sid is 401 invalid_token, from the database and from the liveness cache")
    func s9SessionOfAnotherUser() async throws {
        try await TestServer.with { server in
            let ada = try await server.createUser(email: "ada@example.com", givenName: "Ada")
            let bob = try await server.createUser(email: "bob@example.com", givenName: "Bob")
            let bobs = try await server.startSession(for: bob)
            let forged = try await Self.mint(server, session: bobs.session, subject: ada.id)
            // It verifies: signature, typ, iss, aud and exp are all good; only the pairing is wrong.
            let claims = try Insecure.unverifiedContents(of: forged).claims
            #expect(claims["sub"]?.stringValue == ada.id)
            #expect(claims["sid"]?.stringValue == bobs.session.id)

            // First seen with nothing cached: answered from the database.
            try Self.expectInvalidToken(try await server.request(.get, "/v1/me", headers: Self.bearer(forged)), "cache cold")
            // Bob's own token still works, and now the cache knows the session is live.
            let me = try await server.request(.get, "/v1/me", headers: Self.bearer(bobs.accessToken))
            #expect(me.status == 200)
            #expect(try me.decode(WireAccount.self).user.id == bob.id)
            // Answered from the cache: still refused, for reads and for writes.
            try Self.expectInvalidToken(try await server.request(.get, "/v1/me", headers: Self.bearer(forged)), "cache warm")
            try Self.expectInvalidToken(try await server.request(.get, "/v1/sessions", headers: Self.bearer(forged)))
            try Self.expectInvalidToken(try await server.request(.post, "/v1/logout", json: ["all": true], headers: Self.bearer(forged)))
            #expect(try await server.application.services.sessions.session(bobs.session.id)?.revokedAt == nil, "the forged token ended nothing")
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(bobs.accessToken)).status == 200)
        }
    }

    @Test("S9: after logout every access token of the session is refused, the first one and those from refreshes alike")
    func s9LogoutEndsEveryToken() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            var tokens = [first.accessToken]
            var refreshToken = first.refreshToken
            for _ in 0..<2 {
                server.clock.advance(by: 5)
                let refreshed = try await SessionTests.refresh(server, refreshToken).tokens
                tokens.append(refreshed.accessToken)
                refreshToken = refreshed.refreshToken
            }
            #expect(Set(tokens).count == 3)
            for token in tokens {
                #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(token)).status == 200)
            }
            #expect(try await server.request(.post, "/v1/logout", json: ["all": false], headers: Self.bearer(tokens[1])).status == 204)
            for (index, token) in tokens.enumerated() {
                try Self.expectInvalidToken(try await server.request(.get, "/v1/me", headers: Self.bearer(token)), "token \(index)")
            }
            // Once the liveness cache has expired the database gives the same answer.
            server.clock.advance(by: AccessTokens.livenessTTL + 1)
            for token in tokens {
                try Self.expectInvalidToken(try await server.request(.get, "/v1/me", headers: Self.bearer(token)))
            }
        }
    }
}
