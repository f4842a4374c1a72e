import FoundationEssentials
import LatchkeyBasics
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON

/// Checks `Authorization: Bearer` on Latchkey's own endpoints: signature, `typ: at+jwt`, `iss`,
/// `aud`, `exp`, and that the session `sid` names is still live and is the session of the user
/// `sub` names, so a logout takes effect here at once (and in other processes on the same
/// database within ``AccessTokens/livenessTTL``) for every token of the session.
///
/// It is the middleware of the authenticated route groups: a handler in
/// `router.group("/v1/me", middleware: bearer)` (a `RouterGroup<LatchkeyContext>`) runs only for a
/// valid token and reads the caller from `context.principal`; any other request gets the 401
/// `invalid_token` answer with `WWW-Authenticate: Bearer` before the handler runs.
///
/// A token bound to a DPoP key (its `cnf.jkt`, RFC 9449) passes only as `Authorization: DPoP`
/// with a proof by that key for this request and this token; an unbound token takes the fast
/// path of `Bearer`, where nothing but the one claim lookup is added.
///
/// Services that verify the JWT offline against the JWKS cannot see a logout: they accept a
/// token until it expires, at most `access_token_ttl` seconds (docs/reference.md, "Access tokens").
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = LatchkeyContext

    let accessTokens: AccessTokens
    /// Accepts the proofs of DPoP-bound tokens (S42).
    let dpop: DPoPService
    let clock: @Sendable () -> Date
    /// Whom the token must be for: the API on `/v1`; the API or userinfo on `/oauth/userinfo`.
    var audiences: [AccessTokens.Audience] = [.api]

    /// Stores the principal of the request's bearer token in the context, then calls `next`.
    ///
    /// - Throws: ``AuthError`` 401 `invalid_token` as ``authenticate(_:caller:)`` does.
    func handle(
        _ request: HTTPRequest, context: LatchkeyContext, next: (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var context = context
        context.principal = try await authenticate(request, caller: context.caller)
        return try await next(request, context)
    }

    /// The principal of the request's access token: `Authorization: Bearer` for a token that is
    /// not bound to a key, `Authorization: DPoP` with a `DPoP` proof by the token's key (its
    /// `cnf.jkt`) and for this token (`ath`) for one that is (RFC 9449 §7).
    ///
    /// - Throws: ``AuthError`` 401 `invalid_token` with `WWW-Authenticate: Bearer` for a missing,
    ///   invalid or expired token and for an ended session; ``DPoPChallenge`` (401 with
    ///   `WWW-Authenticate: DPoP`) for a bound token sent as `Bearer` and for every refusal of a
    ///   `DPoP` request.
    private func authenticate(_ request: HTTPRequest, caller: RequestContext) async throws -> Principal {
        let header = request.headers["Authorization"] ?? ""
        if let token = Self.credentials(header, scheme: "bearer ") {
            let claims = try await verify(token)
            // The fast path ends here for an unbound token; a bound one is worth nothing without its key.
            guard claims["cnf"] == nil else {
                throw DPoPChallenge(refusal: .invalidToken("the access token is DPoP-bound; send it as Authorization: DPoP with a DPoP proof"))
            }
            return try await principal(claims)
        }
        guard let token = Self.credentials(header, scheme: "dpop ") else { throw AuthError.invalidToken("a bearer token is required") }
        do {
            let claims = try await verify(token)
            guard let key = claims["cnf"]?.objectValue?["jkt"]?.stringValue else {
                throw AuthError.invalidToken("the access token is not DPoP-bound; send it as Bearer")
            }
            guard let proof = try DPoPBinding.proof(request) else { throw AuthError.invalidDPoPProof("a DPoP-bound token needs a DPoP proof") }
            let target = DPoPBinding.target(request, issuer: accessTokens.issuer, accessToken: token)
            guard try await dpop.accept(proof, for: target, context: caller) == key else {
                throw AuthError.invalidDPoPProof("the DPoP proof is by another key than the one the token is bound to")
            }
            return try await principal(claims)
        } catch let refusal as AuthError where [.invalidToken, .invalidDPoPProof, .useDPoPNonce].contains(refusal.code) {
            throw DPoPChallenge(refusal: refusal)
        }
    }

    /// The token after `scheme` (lower case, with its space), whatever the case of the scheme.
    private static func credentials(_ header: String, scheme: String) -> String? {
        guard header.utf8.count > scheme.utf8.count, header.prefix(scheme.count).lowercased() == scheme else { return nil }
        return String(header.dropFirst(scheme.count).trimmingWhitespace())
    }

    private func verify(_ token: String) async throws -> JWTClaims {
        try await accessTokens.verify(token, audiences: audiences, now: clock())
    }

    /// Who the verified claims name, once their session is found live and theirs.
    private func principal(_ claims: JWTClaims) async throws -> Principal {
        guard let userID = claims.subject, let sessionID = claims["sid"]?.stringValue else {
            throw AuthError.invalidToken("the access token names no user or session")
        }
        // One message for an ended session and another user's: which sessions exist is not
        // something a token holder learns here.
        guard try await accessTokens.isLive(sessionID, of: userID, now: clock()) else {
            throw AuthError.invalidToken("the session has ended")
        }
        return Principal(
            userID: userID, sessionID: sessionID, amr: claims["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            clientID: claims["client_id"]?.stringValue,
            scopes: claims["scope"]?.stringValue.map { Set($0.split(separator: " ").map(String.init)) })
    }
}
