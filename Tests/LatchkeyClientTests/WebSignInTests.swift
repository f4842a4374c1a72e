import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import LatchkeyClient
import LatchkeyJSON
import Synchronization
import Testing

/// Web sign-in's portable core without a server: PKCE, the authorize URL, callback parsing, and
/// the code exchange against ``ScriptedTransport``.
@Suite("SDK web sign-in: PKCE, authorize URL, callback parsing, code exchange")
struct WebSignInTests {
    static let base = URL(string: "http://127.0.0.1:8080")!
    static let issuer = "http://127.0.0.1:8080"
    static let clientID = "lk_native_app"
    static let redirectURI = "com.example.app:/oauth/callback"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A value the test sets after the transport that reads it was made.
    final class Shared<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        var value: Value {
            get { mutex.withLock { $0 } }
            set { mutex.withLock { $0 = newValue } }
        }
    }

    /// A deterministic generator (SplitMix64), for URLs a test can spell out.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }

    static func client(_ transport: ScriptedTransport, store: InMemoryCredentialStore = InMemoryCredentialStore(), clientID: String? = clientID)
        -> LatchkeyClient
    {
        var configuration = LatchkeyConfiguration(baseURL: base, store: store, clientID: clientID)
        configuration.now = { now }
        return LatchkeyClient(configuration: configuration, transport: transport)
    }

    /// A transport that must not be used.
    static func offline() -> ScriptedTransport { ScriptedTransport { _ in (599, "") } }

    /// `redirect?pairs`, with `$state` and `$iss` replaced by the request's state and the issuer.
    static func callback(_ request: WebSignInRequest, to redirect: String? = nil, _ pairs: [(String, String)]) -> URL {
        let filled = pairs.map { name, value in
            (name, value.replacingOccurrences(of: "$state", with: request.state).replacingOccurrences(of: "$iss", with: issuer))
        }
        return URL(string: (redirect ?? request.redirectURI) + "?" + FormEncoding.encode(filled))!
    }

    /// An unsigned compact JWT with these claims (the SDK reads, never verifies, its own tokens).
    static func jwt(_ claims: [String: JSONValue]) -> String {
        "eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9." + Base64URL.encode(Data(JSONValue.object(claims).serialized)) + ".c2lnbmF0dXJl"
    }

    static let accessToken = jwt(["sub": "user-1", "sid": "sess-1", "client_id": .string(clientID), "scope": "openid profile email"])

    static func idToken(nonce: String, audience: String = clientID, issuer: String = issuer) -> String {
        jwt(["iss": .string(issuer), "sub": "user-1", "aud": .string(audience), "nonce": .string(nonce), "sid": "sess-1"])
    }

    static func tokenBody(accessToken: String = accessToken, tokenType: String = "Bearer", refreshToken: String? = "rt-web-1", idToken: String?) -> String {
        var members: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string(tokenType), "expires_in": 900, "scope": "openid profile email",
        ]
        if let refreshToken { members["refresh_token"] = .string(refreshToken) }
        if let idToken { members["id_token"] = .string(idToken) }
        return String(decoding: JSONValue.object(members).serialized, as: UTF8.self)
    }

    static let account = """
        {"user":{"id":"user-1","email":"ada@example.com","email_verified":true,"is_private_email":false,"given_name":"Ada",\
        "family_name":null,"created_at":"2026-01-01T00:00:00Z"},"username":null,"identities":[],"factors":[]}
        """

    /// The server's side of the exchange: `/oauth/token` answers `token`, `/v1/me` answers `me`
    /// (the account), `/v1/token` a rotation, `/v1/revoke` 200.
    static func server(
        token: @escaping @Sendable () -> (Int, String), me: @escaping @Sendable () -> (Int, String) = { (200, account) }
    ) -> ScriptedTransport {
        ScriptedTransport { request in
            switch (request.httpMethod ?? "GET", request.url?.path ?? "") {
            case ("POST", "/oauth/token"): return token()
            case ("GET", "/v1/me"): return me()
            case ("POST", "/v1/revoke"): return (200, "{}")
            case ("POST", "/v1/token"):
                return (
                    200,
                    #"{"access_token":"at-2","token_type":"Bearer","expires_in":900,"refresh_token":"rt-web-2","session_id":"sess-1","user":"#
                        + #"{"id":"user-1","email_verified":true,"is_private_email":false,"given_name":"Ada","created_at":"2026-01-01T00:00:00Z"}}"#
                )
            default: return (404, #"{"error":"not_found","error_description":"no such route"}"#)
            }
        }
    }

    // MARK: PKCE and the authorize URL

    @Test("PKCE S256 matches RFC 7636 Appendix B: the 32 octets give the verifier, the verifier the challenge (S21)")
    func pkceAppendixBVectorS21() {
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132,
            141, 121,
        ]
        #expect(Base64URL.encode(Data(octets)) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("The verifier is 43 unreserved characters from 32 random bytes; state and nonce carry 256 bits; each request is fresh (S21)")
    func randomValuesS21() async throws {
        let client = Self.client(Self.offline())
        let first = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        let second = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        for request in [first, second] {
            #expect(request.verifier.count == 43)
            #expect(request.verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
            #expect(Base64URL.decode(request.state)?.count == 32)
            #expect(Base64URL.decode(request.nonce)?.count == 32)
        }
        #expect(first.verifier != second.verifier && first.state != second.state && first.nonce != second.nonce)
        #expect(first.state != first.nonce && first.state != first.verifier)
    }

    @Test("The authorize URL carries every parameter, percent-encoded, and nothing else (the verifier stays on the device)")
    func authorizeURLCarriesEveryParameter() async throws {
        let client = Self.client(Self.offline())
        var generator = SeededGenerator(state: 7)
        let request = try await client.beginWebSignIn(
            redirectURI: Self.redirectURI, scopes: ["openid", "profile", "email"], prompt: "login", loginHint: "ada+web@example.com",
            using: &generator)
        let challenge = PKCE.challenge(for: request.verifier)
        #expect(
            request.url.absoluteString
                == "http://127.0.0.1:8080/oauth/authorize?response_type=code&client_id=lk_native_app"
                + "&redirect_uri=com.example.app%3A%2Foauth%2Fcallback&scope=openid%20profile%20email"
                + "&state=\(request.state)&nonce=\(request.nonce)&code_challenge=\(challenge)&code_challenge_method=S256"
                + "&prompt=login&login_hint=ada%2Bweb%40example.com")
        // An independent decoder reads back exactly what was meant.
        let items = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") }) == [
            "response_type": "code", "client_id": Self.clientID, "redirect_uri": Self.redirectURI, "scope": "openid profile email",
            "state": request.state, "nonce": request.nonce, "code_challenge": challenge, "code_challenge_method": "S256",
            "prompt": "login", "login_hint": "ada+web@example.com",
        ])
        #expect(!request.url.absoluteString.contains(request.verifier))
        #expect(request.redirectURI == Self.redirectURI && request.callback == .customScheme("com.example.app"))

        let plain = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        let names = try #require(URLComponents(url: plain.url, resolvingAgainstBaseURL: false)?.queryItems).map(\.name)
        #expect(names == ["response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"])
    }

    @Test("beginWebSignIn needs a clientID and an absolute redirect URI without query or fragment")
    func beginRefusesBadConfiguration() async throws {
        let unconfigured = Self.client(Self.offline(), clientID: nil)
        await #expect(throws: LatchkeyError(.invalidConfiguration, "")) { try await unconfigured.beginWebSignIn(redirectURI: Self.redirectURI) }
        let client = Self.client(Self.offline())
        for uri in ["/oauth/callback", "com.example.app:/oauth/callback#x", "com.example.app:/oauth/callback?a=b", ""] {
            await #expect(throws: LatchkeyError(.invalidConfiguration, ""), "\(uri)") { try await client.beginWebSignIn(redirectURI: uri) }
        }
    }

    @Test("The callback kind: https with host and path, a reverse-DNS custom scheme, none for loopback http")
    func callbackKind() async throws {
        let client = Self.client(Self.offline())
        #expect(try await client.beginWebSignIn(redirectURI: "https://auth.example.com/app/callback").callback
            == .https(host: "auth.example.com", path: "/app/callback"))
        #expect(try await client.beginWebSignIn(redirectURI: "https://auth.example.com").callback == .https(host: "auth.example.com", path: "/"))
        #expect(try await client.beginWebSignIn(redirectURI: "com.example.app:/oauth/callback").callback == .customScheme("com.example.app"))
        #expect(try await client.beginWebSignIn(redirectURI: "http://127.0.0.1:53127/callback").callback == nil)
    }

    // MARK: Callback parsing

    /// A callback that must be refused before anything is sent.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var label: String
        var redirectURI: String = WebSignInTests.redirectURI
        var to: String?
        var pairs: [(String, String)]
        var code: LatchkeyError.Code = .invalidCallback
        var testDescription: String { label }
    }

    static let refusals: [Refusal] = [
        Refusal(label: "state mismatch", pairs: [("code", "the-code"), ("state", "not-the-state"), ("iss", "$iss")]),
        Refusal(label: "no state", pairs: [("code", "the-code"), ("iss", "$iss")]),
        Refusal(label: "missing code", pairs: [("state", "$state"), ("iss", "$iss")]),
        Refusal(label: "empty code", pairs: [("code", ""), ("state", "$state"), ("iss", "$iss")]),
        Refusal(label: "duplicated code", pairs: [("code", "the-code"), ("code", "other-code"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(label: "duplicated state", pairs: [("code", "the-code"), ("state", "$state"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(label: "duplicated iss", pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss"), ("iss", "$iss")]),
        Refusal(label: "iss missing", pairs: [("code", "the-code"), ("state", "$state")]),
        Refusal(label: "iss of another server", pairs: [("code", "the-code"), ("state", "$state"), ("iss", "https://evil.example")]),
        Refusal(label: "iss with a trailing slash", pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss/")]),
        Refusal(label: "access_denied", pairs: [("error", "access_denied"), ("state", "$state"), ("iss", "$iss")], code: .canceled),
        Refusal(
            label: "another OAuth error", pairs: [("error", "login_required"), ("error_description", "sign in first"), ("state", "$state"), ("iss", "$iss")],
            code: .webSignIn(error: "login_required")),
        Refusal(label: "an error with a foreign state", pairs: [("error", "access_denied"), ("state", "forged"), ("iss", "$iss")]),
        Refusal(label: "an error without iss", pairs: [("error", "login_required"), ("state", "$state")]),
        Refusal(label: "another path", to: "com.example.app:/oauth/other", pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(label: "another scheme", to: "com.evil.app:/oauth/callback", pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(
            label: "https: another host", redirectURI: "https://auth.example.com/app/callback", to: "https://evil.example.com/app/callback",
            pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(
            label: "https: another port", redirectURI: "https://auth.example.com/app/callback", to: "https://auth.example.com:8443/app/callback",
            pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(
            label: "https: a longer path", redirectURI: "https://auth.example.com/app/callback", to: "https://auth.example.com/app/callback/more",
            pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]),
        Refusal(
            label: "https: plain http", redirectURI: "https://auth.example.com/app/callback", to: "http://auth.example.com/app/callback",
            pairs: [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]),
    ]

    @Test("A callback that is not the request's answer is refused with no network call and nothing stored", arguments: refusals)
    func callbackRefusedWithoutNetwork(refusal: Refusal) async throws {
        let transport = Self.offline()
        let store = InMemoryCredentialStore()
        let client = Self.client(transport, store: store)
        let request = try await client.beginWebSignIn(redirectURI: refusal.redirectURI)
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.completeWebSignIn(request, callbackURL: Self.callback(request, to: refusal.to, refusal.pairs))
        }
        #expect(error?.code == refusal.code)
        #expect(transport.requests.isEmpty)
        #expect(try store.load() == nil)
        #expect(await client.session == nil)
        // Neither the state nor the code appears in what an app might log.
        let text = String(describing: try #require(error))
        #expect(!text.contains(request.state) && !text.contains("the-code"), "\(text)")
    }

    @Test("access_denied is canceled with reason access_denied; another error keeps its OAuth code")
    func errorAnswers() async throws {
        let client = Self.client(Self.offline())
        let request = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        let denied = await #expect(throws: LatchkeyError.self) {
            try await client.completeWebSignIn(request, callbackURL: Self.callback(request, [("error", "access_denied"), ("state", "$state"), ("iss", "$iss")]))
        }
        #expect(denied?.code == .canceled && denied?.reason == "access_denied")
        let other = await #expect(throws: LatchkeyError.self) {
            // As a server writes it by hand: `+` and `%20` are both a space in a query.
            let raw = "\(Self.redirectURI)?error=consent_required&error_description=ask+the%20user&state=\(request.state)"
                + "&iss=http%3A%2F%2F127.0.0.1%3A8080"
            return try await client.completeWebSignIn(request, callbackURL: URL(string: raw)!)
        }
        #expect(other?.code == .webSignIn(error: "consent_required") && other?.serverCode == "consent_required")
        #expect(other?.code != .webSignIn(error: "login_required") && other?.code != .server(code: "consent_required"))
        #expect(other?.message.contains("ask the user") == true)
        #expect(LatchkeyError.Code.webSignIn(error: "login_required").description == "web_sign_in(login_required)")
        #expect(LatchkeyError.Code.server(code: "conflict").description == "server(conflict)")
    }

    @Test("State comparison is exact (constant time): a prefix, a longer value or one changed character is not equal")
    func constantTimeEqual() {
        #expect(WebSignInRequest.constantTimeEqual("abc", "abc"))
        #expect(!WebSignInRequest.constantTimeEqual("abc", "ab"))
        #expect(!WebSignInRequest.constantTimeEqual("ab", "abc"))
        #expect(!WebSignInRequest.constantTimeEqual("abc", "abd"))
        #expect(!WebSignInRequest.constantTimeEqual("", "a"))
        #expect(WebSignInRequest.constantTimeEqual("", ""))
    }

    // MARK: The code exchange

    @Test("A good callback: the form body of /oauth/token, GET /v1/me with the new token, the stored session, signedIn, then /v1/token refreshes it")
    func exchangeStoresSession() async throws {
        let nonce = Shared("")
        let transport = Self.server { (200, Self.tokenBody(idToken: Self.idToken(nonce: nonce.value))) }
        let store = InMemoryCredentialStore()
        let client = Self.client(transport, store: store)
        let events = EventRecorder(client.authEvents, count: 2)
        let request = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        nonce.value = request.nonce

        let session = try await client.completeWebSignIn(
            request, callbackURL: Self.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]))

        let sent = transport.requests
        try #require(sent.count == 2)
        #expect(sent[0].httpMethod == "POST" && sent[0].url?.absoluteString == "http://127.0.0.1:8080/oauth/token")
        #expect(sent[0].value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(sent[0].value(forHTTPHeaderField: "Authorization") == nil)
        #expect(
            sent[0].httpBody.map { String(decoding: $0, as: UTF8.self) }
                == "grant_type=authorization_code&code=the-code&redirect_uri=com.example.app%3A%2Foauth%2Fcallback"
                + "&client_id=lk_native_app&code_verifier=\(request.verifier)")
        #expect(sent[1].httpMethod == "GET" && sent[1].url?.path == "/v1/me")
        #expect(sent[1].value(forHTTPHeaderField: "Authorization") == "Bearer " + Self.accessToken)

        #expect(session.accessToken == Self.accessToken && session.refreshToken == "rt-web-1" && session.sessionID == "sess-1")
        #expect(session.expiresAt == Self.now.addingTimeInterval(900))
        #expect(session.user.id == "user-1" && session.user.givenName == "Ada" && session.user.email == "ada@example.com")
        #expect(try store.load() == StoredSession(session: session))
        #expect(await client.session == session)
        #expect(await events.events().map(\.name) == ["initialSession(nil)", "signedIn"])

        // The session refreshes through the SDK's usual path.
        let refreshed = try await client.refresh()
        let refresh = try #require(transport.requests.last)
        #expect(refresh.url?.path == "/v1/token")
        #expect(refresh.httpBody.map { String(decoding: $0, as: UTF8.self) }?.contains(#""refresh_token":"rt-web-1""#) == true)
        #expect(refreshed.refreshToken == "rt-web-2" && refreshed.sessionID == "sess-1")
    }

    @Test("signInWithWeb(browser:) is the whole flow in one call: the browser gets the request and returns the callback")
    func oneCall() async throws {
        let nonce = Shared("")
        let transport = Self.server { (200, Self.tokenBody(idToken: Self.idToken(nonce: nonce.value))) }
        let client = Self.client(transport)
        let session = try await client.signInWithWeb(redirectURI: Self.redirectURI, prompt: "login") { request in
            #expect(request.url.path == "/oauth/authorize" && request.url.query?.contains("prompt=login") == true)
            nonce.value = request.nonce
            return Self.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")])
        }
        #expect(session.sessionID == "sess-1" && transport.requests.map { $0.url?.path ?? "" } == ["/oauth/token", "/v1/me"])
    }

    @Test("The token endpoint refusing the code is server(code:) with its OAuth error; nothing is stored")
    func tokenEndpointRefuses() async throws {
        let transport = Self.server { (400, #"{"error":"invalid_grant","error_description":"the code was already used"}"#) }
        let store = InMemoryCredentialStore()
        let client = Self.client(transport, store: store)
        let request = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.completeWebSignIn(request, callbackURL: Self.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]))
        }
        #expect(error?.code == .server(code: "invalid_grant") && error?.status == 400)
        #expect(transport.requests.count == 1)
        #expect(try store.load() == nil)
    }

    @Test("When GET /v1/me fails after the exchange, nothing is stored and the new refresh token is revoked, not left live")
    func meFailsRevokes() async throws {
        let nonce = Shared("")
        let transport = Self.server(
            token: { (200, Self.tokenBody(idToken: Self.idToken(nonce: nonce.value))) },
            me: { (503, #"{"error":"unavailable","error_description":"try later"}"#) })
        let store = InMemoryCredentialStore()
        let client = Self.client(transport, store: store)
        let request = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        nonce.value = request.nonce
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.completeWebSignIn(request, callbackURL: Self.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]))
        }
        #expect(error?.code == .server(code: "unavailable") && error?.status == 503)
        #expect(transport.requests.map { $0.url?.path ?? "" } == ["/oauth/token", "/v1/me", "/v1/revoke"])
        let revoke = try #require(transport.requests.last?.httpBody).map { Character(Unicode.Scalar($0)) }
        #expect(String(revoke).contains(#""token":"rt-web-1""#))
        #expect(try store.load() == nil)
        #expect(await client.session == nil)
    }

    /// A token response that must be refused before `/v1/me` is asked.
    struct BadTokens: Sendable, CustomTestStringConvertible {
        var label: String
        var body: @Sendable (_ nonce: String) -> String
        var testDescription: String { label }
    }

    static let badTokens: [BadTokens] = [
        BadTokens(label: "ID token with another nonce") { _ in tokenBody(idToken: idToken(nonce: "another-nonce")) },
        BadTokens(label: "ID token for another client") { tokenBody(idToken: idToken(nonce: $0, audience: "someone-else")) },
        BadTokens(label: "ID token from another issuer") { tokenBody(idToken: idToken(nonce: $0, issuer: "https://evil.example")) },
        BadTokens(label: "no refresh token") { tokenBody(refreshToken: nil, idToken: idToken(nonce: $0)) },
        BadTokens(label: "not Bearer") { tokenBody(tokenType: "DPoP", idToken: idToken(nonce: $0)) },
        BadTokens(label: "access token without sid") { tokenBody(accessToken: jwt(["sub": "user-1"]), idToken: idToken(nonce: $0)) },
        BadTokens(label: "access token not a JWT") { tokenBody(accessToken: "opaque", idToken: idToken(nonce: $0)) },
    ]

    @Test("A token response without what the session needs, or an ID token not for this request, is invalidResponse and its refresh token is revoked", arguments: badTokens)
    func badTokenResponse(bad: BadTokens) async throws {
        let nonce = Shared("")
        let transport = Self.server { (200, bad.body(nonce.value)) }
        let store = InMemoryCredentialStore()
        let client = Self.client(transport, store: store)
        let request = try await client.beginWebSignIn(redirectURI: Self.redirectURI)
        nonce.value = request.nonce
        await #expect(throws: LatchkeyError(.invalidResponse, "")) {
            try await client.completeWebSignIn(request, callbackURL: Self.callback(request, [("code", "the-code"), ("state", "$state"), ("iss", "$iss")]))
        }
        // Never /v1/me; the refresh token, when there is one, is revoked rather than left live.
        let revoked = bad.label == "no refresh token" ? [] : ["/v1/revoke"]
        #expect(transport.requests.map { $0.url?.path ?? "" } == ["/oauth/token"] + revoked)
        #expect(try store.load() == nil)
    }
}
