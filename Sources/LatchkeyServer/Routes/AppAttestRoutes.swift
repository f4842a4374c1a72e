import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyWebAuthn
import LatchkeyWire

/// `/v1/app-attest`: challenges, key attestation and assertions that earn app check tokens
/// (docs/reference.md "App Attest"); and, when `app_attest.enforce` names endpoints, the
/// ``AppCheckMiddleware`` in front of them.
struct AppAttestRoutes {
    let appAttest: AppAttestService

    /// The longest attestation accepted, in base64 characters: an attestation object is at most
    /// 64 KiB, and Apple's are about 5.5 KB.
    static let maximumAttestationLength = 65_536

    func register(on router: Router) {
        let appAttest = appAttest
        let anyone = router.group("", context: LatchkeyContext.self)

        anyone.post("/v1/app-attest/challenge") { request, context in
            let challenge = try await appAttest.challenge()
            return .json(WireAppAttestChallenge(challenge: Base64URL.encode(challenge.bytes), expiresIn: challenge.expiresIn).json)
        }

        anyone.post("/v1/app-attest/keys") { request, context in
            let body = try request.wireBody(WireAppAttestKeyRequest.self)
            let key = try await appAttest.attestKey(
                keyID: try Self.keyID(body.keyID),
                attestation: try BodyMember.binary(body.attestation, "attestation", maxLength: Self.maximumAttestationLength),
                challenge: try BodyMember.binary(body.challenge, "challenge", maxLength: 128), context: context.caller)
            return .json(WireAppAttestKey(keyID: Base64URL.encode(key.keyID), appID: key.appID, environment: key.environment.rawValue).json, status: 201)
        }

        anyone.post("/v1/app-attest/assertions") { request, context in
            let body = try request.wireBody(WireAppAttestAssertionRequest.self)
            let token = try await appAttest.assertKey(
                keyID: try Self.keyID(body.keyID), assertion: try BodyMember.binary(body.assertion, "assertion", maxLength: 8_192),
                challenge: try BodyMember.binary(body.challenge, "challenge", maxLength: 128), context: context.caller)
            return .json(WireAppCheckToken(appCheckToken: token.token, expiresIn: token.expiresIn).json)
        }

        if !appAttest.enforced.isEmpty { router.add(middleware: AppCheckMiddleware(appAttest: appAttest)) }
    }

    /// A key id: SHA-256 of the key's point, so 32 bytes.
    static func keyID(_ text: String) throws -> [UInt8] {
        let bytes = try BodyMember.binary(text, "key_id", maxLength: 64)
        guard bytes.count == 32 else { throw HTTPError.invalidRequest("key_id must be 32 bytes (the key identifier generateKey gave)") }
        return bytes
    }
}

/// The app check of `app_attest.enforce` (S49): a request to an enforced endpoint needs a valid
/// app check token in `X-Latchkey-App-Check`, or it is refused with 401 `app_check_failed`
/// (`enforce_mode: enforce`) or let through, counted and audited (`log`).
///
/// Router-wide, since the endpoints live in several route files; every other request passes
/// untouched, synchronously.
struct AppCheckMiddleware: HTTPSynchronousMiddleware {
    let appAttest: AppAttestService

    /// The header that carries the token.
    static let header = "X-Latchkey-App-Check"

    /// The `POST` endpoints each `app_attest.enforce` name covers. Sign in with Apple and email
    /// codes sign in and sign up in one call; they are `sign_in`.
    static let endpoints: [String: AppCheckEndpoint] = [
        "/v1/auth/password/signup": .signup, "/v1/auth/passkey/signup": .signup,
        "/v1/auth/password/login": .signIn, "/v1/auth/passkey": .signIn, "/v1/auth/apple": .signIn, "/v1/auth/email/verify": .signIn,
        "/v1/token": .token, "/oauth/token": .token,
    ]

    static func endpoint(of request: HTTPRequest) -> AppCheckEndpoint? {
        request.method == .post ? endpoints[request.path] : nil
    }

    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        if let endpoint = Self.endpoint(of: request) {
            let caller = RequestContext(
                ip: request.remoteAddress, userAgent: request.headers["User-Agent"].map { String($0.prefix(256)) }, requestID: request.requestID)
            try await appAttest.check(endpoint, token: request.headers[Self.header], context: caller)
        }
        return try await next.respond(to: request)
    }

    func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse {
        // Every enforced endpoint is asynchronous, so the router never runs one through here;
        // should one become synchronous, it is refused rather than let through unchecked.
        guard Self.endpoint(of: request) == nil else {
            throw AuthError(.appCheckFailed, "this endpoint cannot check an app check token synchronously")
        }
        return try next(request)
    }
}
