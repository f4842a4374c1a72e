import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import LatchkeyClient
import LatchkeyJSON
import Testing

/// Upstream providers on the SDK's side, without a server: the authorize URL of a provider
/// sign-in and of a link, the provider id check, the callback completing as a web sign-in,
/// `identities()` and `unlink(_:)` against ``ScriptedTransport``.
@Suite("SDK provider sign-in: provider=, prompt=login links, identities(), unlink(_:)")
struct ProviderSignInTests {
    typealias Web = WebSignInTests

    /// The query of `url` as name → value, each name once.
    static func query(_ url: URL) throws -> [String: String] {
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    /// A store already holding a session of `user-1` (access token valid for 15 minutes), signed in with Apple.
    static func signedInStore() throws -> InMemoryCredentialStore {
        let store = InMemoryCredentialStore()
        let user = Account.User(
            id: "user-1", email: "ada@example.com", emailVerified: true, isPrivateEmail: false, givenName: "Ada", familyName: nil,
            createdAt: Date(timeIntervalSince1970: 1_767_225_600))
        let session = Session(
            accessToken: "at-old", refreshToken: "rt-old", expiresAt: Web.now.addingTimeInterval(900), sessionID: "sess-old", user: user)
        try store.save(StoredSession(session: session, appleUserID: "apple-user-1", deviceKeyIDs: ["pk": "dev-1"]))
        return store
    }

    /// `GET /v1/me` for `user` with these identities.
    static func account(user: String = "user-1", identities: String = "[]") -> String {
        #"{"user":{"id":""# + user
            + #"","email":"ada@example.com","email_verified":true,"is_private_email":false,"given_name":"Ada","family_name":null,"#
            + #""created_at":"2026-01-01T00:00:00Z"},"username":null,"identities":"# + identities + #","factors":[]}"#
    }

    static func accessToken(user: String) -> String {
        Web.jwt(["sub": .string(user), "sid": "sess-new", "client_id": .string(Web.clientID), "scope": "openid profile email"])
    }

    // MARK: The authorize URL

    @Test("beginWebSignIn(provider:) adds provider=<id> after every other parameter; without it there is none")
    func authorizeURLCarriesProvider() async throws {
        let client = Web.client(Web.offline())
        var generator = Web.SeededGenerator(state: 11)
        let request = try await client.beginWebSignIn(
            redirectURI: Web.redirectURI, scopes: ["openid", "profile", "email"], prompt: nil, loginHint: nil, provider: "google",
            using: &generator)
        #expect(
            request.url.absoluteString
                == "http://127.0.0.1:8080/oauth/authorize?response_type=code&client_id=lk_native_app"
                + "&redirect_uri=com.example.app%3A%2Foauth%2Fcallback&scope=openid%20profile%20email"
                + "&state=\(request.state)&nonce=\(request.nonce)&code_challenge=\(PKCE.challenge(for: request.verifier))"
                + "&code_challenge_method=S256&provider=google")
        #expect(request.provider == "google")
        #expect(try Self.query(request.url)["code_challenge_method"] == "S256")

        let plain = try await client.beginWebSignIn(redirectURI: Web.redirectURI)
        let plainQuery = try Self.query(plain.url)
        #expect(plain.provider == nil && plainQuery["provider"] == nil)
        let corp = try await client.beginWebSignIn(redirectURI: Web.redirectURI, provider: "corp-sso")
        #expect(try Self.query(corp.url)["provider"] == "corp-sso")
    }

    static let badIDs = ["", "Google", "goo gle", "a/b", "../me", "google?x=1", "google#x", "göögle", "a_b", String(repeating: "a", count: 33)]

