import LatchkeyHTTP
import LatchkeyJSON

/// Passkeys on the hosted pages (docs/reference.md, "Hosted pages"), over ``PasskeyService``,
/// which keeps the checks (WebAuthn §7.1, §7.2), spends each flow once and writes the audit
/// entries:
///
/// - the sign-in page carries discoverable request options made when it is rendered: the
///   "Sign in with a passkey" button, and AutoFill's conditional mediation on the username field;
///   its form posts `credential.toJSON()` to `POST /oauth/authorize/passkey`;
/// - the sign-up page carries creation options for a new account ("Create with a passkey"),
///   posted to `POST /oauth/authorize/passkey/sign-up`;
/// - the second-factor page, for an account with a passkey, carries options naming its passkeys,
///   posted to `POST /oauth/authorize/second-factor/passkey`.
///
/// Each finishes through the sign-in pipeline with `.browser(replacing:)` as the other forms
/// do. A refusal goes back to its page with the reason in words. The pages offer passkeys only
/// where the server's own origin is one of `passkeys.origins` (a browser elsewhere would
/// answer for another origin); without JavaScript they show no passkey at all.
extension AuthorizeRoutes {
    static let passkeySignInPath = "/oauth/authorize/passkey"
    static let passkeySignUpPath = "/oauth/authorize/passkey/sign-up"
    static let passkeySecondFactorPath = "/oauth/authorize/second-factor/passkey"

    /// The passkey service when the pages offer passkeys: passkeys on, an RP ID, and the public
    /// URL's origin among the passkey origins.
    var offeredPasskeys: PasskeyService? {
        guard let passkeys, let party = passkeys.relyingParty(), let origin = Configuration.origin(of: authorization.issuer),
            party.origins.contains(origin)
        else { return nil }
        return passkeys
    }

    func registerPasskeyForms(on router: Router) {
        guard passkeys != nil else { return }
        let routes = self
        add(.post, Self.passkeySignInPath, on: router) { request, caller in try await routes.passkeySignIn(request, creating: false, caller: caller) }
        add(.post, Self.passkeySignUpPath, on: router) { request, caller in try await routes.passkeySignIn(request, creating: true, caller: caller) }
        add(.post, Self.passkeySecondFactorPath, on: router) { request, caller in try await routes.passkeySecondFactor(request, caller: caller) }
    }

    // MARK: The pages' forms

    /// The sign-in page's passkey form: discoverable options (empty `allowCredentials`) whose
    /// challenge outlives the page's stay in AutoFill. `nil` when passkeys are not offered or the
    /// options could not be made (the page works without them).
    func passkeySignInForm(_ parameters: [String: String], csrfToken: String) async -> PasskeyForm? {
        guard let passkeys = offeredPasskeys, let (flowID, publicKey) = try? await passkeys.signInOptions(username: nil) else { return nil }
        return PasskeyForm(
            ceremony: .get, form: Self.passkeyForm(Self.passkeySignInPath, parameters, csrfToken), flowID: flowID,
            options: publicKey.serializedString, button: "Sign in with a passkey", conditional: true)
    }

    /// The sign-up page's passkey form: creation options for a new account, named by the
    /// request's `login_hint` when that is a free email address.
    func passkeySignUpForm(_ parameters: [String: String], loginHint: String?, csrfToken: String) async -> PasskeyForm? {
        guard let passkeys = offeredPasskeys else { return nil }
        let options =
            if let loginHint, let named = try? await passkeys.signUpOptions(username: loginHint, givenName: nil, familyName: nil) { named } else {
                try? await passkeys.signUpOptions(username: nil, givenName: nil, familyName: nil)
            }
        guard let (flowID, publicKey) = options else { return nil }
        return PasskeyForm(
            ceremony: .create, form: Self.passkeyForm(Self.passkeySignUpPath, parameters, csrfToken), flowID: flowID,
            options: publicKey.serializedString, button: "Create with a passkey")
    }

    /// The second-factor page's passkey form; `nil` when the account has no passkey.
    func passkeySecondFactorForm(_ parameters: [String: String], mfaToken: String, csrfToken: String) async -> PasskeyForm? {
        guard let passkeys = offeredPasskeys, let (flowID, publicKey) = try? await passkeys.secondFactorOptions(mfaToken: mfaToken) else {
            return nil
        }
        return PasskeyForm(
            ceremony: .get, form: Self.passkeyForm(Self.passkeySecondFactorPath, parameters, csrfToken), flowID: flowID,
            options: publicKey.serializedString, button: "Use a passkey")
    }

    static func passkeyForm(_ action: String, _ parameters: [String: String], _ csrfToken: String) -> HostedForm {
        HostedForm(action: action, csrfToken: csrfToken, hidden: [HiddenField(name: "request", value: encode(parameters))])
    }

