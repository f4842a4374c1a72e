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
/// Services that verify the JWT offline against the JWKS cannot see a logout: they accept a
/// token until it expires, at most `access_token_ttl` seconds (docs/reference.md, "Access tokens").
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = LatchkeyContext

    let accessTokens: AccessTokens
    let clock: @Sendable () -> Date
    /// Whom the token must be for: the API on `/v1`; the API or userinfo on `/oauth/userinfo`.
    var audiences: [AccessTokens.Audience] = [.api]

    /// Stores the principal of the request's bearer token in the context, then calls `next`.
    ///
    /// - Throws: ``AuthError`` 401 `invalid_token` as ``authenticate(_:)`` does.
    func handle(
        _ request: HTTPRequest, context: LatchkeyContext, next: (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var context = context
        context.principal = try await authenticate(request)
        return try await next(request, context)
    }

    /// The principal of the request's bearer token.
    ///
    /// - Throws: ``AuthError`` 401 `invalid_token` with `WWW-Authenticate: Bearer` for a missing,
    ///   invalid or expired token and for an ended session.
    private func authenticate(_ request: HTTPRequest) async throws -> Principal {
        guard let header = request.headers["Authorization"], header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw AuthError.invalidToken("a bearer token is required")
        }
        let token = String(header.dropFirst(7).trimmingWhitespace())
        let now = clock()
        let claims = try await accessTokens.verify(token, audiences: audiences, now: now)
        guard let userID = claims.subject, let sessionID = claims["sid"]?.stringValue else {
            throw AuthError.invalidToken("the access token names no user or session")
        }
        // One message for an ended session and another user's: which sessions exist is not
        // something a token holder learns here.
        guard try await accessTokens.isLive(sessionID, of: userID, now: now) else {
            throw AuthError.invalidToken("the session has ended")
        }
        return Principal(
            userID: userID, sessionID: sessionID, amr: claims["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            clientID: claims["client_id"]?.stringValue,
            scopes: claims["scope"]?.stringValue.map { Set($0.split(separator: " ").map(String.init)) })
    }
}