    @Test("A provider id outside [a-z0-9-]{1,32} is invalidConfiguration before anything is sent or opened", arguments: badIDs)
    func badProviderIDRefused(id: String) async throws {
        let transport = Web.offline()
        let client = Web.client(transport, store: try Self.signedInStore())
        await #expect(throws: LatchkeyError(.invalidConfiguration, "")) { try await client.beginWebSignIn(redirectURI: Web.redirectURI, provider: id) }
        await #expect(throws: LatchkeyError(.invalidConfiguration, "")) {
            try await client.signIn(with: id, redirectURI: Web.redirectURI) { _ in
                Issue.record("the browser was opened")
                return URL(string: Web.redirectURI)!
            }
        }
        await #expect(throws: LatchkeyError(.invalidConfiguration, "")) {
            try await client.link(provider: id, redirectURI: Web.redirectURI) { _ in
                Issue.record("the browser was opened")
                return URL(string: Web.redirectURI)!
            }
        }
        await #expect(throws: LatchkeyError(.invalidConfiguration, "")) { try await client.unlink(id) }
        #expect(transport.requests.isEmpty)
    }

    @Test("Ids of 1 and 32 characters of a-z, 0-9 and - are accepted")
    func goodProviderIDs() async throws {
        let client = Web.client(Web.offline())
        for id in ["a", "sandbox", "corp-sso-2", "0", String(repeating: "z", count: 32)] {
            let request = try await client.beginWebSignIn(redirectURI: Web.redirectURI, provider: id)
            #expect(try Self.query(request.url)["provider"] == id)
        }
    }

    // MARK: Sign-in

    @Test("signIn(with:) opens the authorize URL with provider=google and no prompt; the callback completes as a web sign-in")
    func signInCompletesAsWebSignIn() async throws {
        let nonce = Web.Shared("")
        let transport = Web.server { (200, Web.tokenBody(idToken: Web.idToken(nonce: nonce.value))) }
        let store = InMemoryCredentialStore()
        let client = Web.client(transport, store: store)
        let events = EventRecorder(client.authEvents, count: 2)
        let session = try await client.signIn(with: "google", redirectURI: Web.redirectURI) { request in
            let query = try Self.query(request.url)
            #expect(request.url.path == "/oauth/authorize" && request.provider == "google")
            #expect(query["provider"] == "google" && query["prompt"] == nil)
            #expect(query["response_type"] == "code" && query["code_challenge_method"] == "S256" && query["state"] == request.state)
            nonce.value = request.nonce
            return Web.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")])
        }
        let sent = transport.requests
        #expect(sent.map { $0.url?.path ?? "" } == ["/oauth/token", "/v1/me"])
        #expect(sent.first?.httpBody.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("grant_type=authorization_code&code=the-code") == true)
        #expect(session.sessionID == "sess-1" && session.refreshToken == "rt-web-1" && session.user.id == "user-1")
        #expect(try store.load() == StoredSession(session: session))
        #expect(await events.events().map(\.name) == ["initialSession(nil)", "signedIn"])
    }

    @Test("A provider's callback is checked as any web sign-in's: a foreign state or iss is refused with nothing sent; the user's no is canceled")
    func callbackChecked() async throws {
        let transport = Web.offline()
        let client = Web.client(transport)
        for (pairs, code) in [
            ([("code", "c"), ("state", "forged"), ("iss", "$iss")], LatchkeyError.Code.invalidCallback),
            ([("code", "c"), ("state", "$state"), ("iss", "https://accounts.google.com")], .invalidCallback),
            ([("error", "access_denied"), ("state", "$state"), ("iss", "$iss")], .canceled),
            ([("error", "temporarily_unavailable"), ("state", "$state"), ("iss", "$iss")], .webSignIn(error: "temporarily_unavailable")),
        ] {
            let error = await #expect(throws: LatchkeyError.self) {
                try await client.signIn(with: "github", redirectURI: Web.redirectURI) { Web.callback($0, pairs) }
            }
            #expect(error?.code == code)
        }
        #expect(transport.requests.isEmpty)
    }

    // MARK: Linking

    @Test("link(provider:) sends prompt=login with provider; the same user's new session replaces the old, which is revoked; the Apple user is kept")
    func linkReplacesSession() async throws {
        let nonce = Web.Shared("")
        let store = try Self.signedInStore()
        let transport = Web.server(
            token: { (200, Web.tokenBody(accessToken: Self.accessToken(user: "user-1"), refreshToken: "rt-new", idToken: nil)) },
            me: { (200, Self.account(user: "user-1")) })
        let client = Web.client(transport, store: store)
        let session = try await client.link(provider: "github", redirectURI: Web.redirectURI) { request in
            let query = try Self.query(request.url)
            #expect(query["provider"] == "github" && query["prompt"] == "login")
            nonce.value = request.nonce
            return Web.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")])
        }
        #expect(session.user.id == "user-1" && session.refreshToken == "rt-new" && session.sessionID == "sess-new")
        #expect(transport.requests.map { $0.url?.path ?? "" } == ["/oauth/token", "/v1/me", "/v1/revoke"])
        let revoked = try #require(transport.requests.last?.httpBody).map { Character(Unicode.Scalar($0)) }
        #expect(String(revoked).contains(#""token":"rt-old""#))
        let stored = try #require(try store.load())
        #expect(stored.session == session && stored.appleUserID == "apple-user-1" && stored.deviceKeyIDs == ["pk": "dev-1"])
    }

    @Test("A link that ends in another account is identityNotLinked: its refresh token is revoked and the signed-in session kept")
    func linkToAnotherAccountRefused() async throws {
        let store = try Self.signedInStore()
        let before = try store.load()
        let transport = Web.server(
            token: { (200, Web.tokenBody(accessToken: Self.accessToken(user: "user-2"), refreshToken: "rt-other", idToken: nil)) },
            me: { (200, Self.account(user: "user-2")) })
        let client = Web.client(transport, store: store)
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.link(provider: "google", redirectURI: Web.redirectURI) {
                Web.callback($0, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")])
            }
        }
        #expect(error?.code == .identityNotLinked)
        #expect(transport.requests.map { $0.url?.path ?? "" } == ["/oauth/token", "/v1/me", "/v1/revoke"])
        let revoked = try #require(transport.requests.last?.httpBody).map { Character(Unicode.Scalar($0)) }
        #expect(String(revoked).contains(#""token":"rt-other""#))
        #expect(try store.load() == before)
        #expect(await client.session?.refreshToken == "rt-old")
    }

    @Test("link(provider:) without a session is notSignedIn and opens nothing")
    func linkNeedsSession() async throws {
        let transport = Web.offline()
        let client = Web.client(transport)
        await #expect(throws: LatchkeyError(.notSignedIn, "")) {
            try await client.link(provider: "google", redirectURI: Web.redirectURI) { _ in
                Issue.record("the browser was opened")
                return URL(string: Web.redirectURI)!
            }
        }
        #expect(transport.requests.isEmpty)
    }

    // MARK: Identities

    @Test("identities() reads GET /v1/me with the bearer: provider ids, emails, the password username, dates")
    func identitiesDecode() async throws {
        let identities = #"""
            [{"provider":"password","email":null,"username":"ada","created_at":"2026-01-01T00:00:00Z"},
             {"provider":"google","email":"ada@gmail.com","created_at":"2026-02-01T00:00:00Z"},
             {"provider":"github","email":null,"created_at":"2026-03-01T00:00:00Z"}]
            """#
        let transport = ScriptedTransport { _ in (200, Self.account(identities: identities)) }
        let client = Web.client(transport, store: try Self.signedInStore())
        let list = try await client.identities()
        #expect(list == [
            Account.Identity(provider: "password", email: nil, username: "ada", createdAt: Date(timeIntervalSince1970: 1_767_225_600)),
            Account.Identity(provider: "google", email: "ada@gmail.com", username: nil, createdAt: Date(timeIntervalSince1970: 1_769_904_000)),
            Account.Identity(provider: "github", email: nil, username: nil, createdAt: Date(timeIntervalSince1970: 1_772_323_200)),
        ])
        let sent = try #require(transport.requests.first)
        #expect(transport.requests.count == 1 && sent.httpMethod == "GET" && sent.url?.path == "/v1/me")
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer at-old")
    }

    // MARK: Unlinking

    @Test("unlink sends DELETE /v1/me/identities/{provider} with the bearer and returns on 204")
    func unlinkSendsDelete() async throws {
        let transport = ScriptedTransport { _ in (204, "") }
        let store = try Self.signedInStore()
        let client = Web.client(transport, store: store)
        try await client.unlink("google")
        let sent = try #require(transport.requests.first)
        #expect(transport.requests.count == 1)
        #expect(sent.httpMethod == "DELETE" && sent.url?.absoluteString == "http://127.0.0.1:8080/v1/me/identities/google")
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer at-old" && sent.httpBody == nil)
        #expect(try store.load()?.session.refreshToken == "rt-old")
    }

    /// An error answer of `DELETE /v1/me/identities/{provider}` and the code it must become.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var status: Int
        var error: String
        var code: LatchkeyError.Code
        var testDescription: String { "\(status) \(error)" }
    }

    static let refusals = [
        Refusal(status: 404, error: "not_found", code: .server(code: "not_found")),
        Refusal(status: 409, error: "conflict", code: .server(code: "conflict")),
        Refusal(status: 403, error: "insufficient_authentication", code: .server(code: "insufficient_authentication")),
    ]

    @Test("unlink's refusals keep the server's code and status, and the session", arguments: refusals)
    func unlinkRefusals(refusal: Refusal) async throws {
        let transport = ScriptedTransport { _ in
            (refusal.status, #"{"error":""# + refusal.error + #"","error_description":"refused"}"#)
        }
        let store = try Self.signedInStore()
        let client = Web.client(transport, store: store)
        let error = await #expect(throws: LatchkeyError.self) { try await client.unlink("github") }
        #expect(error?.code == refusal.code && error?.status == refusal.status && error?.serverCode == refusal.error)
        #expect(transport.requests.map { "\($0.httpMethod ?? "") \($0.url?.path ?? "")" } == ["DELETE /v1/me/identities/github"])
        #expect(try store.load()?.session.refreshToken == "rt-old")
        #expect(await client.session != nil)
    }
}
