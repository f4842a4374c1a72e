import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJSON

/// Apple's web sign-in page, played by the sandbox: `GET auth/authorize` with Apple's parameters
/// shows a form (an e-mail address, "Hide My Email", a name), and its `POST` answers as Apple
/// does with `response_mode=form_post`: a page that posts `code`, `id_token`, `state` and, on
/// the user's first authorization, `user` to `redirect_uri`.
///
/// The user's `sub` follows from the address typed, so the same address is the same Apple user
/// in every flow, web or native (`POST authorize` with that `sub`).
extension AppleSandbox {
    /// Apple's authorize parameters, checked.
    struct WebAuthorization: Sendable, Hashable {
        var clientID: String
        var redirectURI: String
        var responseType: String
        var scope: String
        var state: String?
        var nonce: String?

        /// The parameters as hidden fields, to come back with the page's form.
        var fields: [(name: String, value: String)] {
            [("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", responseType), ("response_mode", "form_post"),
             ("scope", scope)] + [("state", state), ("nonce", nonce)].compactMap { field in field.1.map { (field.0, $0) } }
        }
    }

    /// The longest parameter or field the page takes, in UTF-8 bytes.
    static let maxParameterBytes = 2048

    func registerAuthorizePage(on router: Router, prefix: String) {
        let path = "\(prefix)/auth/authorize"
        router.get(path, synchronous: { request in
            let authorization = try self.webAuthorization(request.query)
            return Self.html(Self.authorizePage(authorization, action: path))
        })
        router.post(path, synchronous: { request in
            let form = try request.formBody()
            let authorization = try self.webAuthorization(form)
            return Self.html(try self.answer(authorization, form: form), scriptAllowed: true)
        })
    }

    /// Checks the parameters as Apple does: a known client, an http(s) `redirect_uri`,
    /// `code` or `code id_token`, and `form_post` (Apple requires it when scopes are asked for).
    func webAuthorization(_ parameters: [String: String]) throws -> WebAuthorization {
        for (name, value) in parameters where value.utf8.count > Self.maxParameterBytes {
            throw HTTPError.invalidRequest("\(name) is longer than \(Self.maxParameterBytes) bytes")
        }
        guard let clientID = parameters["client_id"], developer.clientIDs.contains(clientID) else {
            throw HTTPError.invalidRequest("client_id must be one of the team's client ids")
        }
        guard let redirectURI = parameters["redirect_uri"],
            redirectURI.lowercased().hasPrefix("https://") || redirectURI.lowercased().hasPrefix("http://")
        else { throw HTTPError.invalidRequest("redirect_uri must be an http or https URL") }
        let responseType = parameters["response_type"] ?? ""
        guard ["code", "code id_token"].contains(responseType) else {
            throw HTTPError.invalidRequest("response_type must be code or code id_token")
        }
        guard parameters["response_mode"] == "form_post" else { throw HTTPError.invalidRequest("response_mode must be form_post") }
        let scope = parameters["scope"] ?? ""
        guard scope.split(separator: " ").allSatisfy({ $0 == "name" || $0 == "email" }) else {
            throw HTTPError.invalidRequest("scope may hold name and email only")
        }
        return WebAuthorization(
            clientID: clientID, redirectURI: redirectURI, responseType: responseType, scope: scope, state: parameters["state"],
            nonce: parameters["nonce"])
    }

    /// The sign-in page: the address to share or hide, the name, Continue and Cancel.
    static func authorizePage(_ authorization: WebAuthorization, action: String) -> HTML {
        let hidden = authorization.fields.map { field -> HTML in "<input type=\"hidden\" name=\"\(field.name)\" value=\"\(field.value)\">\n" }
        return document(
            title: "Sign in with Apple (sandbox)",
            body: """
                <h1>Sign in with Apple</h1>
                <p>The development sandbox plays Apple: no password is asked for. Use your Apple Account with \(authorization.clientID).</p>
                <form method="post" action="\(action)">
                \(hidden)<p><label for="email">Email</label><br>
                <input type="email" id="email" name="email" autocomplete="email" required></p>
                <p><input type="checkbox" id="hide_email" name="hide_email" value="true"> <label for="hide_email">Hide My Email</label></p>
                <p><label for="first_name">First name</label><br>
                <input type="text" id="first_name" name="first_name" autocomplete="given-name"></p>
                <p><label for="last_name">Last name</label><br>
                <input type="text" id="last_name" name="last_name" autocomplete="family-name"></p>
                <p><button type="submit" name="action" value="continue">Continue</button>
                <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></p>
                </form>

                """)
    }

