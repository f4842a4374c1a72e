import FoundationEssentials

/// A checked `GET /oauth/authorize` request: response type `code` with an S256 PKCE challenge,
/// for a registered client and one of its registered redirect URIs.
package struct AuthorizationRequest: Sendable, Hashable {
    /// The `prompt` values (OpenID Connect Core §3.1.2.1; `create` from Initiating User Registration).
    package enum Prompt: String, Sendable, Hashable {
        case none, login, consent, create
    }

    /// Where the response parameters go: the redirect URI's query, or a form posted to it.
    package enum ResponseMode: String, Sendable, Hashable {
        case query
        case formPost = "form_post"
    }

    package var client: OAuthClient
    package var redirectURI: String
    /// The requested scopes, sorted, each once.
    package var scopes: [String]
    package var state: String?
    package var nonce: String?
    package var codeChallenge: String
    package var prompts: Set<Prompt>
    package var maxAge: Int?
    package var loginHint: String?
    /// The user `id_token_hint` names (its `sub`), once ``AuthorizationService/check(_:)`` has
    /// verified the hint: only that user may be answered with a code.
    package var hintedUserID: String?
    package var responseMode: ResponseMode
    /// The request's parameters as they came, carried through the hosted pages (a hidden field),
    /// so each form post checks the whole request again.
    package var parameters: [String: String]
    /// For a device's sign-in (RFC 8628), the reference of its pending device authorization
    /// (parameter ``deviceParameter``): the hosted pages sign the user in as for any request,
    /// then ask on the device consent page instead of answering a redirect URI, which such a
    /// request does not have.
    package var deviceAuthorizationID: String?

    /// The scopes space-separated, as tokens and the database store them.
    package var scope: String { scopes.joined(separator: " ") }

    /// The longest value a parameter may have.
    static let maximumParameterLength = 2048

    /// The parameter naming a pending device authorization, set by `/device` once the user typed
    /// its code.
    package static let deviceParameter = "device_authorization"

    /// Checks the parameters of an authorization request against the registered client.
    ///
    /// Until the client and the redirect URI are known to be right, a failure is
    /// ``AuthorizationFailure/untrusted(_:)``: an error page, never a redirect (S20). After
    /// that, each failure goes back to the client as an ``AuthorizationResponse`` error.
    ///
    /// - Parameter client: The registered client the `client_id` names, `nil` when none is.
    package static func check(_ parameters: [String: String], client: OAuthClient?) throws(AuthorizationFailure) -> AuthorizationRequest {
        guard parameters.values.allSatisfy({ $0.utf8.count <= maximumParameterLength }) else {
            throw .untrusted("A parameter of the request is too long.")
        }
        guard let clientID = parameters["client_id"], !clientID.isEmpty else {
            throw .untrusted("The request names no client (client_id is missing).")
        }
        guard let client, client.id == clientID else { throw .untrusted("No application with this client_id is registered.") }
        if let device = parameters[deviceParameter] { return try checkDevice(device, parameters: parameters, client: client) }
        guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else {
            throw .untrusted("The request has no redirect_uri.")
        }
        guard client.acceptsRedirectURI(redirectURI) else {
            throw .untrusted("The redirect_uri is not one that \(client.name) registered.")
        }
        let mode: ResponseMode
        switch parameters["response_mode"] {
        case nil: mode = .query
        case let value?:
            guard let known = ResponseMode(rawValue: value) else {
                throw .untrusted("The response_mode is not one Latchkey supports (query, form_post).")
            }
            mode = known
        }
        let state = parameters["state"]
        func refuse(_ error: String, _ description: String) -> AuthorizationFailure {
            .toClient(AuthorizationResponse(redirectURI: redirectURI, mode: mode, state: state, result: .error(error, description)))
        }
        if parameters["request"] != nil { throw refuse("request_not_supported", "request objects are not supported") }
        if parameters["request_uri"] != nil { throw refuse("request_uri_not_supported", "request_uri is not supported") }
        guard let responseType = parameters["response_type"] else { throw refuse("invalid_request", "response_type is required") }
        guard responseType == "code" else { throw refuse("unsupported_response_type", "only response_type=code is supported") }
        guard client.grantTypes.contains(.authorizationCode) else {
            throw refuse("unauthorized_client", "the client may not use the authorization code grant")
        }
        guard let challenge = parameters["code_challenge"] else {
            throw refuse("invalid_request", "code_challenge is required (PKCE with S256)")
        }
        guard parameters["code_challenge_method"] == "S256" else {
            throw refuse("invalid_request", "code_challenge_method must be S256")
        }
        guard PKCE.isChallenge(challenge) else { throw refuse("invalid_request", "code_challenge is not an S256 challenge") }
        let requested = (parameters["scope"] ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard !requested.isEmpty else { throw refuse("invalid_scope", "scope is required") }
        guard requested.allSatisfy(client.scopes.contains) else {
            throw refuse("invalid_scope", "the client may not ask for every scope requested")
        }
        var prompts = Set<Prompt>()
        for value in (parameters["prompt"] ?? "").split(separator: " ") {
            guard let prompt = Prompt(rawValue: String(value)) else { throw refuse("invalid_request", "prompt has an unknown value") }
            prompts.insert(prompt)
        }
        if prompts.contains(.none) && prompts.count > 1 { throw refuse("invalid_request", "prompt=none cannot be combined") }
        var maxAge: Int?
        if let text = parameters["max_age"] {
            guard let value = Int(text), value >= 0, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw refuse("invalid_request", "max_age must be a whole number of seconds")
            }
            maxAge = value
        }
        return AuthorizationRequest(
            client: client, redirectURI: redirectURI, scopes: Set(requested).sorted(), state: state, nonce: parameters["nonce"],
            codeChallenge: challenge, prompts: prompts, maxAge: maxAge, loginHint: parameters["login_hint"], responseMode: mode,
            parameters: parameters)
    }

    /// A device's sign-in: its client and device authorization, and at most `prompt` `login` or
    /// `create` and `provider` (the sign-in page's links); every other parameter is dropped, and
    /// every failure is an error page, as there is no redirect URI to answer. The scopes are the
    /// device authorization's, filled in by ``AuthorizationService/check(_:)``.
    private static func checkDevice(
        _ device: String, parameters: [String: String], client: OAuthClient
    ) throws(AuthorizationFailure) -> AuthorizationRequest {
        guard client.grantTypes.contains(.deviceCode) else { throw .untrusted("\(client.name) may not sign in devices.") }
        let prompts = Set((parameters["prompt"] ?? "").split(separator: " ").compactMap { Prompt(rawValue: String($0)) })
            .intersection([.login, .create])
        var kept = ["client_id": client.id, deviceParameter: device]
        if !prompts.isEmpty { kept["prompt"] = prompts.map(\.rawValue).sorted().joined(separator: " ") }
        kept["provider"] = parameters["provider"]
        return AuthorizationRequest(
            client: client, redirectURI: "", scopes: [], state: nil, nonce: nil, codeChallenge: "", prompts: prompts, maxAge: nil,
            loginHint: nil, responseMode: .query, parameters: kept, deviceAuthorizationID: device)
    }

    /// The parameters to come back to `GET /oauth/authorize` with once the user has signed in on
    /// the hosted page: without `prompt=login`, `prompt=create` and `max_age`, which that sign-in
    /// has just satisfied.
    package var afterSignIn: [String: String] {
        var parameters = parameters
        parameters["max_age"] = nil
        let kept = prompts.subtracting([.login, .create]).map(\.rawValue).sorted()
        parameters["prompt"] = kept.isEmpty ? nil : kept.joined(separator: " ")
        return parameters
    }
}

