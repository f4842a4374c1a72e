import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE

/// The sandbox's authorization endpoint (OpenID Connect Core §3.1.2): `GET authorize` with the
/// broker's parameters shows a sign-in page (any e-mail address, an optional name, whether the
/// address is verified), and its `POST` answers with a 303 to `redirect_uri` carrying `code` or
/// `error`, `state` and `iss` (RFC 9207).
///
/// `client_id` and `redirect_uri` are checked first: when either is wrong the answer is a 400
/// page, never a redirect to a URI nobody vouched for (RFC 6749 §4.1.2.1). Every other refusal
/// goes back to the client at `redirect_uri`. The page's form carries the request in hidden
/// fields, and its `POST` checks them again as the `GET` did: nothing is kept between the two.
extension OIDCSandbox {
    /// The authorization request's parameters, checked.
    struct AuthorizationRequest: Sendable {
        var redirectURI: String
        /// `scope` as sent, to come back with the form.
        var requestedScope: String
        /// The supported scopes asked for, space-separated, `openid` first.
        var grantedScope: String
        var codeChallenge: String
        var nonce: String
        var state: String?
        var responseMode: String?
        /// The address to prefill, from `login_hint` when it looks like one.
        var loginHint: String?

        /// The parameters as hidden fields, to come back with the page's form.
        func fields(clientID: String) -> [(name: String, value: String)] {
            [("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", "code"), ("scope", requestedScope),
             ("code_challenge", codeChallenge), ("code_challenge_method", "S256"), ("nonce", nonce)]
                + [("state", state), ("response_mode", responseMode)].compactMap { field in field.1.map { (field.0, $0) } }
        }
    }

    /// Why an authorization request is refused, and where the refusal goes.
    enum AuthorizationRefusal: Error {
        /// `client_id` or `redirect_uri` cannot be trusted: a 400 page.
        case page(String)
        /// Back to the client: `redirect_uri?error=…&error_description=…&state=…&iss=…`.
        case redirect(redirectURI: String, error: String, description: String, state: String?)
    }

    /// The address the page offers when the request gives no `login_hint`.
    static let defaultEmail = "dev@example.com"

    func registerAuthorizePage(on router: Router, prefix: String) {
        let path = "\(prefix)/authorize"
        router.get(path, synchronous: { request in
            let issuer: String
            do throws(EndpointError) { issuer = try self.requireIssuer() } catch { return error.response }
            do throws(AuthorizationRefusal) {
                let authorization = try self.authorizationRequest(request.query)
                return Self.html(
                    self.authorizePage(
                        authorization, action: path, email: authorization.loginHint ?? Self.defaultEmail, name: "", verified: true, problem: nil))
            } catch {
                return Self.response(for: error, issuer: issuer)
            }
        })
        router.post(path, synchronous: { request in
            let issuer: String
            do throws(EndpointError) { issuer = try self.requireIssuer() } catch { return error.response }
            let form = try request.formBody()
            do throws(AuthorizationRefusal) {
                let authorization = try self.authorizationRequest(form)
                return self.answer(authorization, form: form, action: path, issuer: issuer)
            } catch {
                return Self.response(for: error, issuer: issuer)
            }
        })
    }

