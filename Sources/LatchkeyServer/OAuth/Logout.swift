import FoundationEssentials
import LatchkeyJOSE

/// Where RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) sends the browser once
/// its browser session has ended.
package enum LogoutOutcome: Sendable, Hashable {
    /// To the client's registered `post_logout_redirect_uri`, with the request's `state`.
    case redirect(String, state: String?)
    /// To Latchkey's own "signed out" page.
    case signedOut
    /// Nothing ended yet: the browser is signed in, and nothing shows that its user asked to sign
    /// out, so a page asks them first (RP-Initiated Logout 1.0 §2, §6). Its form posts
    /// `parameters` back to the logout endpoint with a CSRF token bound to `session` (S29).
    case confirm(BrowserSession, parameters: [String: String])
}

extension AuthorizationService {
    /// Ends the browser session of `browserToken` (if any) and says where to go next.
    ///
    /// `post_logout_redirect_uri` must be registered, exactly, by the client that
    /// `id_token_hint` (an ID token this server signed; it may have expired) or `client_id`
    /// names; anything else is ``AuthorizationFailure/untrusted(_:)``, an error page, so logout
    /// is never an open redirector.
    ///
    /// A link anyone can send (RP-Initiated Logout 1.0 §6) ends nothing by itself: the session
    /// ends only for an `id_token_hint` of the signed-in user, or for the confirmation page's
    /// own form (`confirmed`); otherwise the answer is ``LogoutOutcome/confirm(_:parameters:)``.
    /// With no live browser session there is nothing to end, and no need to ask.
    ///
    /// - Parameters:
    ///   - browserToken: The session cookie's token.
    ///   - browserSession: The live session that token stands for, if any.
    ///   - confirmed: Whether the request is the confirmation page's post, its CSRF token valid.
    ///   - context: The browser's address and the request id, for the audit entry (S27).
    package func logout(
        _ parameters: [String: String], browserToken: String?, browserSession: BrowserSession?, confirmed: Bool, context: RequestContext
    ) async throws -> LogoutOutcome {
        var clientID = parameters["client_id"]
        var hintedUserID: String?
        if let hint = parameters["id_token_hint"] {
            guard let named = try await idTokenHint(hint) else {
                throw AuthorizationFailure.untrusted("The id_token_hint is not an ID token this server issued.")
            }
            guard clientID == nil || clientID == named.clientID else {
                throw AuthorizationFailure.untrusted("The client_id does not match the id_token_hint.")
            }
            clientID = named.clientID
            hintedUserID = named.userID
        }
        var destination: LogoutOutcome = .signedOut
        if let uri = parameters["post_logout_redirect_uri"] {
            guard let clientID, uri.utf8.count <= AuthorizationRequest.maximumParameterLength,
                let client = try await clients.client(id: clientID), client.acceptsPostLogoutRedirectURI(uri)
            else { throw AuthorizationFailure.untrusted("The post_logout_redirect_uri is not one the application registered.") }
            destination = .redirect(uri, state: parameters["state"])
        }
        guard let browserToken, let browserSession else { return destination }
        guard confirmed || hintedUserID == browserSession.userID else {
            // The page carries the client the hint named rather than the hint itself: an ID
            // token does not belong in a page's HTML.
            let carried = ["client_id": clientID, "post_logout_redirect_uri": parameters["post_logout_redirect_uri"], "state": parameters["state"]]
            return .confirm(browserSession, parameters: carried.compactMapValues { $0 })
        }
        _ = try await browserSessions.end(token: browserToken, reason: "logout", context: context)
        return destination
    }

    /// What an `id_token_hint` names.
    struct IDTokenHint: Sendable, Hashable {
        /// The client the ID token was issued to, its `aud`.
        var clientID: String
        /// The user it is about, its `sub`.
        var userID: String
    }

    /// The client and user of an ID token of ours, checked by signature and issuer but not by
    /// expiry: a relying party may well log out or name its user with an expired one
    /// (RP-Initiated Logout §2, OpenID Connect Core §3.1.2.1).
    ///
    /// - Returns: `nil` for anything else: not a JWT, another issuer's, not signed by our keys.
    func idTokenHint(_ token: String) async throws -> IDTokenHint? {
        guard token.utf8.count <= 8192 else { return nil }
        let keys = try await keys.current(now: clock()).verificationKeys
        let policy = JWTValidationPolicy(
            issuer: issuer, audiences: nil, algorithms: [.rs256, .es256], leeway: Self.hintLeeway, requiredClaims: ["aud", "sub"])
        guard let claims = try? JWTVerifier(keys: keys, policy: policy).verify(token, now: clock()).claims,
            claims.audience.count == 1, let subject = claims.subject
        else { return nil }
        return IDTokenHint(clientID: claims.audience[0], userID: subject)
    }

    /// How long after its expiry an ID token still names its client and user as a hint.
    static let hintLeeway: TimeInterval = 30 * 86_400
}