    /// What the page's form gets: the form post to `redirect_uri`.
    func answer(_ authorization: WebAuthorization, form: [String: String]) throws -> HTML {
        var fields: [(name: String, value: String)] = []
        if form["action"] == "cancel" {
            fields.append(("error", "user_cancelled_authorize"))
        } else {
            guard let typed = form["email"]?.lowercased(), typed.utf8.count <= Self.maxParameterBytes, typed.contains("@") else {
                throw HTTPError.invalidRequest("email must be an e-mail address")
            }
            let subject = Self.subject(forEmail: typed)
            let hidden = form["hide_email"] == "true"
            let email = hidden ? Self.relayAddress(for: subject) : typed
            let credential = try authorize(
                Authorization(
                    subject: subject, email: email, isPrivateEmail: hidden, audience: authorization.clientID, nonce: authorization.nonce,
                    redirectURI: authorization.redirectURI))
            fields.append(("code", credential.authorizationCode))
            if authorization.responseType.contains("id_token") { fields.append(("id_token", credential.identityToken)) }
            if credential.isFirstAuthorization, !authorization.scope.isEmpty {
                var user: [String: JSONValue] = [:]
                if authorization.scope.contains("email") { user["email"] = .string(email) }
                if authorization.scope.contains("name") {
                    var name: [String: JSONValue] = [:]
                    if let first = form["first_name"], !first.isEmpty { name["firstName"] = .string(first) }
                    if let last = form["last_name"], !last.isEmpty { name["lastName"] = .string(last) }
                    if !name.isEmpty { user["name"] = .object(name) }
                }
                fields.append(("user", JSONValue.object(user).serializedString))
            }
        }
        if let state = authorization.state { fields.append(("state", state)) }
        let inputs = fields.map { field -> HTML in "<input type=\"hidden\" name=\"\(field.name)\" value=\"\(field.value)\">\n" }
        return Self.document(
            title: "Sign in with Apple (sandbox)",
            body: """
                <h1>Continuing…</h1>
                <form method="post" action="\(authorization.redirectURI)">
                \(inputs)<button type="submit">Continue</button>
                </form>
                <script>\(HTML(stringLiteral: Self.submitScript))</script>

                """)
    }

    /// The one script of the sandbox's pages: it posts the answer at once.
    static let submitScript = "document.forms[0].submit();"

    /// The `sub` of the user with this address: the same address, the same user.
    package static func subject(forEmail email: String) -> String {
        let digest = HashFunction.sha256.hash(Array("sandbox apple user\u{0}\(email)".utf8))
        let hex = digest.prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return "000100.\(hex).0100"
    }

    /// A private relay address for the user, as "Hide My Email" gives.
    static func relayAddress(for subject: String) -> String {
        let digest = HashFunction.sha256.hash(Array("sandbox apple relay\u{0}\(subject)".utf8))
        return digest.prefix(6).map { String($0, radix: 16).leftPadded(to: 2) }.joined() + "@privaterelay.appleid.com"
    }

    private static func document(title: String, body: HTML) -> HTML {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        </head>
        <body>
        <main>
        \(body)</main>
        </body>
        </html>

        """
    }

    /// A page of the sandbox: no framing, no caching, and no script but the submitting one.
    private static func html(_ page: HTML, scriptAllowed: Bool = false) -> HTTPResponse {
        let script = scriptAllowed ? "; script-src 'sha256-\(Base64.encode(HashFunction.sha256.hash(Array(submitScript.utf8)), padded: true))'" : ""
        return HTTPResponse(
            status: 200,
            headers: [
                "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Frame-Options": "DENY",
                "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'" + script,
            ],
            body: Array(page.text.utf8))
    }
}