    /// Checks the parameters, `client_id` and `redirect_uri` first.
    ///
    /// - Throws: ``AuthorizationRefusal/page(_:)`` for a wrong `client_id` or `redirect_uri`,
    ///   ``AuthorizationRefusal/redirect(redirectURI:error:description:state:)`` for the rest.
    func authorizationRequest(_ parameters: [String: String]) throws(AuthorizationRefusal) -> AuthorizationRequest {
        guard let clientID = parameters["client_id"], clientID.utf8.count <= Self.maxParameterBytes, clientID == self.clientID else {
            throw .page("client_id is missing or is not the sandbox's client.")
        }
        guard let redirectURI = parameters["redirect_uri"], Self.isAcceptableRedirectURI(redirectURI) else {
            throw .page("redirect_uri must be an absolute http or https URL without a fragment, of at most \(Self.maxParameterBytes) bytes.")
        }
        let state = parameters["state"].flatMap { $0.utf8.count <= Self.maxParameterBytes ? $0 : nil }
        func refuse(_ error: String, _ description: String) -> AuthorizationRefusal {
            .redirect(redirectURI: redirectURI, error: error, description: description, state: state)
        }
        for (name, value) in parameters where value.utf8.count > Self.maxParameterBytes {
            throw refuse("invalid_request", "\(name.prefix(40)) is longer than \(Self.maxParameterBytes) bytes")
        }
        if parameters["request"] != nil { throw refuse("request_not_supported", "request objects are not supported") }
        if parameters["request_uri"] != nil { throw refuse("request_uri_not_supported", "request_uri is not supported") }
        switch parameters["response_type"] {
        case nil, ""?: throw refuse("invalid_request", "response_type is required")
        case "code": break
        default: throw refuse("unsupported_response_type", "response_type must be code")
        }
        let responseMode = parameters["response_mode"]
        guard responseMode == nil || responseMode == "query" else { throw refuse("invalid_request", "response_mode must be query") }
        let requested = parameters["scope"] ?? ""
        let scopes = requested.split(separator: " ")
        guard scopes.contains("openid") else { throw refuse("invalid_scope", "scope must contain openid") }
        let granted = Self.supportedScopes.filter { scopes.contains(Substring($0)) }.joined(separator: " ")
        guard parameters["code_challenge_method"] == "S256" else {
            throw refuse("invalid_request", "PKCE is required: code_challenge_method must be S256")
        }
        guard let challenge = parameters["code_challenge"], Base64URL.decode(challenge)?.count == 32 else {
            throw refuse("invalid_request", "PKCE is required: code_challenge must be the base64url SHA-256 of the code_verifier")
        }
        guard let nonce = parameters["nonce"], !nonce.isEmpty else { throw refuse("invalid_request", "nonce is required") }
        let hint = parameters["login_hint"].flatMap { Self.checkedEmail($0) }
        return AuthorizationRequest(
            redirectURI: redirectURI, requestedScope: requested, grantedScope: granted, codeChallenge: challenge, nonce: nonce, state: state,
            responseMode: responseMode, loginHint: hint)
    }

    /// An absolute `http` or `https` URL with a host and no fragment (RFC 6749 §3.1.2): any such
    /// URL will do in the sandbox, and the code is bound to it.
    static func isAcceptableRedirectURI(_ text: String) -> Bool {
        guard text.utf8.count <= maxParameterBytes, !text.contains("#"), let url = URL(string: text),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host(), !host.isEmpty
        else { return false }
        return true
    }

    /// What the page's form gets: Cancel → `access_denied`; Continue → a code, or the page again
    /// saying what to fix.
    func answer(_ authorization: AuthorizationRequest, form: [String: String], action: String, issuer: String) -> HTTPResponse {
        let typedEmail = form["email"] ?? ""
        let typedName = form["name"] ?? ""
        let verified: Bool
        switch form["email_verified"] {
        case nil: verified = false
        case "true"?: verified = true
        default:
            return Self.html(
                authorizePage(authorization, action: action, email: typedEmail, name: typedName, verified: false, problem: "email_verified must be true or absent."),
                status: 400)
        }
        func again(_ problem: String) -> HTTPResponse {
            Self.html(authorizePage(authorization, action: action, email: typedEmail, name: typedName, verified: verified, problem: problem), status: 400)
        }
        switch form["action"] {
        case "cancel"?:
            return Self.redirect(authorization.redirectURI, [("error", "access_denied"), ("error_description", "the user cancelled")], state: authorization.state, issuer: issuer)
        case "continue"?:
            break
        default:
            return again("Choose Continue or Cancel.")
        }
        guard let email = Self.checkedEmail(typedEmail) else {
            return again("Type an email address: one @, at most \(Self.maxEmailBytes) bytes.")
        }
        let name = Substring(typedName).trimmingASCIIWhitespace()
        guard name.count <= Self.maxNameCharacters else { return again("The name may have at most \(Self.maxNameCharacters) characters.") }
        let grant = Grant(
            clientID: clientID, redirectURI: authorization.redirectURI, codeChallenge: authorization.codeChallenge, nonce: authorization.nonce,
            subject: Self.subject(forEmail: email), email: email, emailVerified: verified, name: name.isEmpty ? nil : String(name),
            scope: authorization.grantedScope, issuedAt: now)
        guard let code = issueCode(grant) else {
            return Self.redirect(
                authorization.redirectURI, [("error", "temporarily_unavailable"), ("error_description", "too many codes are outstanding")],
                state: authorization.state, issuer: issuer)
        }
        return Self.redirect(authorization.redirectURI, [("code", code)], state: authorization.state, issuer: issuer)
    }