    // MARK: The routes

    /// The answer of the sign-in or sign-up page's passkey: signed in as by the password form, or
    /// back to the page with the reason.
    func passkeySignIn(_ request: HTTPRequest, creating: Bool, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        let back = Self.authorizeURL(authorizationRequest.parameters)
        let page = creating ? "sign_up" : "sign_in"
        guard preSessionFormIsGenuine(request, form) else {
            return HostedFlash(page: page, error: Self.expired, username: nil).redirect(to: back)
        }
        guard let passkeys = offeredPasskeys else { return respond(.untrusted("Passkeys are not available on this server.")) }
        guard let flowID = form["flow_id"], !flowID.isEmpty, let credential = Self.credential(form) else {
            return HostedFlash(page: page, error: PasskeyForm.notUsed, username: nil).redirect(to: back)
        }
        let target = SignInTarget.browser(replacing: request.browserSessionToken)
        do {
            let signedIn =
                creating
                ? try await passkeys.signUp(flowID: flowID, credential: credential, context: caller, target: target)
                : try await passkeys.signIn(flowID: flowID, credential: credential, context: caller, target: target)
            return try signedInResponse(signedIn, next: authorizationRequest)
        } catch let error as AuthError {
            // Only with `user_verification: preferred` and an authenticator that did not verify.
            if let response = Self.secondFactorPage(after: error, authorizationRequest.parameters) { return response }
            return HostedFlash(page: page, error: Self.sentence(forPasskey: error, creating: creating), username: nil).redirect(to: back)
        }
    }

    /// The second-factor page's passkey, for the pending sign-in.
    func passkeySecondFactor(_ request: HTTPRequest, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        let again = Self.secondFactorPath + "?" + Self.encode(authorizationRequest.parameters)
        guard preSessionFormIsGenuine(request, form) else {
            return HostedFlash(page: "second_factor", error: Self.expired, username: nil).redirect(to: again)
        }
        guard let mfaToken = HostedFlash.mfaToken(from: request) else { return .seeOther(Self.authorizeURL(authorizationRequest.parameters)) }
        guard let flowID = form["flow_id"], !flowID.isEmpty, let credential = Self.credential(form) else {
            return HostedFlash(page: "second_factor", error: PasskeyForm.notUsed, username: nil).redirect(to: again)
        }
        // A refused passkey has a reason of its own; the token's refusals end the pending sign-in.
        let pendingEnded: Set<AuthError.Reason?> = [.expired, .reused, .revoked, .tooManyAttempts, .accountDeleted]
        return try await completeSecondFactor(
            .passkey(flowID: flowID, credential: credential), mfaToken: mfaToken, request: request, authorizationRequest, caller: caller,
            ended: { $0.code == .invalidGrant && pendingEnded.contains($0.reason) },
            sentence: { Self.sentence(forPasskey: $0, creating: false) })
    }

    // MARK: Helpers

    /// The posted `credential` field as JSON, if it is an object.
    static func credential(_ form: [String: String]) -> JSONValue? {
        guard let text = form["credential"], !text.isEmpty, let json = try? JSONValue(parsing: Array(text.utf8)), case .object = json else {
            return nil
        }
        return json
    }

    /// A passkey's refusal in words, naming the failed check.
    static func sentence(forPasskey error: AuthError, creating: Bool) -> String {
        let refused = creating ? "The passkey could not be created" : "The passkey was not accepted"
        switch error.code {
        case .invalidGrant:
            let because: String =
                switch error.reason?.rawValue {
                case "user_not_present": "the authenticator did not confirm that you were there"
                case "user_not_verified": "the authenticator did not verify you (with Face ID, Touch ID or a PIN)"
                case "bad_signature": "its signature does not verify"
                case "unknown_credential": "no account has this passkey"
                case "unknown_flow": "the page had expired"
                case "origin_mismatch", "rp_id_mismatch", "cross_origin": "it was made for another site"
                case "cloned_authenticator": "it looks like a copy of your authenticator"
                case "account_deleted", "account_disabled": "its account cannot sign in"
                default: "it did not pass the checks (\(error.reason?.rawValue ?? "invalid"))"
                }
            return "\(refused): \(because). Please try again, or sign in another way."
        case .conflict: return creating ? "That passkey or email address has an account already. Please sign in instead." : sentence(for: error, creating: creating)
        default: return sentence(for: error, creating: creating)
        }
    }
}

extension HTTPResponse {
    /// The hosted pages' policy (``HTTPHeaders/hostedPageSecurity``) with `script-src` admitting
    /// the passkey script by its hash, and nothing else.
    mutating func allowPasskeyScript() {
        headers.set(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; script-src \(PasskeyForm.scriptHash); frame-ancestors 'none'; base-uri 'none'")
    }
}