/// Why an authorization request cannot go on.
package enum AuthorizationFailure: Error, Sendable {
    /// The client or the redirect URI is unknown or not registered: said on an error page, with
    /// no redirect, so Latchkey is never an open redirector (S20).
    case untrusted(String)
    /// An error the client hears of at its redirect URI.
    case toClient(AuthorizationResponse)
}

extension AuthorizationRequest {
    /// The answer that sends `error` back to the client, with the request's `state`.
    package func error(_ code: String, _ description: String) -> AuthorizationResponse {
        AuthorizationResponse(redirectURI: redirectURI, mode: responseMode, state: state, result: .error(code, description))
    }
}

/// What goes back to the client's redirect URI (RFC 6749 §4.1.2, RFC 9207): a code or an
/// error, the request's `state`, and the issuer.
package struct AuthorizationResponse: Sendable, Hashable {
    package enum Result: Sendable, Hashable {
        case code(String)
        case error(String, String)
    }

    package var redirectURI: String
    package var mode: AuthorizationRequest.ResponseMode
    package var state: String?
    package var result: Result

    /// The response parameters, `iss` included (RFC 9207).
    package func parameters(issuer: String) -> [(name: String, value: String)] {
        var parameters: [(name: String, value: String)]
        switch result {
        case .code(let code): parameters = [("code", code)]
        case .error(let error, let description): parameters = [("error", error), ("error_description", description)]
        }
        if let state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return parameters
    }
}
