import FoundationEssentials
import LatchkeyJOSE

/// Where RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) sends the browser once
/// its browser session has ended.
package enum LogoutOutcome: Sendable, Hashable {
    /// To the client's registered `post_logout_redirect_uri`, with the request's `state`.
    case redirect(String, state: String?)
    /// To Latchkey's own "signed out" page.
    case signedOut
}

extension AuthorizationService {
    /// Ends the browser session of `browserToken` (if any) and says where to go next.
    ///
    /// `post_logout_redirect_uri` must be registered, exactly, by the client that
    /// `id_token_hint` (an ID token this server signed; it may have expired) or `client_id`
    /// names; anything else is ``AuthorizationFailure/untrusted(_:)``, an error page, so logout
    /// is never an open redirector.
    package func logout(_ parameters: [String: String], browserToken: String?, context: RequestContext) async throws -> LogoutOutcome {
        var clientID = parameters["client_id"]
        if let hint = parameters["id_token_hint"] {
            guard let audience = try await idTokenAudience(hint) else {
                throw AuthorizationFailure.untrusted("The id_token_hint is not an ID token this server issued.")
            }
            guard clientID == nil || clientID == audience else {
                throw AuthorizationFailure.untrusted("The client_id does not match the id_token_hint.")
            }
            clientID = audience
        }
        var destination: LogoutOutcome = .signedOut
        if let uri = parameters["post_logout_redirect_uri"] {
            guard let clientID, uri.utf8.count <= AuthorizationRequest.maximumParameterLength,
                let client = try await clients.client(id: clientID), client.acceptsPostLogoutRedirectURI(uri)
            else { throw AuthorizationFailure.untrusted("The post_logout_redirect_uri is not one the application registered.") }
            destination = .redirect(uri, state: parameters["state"])
        }
        if let browserToken { _ = try await browserSessions.end(token: browserToken, reason: "logout") }
        return destination
    }

    /// The client an ID token of ours was issued to, checked by signature and issuer but not by
    /// expiry: a relying party may well log out with an expired one (RP-Initiated Logout §2).
    private func idTokenAudience(_ token: String) async throws -> String? {
        guard token.utf8.count <= 8192 else { return nil }
        let keys = try await keys.current(now: clock()).verificationKeys
        let policy = JWTValidationPolicy(
            issuer: issuer, audiences: nil, algorithms: [.rs256, .es256], leeway: Self.hintLeeway, requiredClaims: ["aud", "sub"])
        guard let claims = try? JWTVerifier(keys: keys, policy: policy).verify(token, now: clock()).claims else { return nil }
        return claims.audience.count == 1 ? claims.audience[0] : nil
    }

    /// How long after its expiry an ID token still names its client for logout.
    static let hintLeeway: TimeInterval = 30 * 86_400
}