    /// The address, trimmed, when it is one: not empty, at most ``maxEmailBytes`` bytes, one `@`
    /// with text on both sides, no white space.
    static func checkedEmail(_ text: String) -> String? {
        let email = Substring(text).trimmingASCIIWhitespace()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard !email.isEmpty, email.utf8.count <= maxEmailBytes, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
            !email.contains(where: \.isWhitespace)
        else { return nil }
        return String(email)
    }

    /// The sign-in page: the address, the name, "This email is verified", Continue and Cancel.
    func authorizePage(
        _ authorization: AuthorizationRequest, action: String, email: String, name: String, verified: Bool, problem: String?
    ) -> HTML {
        let hidden = authorization.fields(clientID: clientID).map { field -> HTML in
            "<input type=\"hidden\" name=\"\(field.name)\" value=\"\(field.value)\">\n"
        }
        let alert: HTML = problem.map { (problem: String) -> HTML in "<p role=\"alert\">\(problem)</p>\n" } ?? ""
        let checked: HTML = verified ? " checked" : ""
        return Self.document(
            body: """
                <h1>Sandbox sign-in</h1>
                <p>The development sandbox plays an OpenID provider: no password is asked for. Sign in to \(clientID) as anyone.</p>
                \(alert)<form method="post" action="\(action)">
                \(hidden)<p><label for="email">Email</label><br>
                <input type="email" id="email" name="email" value="\(email)" autocomplete="email" maxlength="\(Self.maxEmailBytes)" required></p>
                <p><label for="name">Name (optional)</label><br>
                <input type="text" id="name" name="name" value="\(name)" autocomplete="name" maxlength="\(Self.maxNameCharacters)"></p>
                <p><input type="checkbox" id="email_verified" name="email_verified" value="true"\(checked)> <label for="email_verified">This email is verified</label></p>
                <p><button type="submit" name="action" value="continue">Continue</button>
                <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></p>
                </form>

                """)
    }

    /// The answer to a refused request: the 400 page, or the redirect with the error.
    static func response(for refusal: AuthorizationRefusal, issuer: String) -> HTTPResponse {
        switch refusal {
        case .page(let problem):
            return html(
                document(body: """
                    <h1>Sandbox sign-in</h1>
                    <p role="alert">The sign-in request cannot be answered: \(problem)</p>
                    <p>Nothing was sent back to the application, since its redirect address could not be trusted.</p>

                    """),
                status: 400)
        case .redirect(let redirectURI, let error, let description, let state):
            return redirect(redirectURI, [("error", error), ("error_description", description)], state: state, issuer: issuer)
        }
    }

    /// 303 to `redirectURI` with `fields`, `state` and `iss` added to its query.
    static func redirect(_ redirectURI: String, _ fields: [(String, String)], state: String?, issuer: String) -> HTTPResponse {
        let parameters = fields + (state.map { [("state", $0)] } ?? []) + [("iss", issuer)]
        let separator = redirectURI.hasSuffix("?") || redirectURI.hasSuffix("&") ? "" : redirectURI.contains("?") ? "&" : "?"
        return HTTPResponse(
            status: 303,
            headers: ["Location": redirectURI + separator + FormEncoding.encode(parameters), "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"])
    }

    private static func document(body: HTML) -> HTML {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Sandbox sign-in</title>
        </head>
        <body>
        <main>
        \(body)</main>
        </body>
        </html>

        """
    }

    /// A page of the sandbox: no framing, no caching, no script, forms posted only here.
    private static func html(_ page: HTML, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [
                "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
                "Content-Security-Policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ],
            body: Array(page.text.utf8))
    }
}
