import Foundation
import LatchkeyHTTP
import LatchkeyHTTPClient
@testable import LatchkeyServer
import Testing

/// Test routes that answer with the hosted pages' responses, to read their headers over HTTP.
private struct PageResponseRoutes: RouteMount {
    func register(on router: Router) {
        router.get("/test/page", synchronous: { _ in .page(ErrorPage(title: "Nope", message: "Try again.").render(), status: 400) })
        router.post("/test/see-other", synchronous: { _ in .seeOther("https://app.example.com/callback?code=abc&state=xyz") })
    }
}

@Suite("Hosted pages: markup, escaping, headers, CSRF tokens")
struct HostedPagesTests {
    /// Markup-breaking text: a quote that ends an attribute, a script, an apostrophe and an ampersand.
    static let hostile = #""><script>alert('x')</script>&amp; 'q'"#
    /// `hostile` as the pages must write it.
    static let hostileEscaped = "&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp; &#39;q&#39;"

    static let form = HostedForm(
        action: "/oauth/authorize", csrfToken: "csrf-token-value",
        hidden: [HiddenField(name: "client_id", value: "app"), HiddenField(name: "state", value: "s t&a<t>e")])

    /// Every tag named `name` in `html`, as its attributes (a value-less attribute maps to "").
    static func tags(_ name: String, in html: String) -> [[String: String]] {
        let tag = try! Regex("<\(name)\\b([^>]*)>")
        let attribute = /([a-zA-Z-]+)(?:="([^"]*)")?/
        return html.matches(of: tag).map { match in
            let text = String(match.output[1].substring ?? "")
            var attributes = [String: String]()
            for pair in text.matches(of: attribute) { attributes[String(pair.output.1)] = pair.output.2.map(String.init) ?? "" }
            return attributes
        }
    }

    /// Checks what every page must have: language, landmark, viewport, stylesheet, no script, a
    /// label for every visible input, and (for a form) the CSRF token first among its fields.
    static func expectAccessibleDocument(_ html: String, hasForm: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"), sourceLocation: sourceLocation)
        #expect(html.contains("<main>") && html.contains("</main>"), sourceLocation: sourceLocation)
        #expect(html.contains(#"<meta name="viewport" content="width=device-width, initial-scale=1">"#), sourceLocation: sourceLocation)
        #expect(html.contains(#"<link rel="stylesheet" href="/oauth/style.css">"#), sourceLocation: sourceLocation)
        #expect(!html.lowercased().contains("<script"), sourceLocation: sourceLocation)
        #expect(!html.contains("style="), "no inline style: the CSP admits the stylesheet alone", sourceLocation: sourceLocation)
        let labels = Set(tags("label", in: html).compactMap { $0["for"] })
        for input in tags("input", in: html) where input["type"] != "hidden" {
            let id = input["id"] ?? "(none)"
            #expect(labels.contains(id), "input \(id) has a <label for>", sourceLocation: sourceLocation)
        }
        if hasForm {
            let forms = tags("form", in: html)
            #expect(forms.count == 1 && forms.first?["method"] == "post" && forms.first?["action"] == "/oauth/authorize", sourceLocation: sourceLocation)
            let hidden = tags("input", in: html).filter { $0["type"] == "hidden" }
            #expect(hidden.first?["name"] == "csrf_token" && hidden.first?["value"] == "csrf-token-value", sourceLocation: sourceLocation)
            #expect(hidden.contains { $0["name"] == "client_id" && $0["value"] == "app" }, sourceLocation: sourceLocation)
            #expect(hidden.contains { $0["name"] == "state" && $0["value"] == "s t&amp;a&lt;t&gt;e" }, sourceLocation: sourceLocation)
        }
    }

    @Test("sign-in page: username and current-password AutoFill fields, a submit button, kept username, links, error first")
    func signInPageFields() throws {
        let html = SignInPage(
            clientName: "Notes", form: Self.form, username: "ada", error: "The username or password is wrong.",
            signUpLink: "/oauth/signup?x=1", appleLink: "https://appleid.apple.com/auth/authorize?client_id=web"
        ).render().text
        Self.expectAccessibleDocument(html, hasForm: true)
        let inputs = Self.tags("input", in: html)
        let username = try #require(inputs.first { $0["name"] == "username" })
        #expect(username["autocomplete"] == "username" && username["value"] == "ada" && username["type"] == "text")
        let password = try #require(inputs.first { $0["name"] == "password" })
        #expect(password["type"] == "password" && password["autocomplete"] == "current-password")
        #expect(password["value"] == nil, "a password never comes back")
        #expect(Self.tags("button", in: html).map { $0["type"] } == ["submit"])
        #expect(html.contains("to continue to Notes"))
        #expect(html.contains(#"href="/oauth/signup?x=1""#))
        #expect(html.contains(#"href="https://appleid.apple.com/auth/authorize?client_id=web">Sign in with Apple</a>"#))
        // The error is said in words, announced, and comes before the form (reading and focus order).
        let alert = try #require(html.range(of: #"<p class="alert" role="alert">The username or password is wrong.</p>"#))
        #expect(alert.upperBound <= html.range(of: "<form")!.lowerBound)
        #expect(html.range(of: "id=\"username\"")!.lowerBound < html.range(of: "id=\"password\"")!.lowerBound)
        #expect(!SignInPage(form: Self.form).render().text.contains("role=\"alert\""), "no alert without an error")
    }

    @Test("sign-up page: a new-password field and the kept username")
    func signUpPageFields() throws {
        let html = SignUpPage(clientName: nil, form: Self.form, username: "grace", error: "That username is taken.", signInLink: "/oauth/authorize?a=b")
            .render().text
        Self.expectAccessibleDocument(html, hasForm: true)
        let inputs = Self.tags("input", in: html)
        #expect(inputs.first { $0["name"] == "username" }?["autocomplete"] == "username")
        #expect(inputs.first { $0["name"] == "username" }?["value"] == "grace")
        let password = try #require(inputs.first { $0["name"] == "password" })
        #expect(password["type"] == "password" && password["autocomplete"] == "new-password" && password["value"] == nil)
        #expect(Self.tags("button", in: html).map { $0["type"] } == ["submit"])
        #expect(html.contains(#"role="alert">That username is taken."#))
        #expect(html.contains(#"href="/oauth/authorize?a=b""#))
    }

    @Test("second-factor page: one-time-code with a numeric keypad, and it says a recovery code works there too")
    func secondFactorPageFields() throws {
        let html = SecondFactorPage(form: Self.form, error: "That code is not right.").render().text
        Self.expectAccessibleDocument(html, hasForm: true)
        let code = try #require(Self.tags("input", in: html).first { $0["name"] == "code" })
        #expect(code["autocomplete"] == "one-time-code" && code["inputmode"] == "numeric" && code["type"] == "text")
        #expect(html.contains("A recovery code also works here."))
        #expect(Self.tags("button", in: html).map { $0["type"] } == ["submit"])
        #expect(html.contains(#"role="alert">That code is not right."#))
    }

    @Test("consent page: each scope in words, an unknown one by its name, allow and deny as decision buttons")
    func consentPageFields() throws {
        let html = ConsentPage(clientName: "Notes", scopes: ["openid", "profile", "email", "offline_access", "calendar.read"], form: Self.form)
            .render().text
        Self.expectAccessibleDocument(html, hasForm: true)
        for scope in ["openid", "profile", "email", "offline_access"] {
            #expect(html.contains("<li>\(HTML.escape(ConsentPage.describe(scope)))</li>"))
            #expect(ConsentPage.describe(scope) != scope)
        }
        #expect(html.contains("<li>calendar.read</li>"))
        #expect(html.contains("Allow Notes access?"))
        let buttons = Self.tags("button", in: html)
        #expect(buttons.count == 2)
        #expect(buttons.allSatisfy { $0["type"] == "submit" && $0["name"] == "decision" })
        #expect(buttons.map { $0["value"] } == ["allow", "deny"])
    }

    @Test("signed-out and error pages")
    func signedOutAndErrorPages() {
        let signedOut = SignedOutPage(returnLink: "https://app.example.com/").render().text
        Self.expectAccessibleDocument(signedOut, hasForm: false)
        #expect(signedOut.contains("You are signed out"))
        #expect(signedOut.contains(#"href="https://app.example.com/""#))
        #expect(!SignedOutPage().render().text.contains("<a "))
        let error = ErrorPage(title: "This sign-in link is not valid", message: "The application is not registered.").render().text
        Self.expectAccessibleDocument(error, hasForm: false)
        #expect(error.contains("<title>This sign-in link is not valid</title>"))
        #expect(error.contains("<h1>This sign-in link is not valid</h1>"))
        #expect(error.contains(#"<p role="alert">The application is not registered.</p>"#))
    }

    @Test("S29: hostile text in every field, hidden name and value comes out escaped on every page")
    func hostileInputIsEscapedS29() {
        let hostile = Self.hostile
        let form = HostedForm(action: "/oauth/authorize", csrfToken: hostile, hidden: [HiddenField(name: hostile, value: hostile)])
        let pages: [(String, String, Int)] = [
            ("sign in", SignInPage(clientName: hostile, form: form, username: hostile, error: hostile, signUpLink: "/s?q=" + hostile, appleLink: "https://a.example/?q=" + hostile).render().text, 8),
            ("sign up", SignUpPage(clientName: hostile, form: form, username: hostile, error: hostile, signInLink: "/s?q=" + hostile).render().text, 7),
            ("second factor", SecondFactorPage(form: form, error: hostile).render().text, 4),
            ("consent", ConsentPage(clientName: hostile, scopes: [hostile, "openid"], form: form).render().text, 6),
            ("signed out", SignedOutPage(returnLink: "https://app.example/?q=" + hostile).render().text, 1),
            ("error", ErrorPage(title: hostile, message: hostile).render().text, 3),
        ]
        for (name, html, count) in pages {
            #expect(!html.lowercased().contains("<script"), "\(name)")
            #expect(!html.contains(hostile), "\(name)")
            #expect(html.components(separatedBy: Self.hostileEscaped).count - 1 == count, "\(name): every occurrence escaped")
            #expect(!html.contains("'x'"), "\(name)")
        }
    }

    @Test("S29: a javascript:, data: or scheme-relative link or action is left out, not escaped into the page")
    func unsafeLinksAreDropped() {
        for link in ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,hi", "//evil.example/", "/\\evil.example"] {
            let html = SignInPage(form: HostedForm(action: link, csrfToken: "t"), signUpLink: link, appleLink: link).render().text
            #expect(!html.contains("<a "), "\(link)")
            #expect(html.contains(#"<form method="post" action="">"#), "\(link)")
            #expect(!SignedOutPage(returnLink: link).render().text.contains("href=\"\(link)"))
        }
        #expect(PageLayout.safeURL("/oauth/authorize?x=1") == "/oauth/authorize?x=1")
        #expect(PageLayout.safeURL("https://appleid.apple.com/auth/authorize") != nil)
        #expect(PageLayout.safeURL("http://127.0.0.1:8080/sandbox") != nil)
    }

    @Test("S23: a page and the 303 after a form post carry the CSP without form-action, no framing, no referrer, no-store")
    func pageAndSeeOtherHeadersS23() async throws {
        try await TestServer.with(mounts: [PageResponseRoutes()]) { server in
            let client = EventHTTPClient()
            let page = try await client.send(OutboundRequest(url: URL(string: server.baseURL + "/test/page")!))
            #expect(page.status == 400)
            #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(String(decoding: page.body, as: UTF8.self).contains("<h1>Nope</h1>"))
            let redirect = try await client.send(OutboundRequest(url: URL(string: server.baseURL + "/test/see-other")!, method: .post))
            #expect(redirect.status == 303)
            #expect(redirect.headers["Location"] == "https://app.example.com/callback?code=abc&state=xyz")
            for response in [page, redirect] {
                let policy = try #require(response.headers["Content-Security-Policy"])
                for directive in ["default-src 'none'", "style-src 'self'", "img-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"] {
                    #expect(policy.contains(directive))
                }
                #expect(!policy.contains("form-action"), "Chromium would block the redirect to the client")
                #expect(!policy.contains("script-src"))
                #expect(response.headers["X-Frame-Options"] == "DENY")
                #expect(response.headers["Referrer-Policy"] == "no-referrer")
                #expect(response.headers["Cache-Control"] == "no-store")
                #expect(response.headers["X-Content-Type-Options"] == "nosniff")
            }
        }
    }

    @Test("S23: a 303 appends its query with ? or & (a registered redirect URI may carry one), form-encoded, in order")
    func seeOtherQuery() {
        let plain = HTTPResponse.seeOther("https://app.example/cb", query: [("code", "a&b"), ("state", "s t/é"), ("iss", "https://id.example")])
        #expect(plain.status == 303)
        #expect(plain.headers["Location"] == "https://app.example/cb?code=a%26b&state=s%20t%2F%C3%A9&iss=https%3A%2F%2Fid.example")
        #expect(plain.headers["Cache-Control"] == "no-store")
        #expect(plain.body.isEmpty)
        let existing = HTTPResponse.seeOther("com.example.app:/cb?x=1", query: [("code", "c")])
        #expect(existing.headers["Location"] == "com.example.app:/cb?x=1&code=c")
        #expect(HTTPResponse.seeOther("/oauth/authorize?client_id=app").headers["Location"] == "/oauth/authorize?client_id=app")
    }

    @Test("S23: the stylesheet route serves text/css with a long cache and dark mode")
    func stylesheetRouteS23() async throws {
        try await TestServer.with { server in
            let response = try await server.request(.get, "/oauth/style.css")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "text/css; charset=utf-8")
            #expect(response.headers["Cache-Control"] == "public, max-age=86400")
            #expect(response.headers["X-Content-Type-Options"] == "nosniff")
            #expect(response.text == Stylesheet.text)
            #expect(response.text.contains("prefers-color-scheme: dark"))
            #expect(response.text.contains("min-height: 48px"))
        }
    }

    @Test("S29: a CSRF token verifies for its binding only; another binding, a tampered, empty or foreign token fails")
    func csrfTokensS29() throws {
        let key = try MasterKey(bytes: Array(repeating: 7, count: 32))
        let csrf = CSRFProtection(masterKey: key)
        let token = csrf.token(binding: "bs_session-one")
        #expect(csrf.verify(token, binding: "bs_session-one"))
        #expect(csrf.token(binding: "bs_session-one") == token, "stable for the binding")
        #expect(token.count == 43 && !token.contains("="), "HMAC-SHA256 in unpadded base64url")
        #expect(!csrf.verify(token, binding: "bs_session-two"))
        #expect(!csrf.verify(token, binding: ""))
        #expect(!csrf.verify("", binding: "bs_session-one"))
        #expect(!csrf.verify(csrf.token(binding: ""), binding: ""), "no cookie, no valid token")
        var tampered = Array(token)
        tampered[5] = tampered[5] == "A" ? "B" : "A"
        #expect(!csrf.verify(String(tampered), binding: "bs_session-one"))
        #expect(!csrf.verify(String(token.dropLast()), binding: "bs_session-one"))
        #expect(!csrf.verify(token + "A", binding: "bs_session-one"))
        #expect(!csrf.verify("not base64url!", binding: "bs_session-one"))
        let other = CSRFProtection(masterKey: try MasterKey(bytes: Array(repeating: 8, count: 32)))
        #expect(!other.verify(token, binding: "bs_session-one"), "a token made under another master key")
        #expect(key.derivedKey(label: "latchkey csrf key v1") != key.derivedKey(label: "another purpose"))
    }

    @Test("S29: the session and pre-session cookies are __Host-, Secure, HttpOnly, SameSite=Lax, and clear")
    func browserCookiesS29() throws {
        var response = HTTPResponse.seeOther("/oauth/authorize")
        try response.setBrowserSessionCookie("token-value", maxAge: 86_400)
        try response.setPreSessionCSRFCookie("csrf-value")
        response.clearPreSessionCSRFCookie()
        response.clearBrowserSessionCookie()
        let cookies = response.headers.values("Set-Cookie")
        #expect(cookies == [
            "__Host-latchkey_session=token-value; Path=/; Max-Age=86400; Secure; HttpOnly; SameSite=Lax",
            "__Host-latchkey_csrf=csrf-value; Path=/; Secure; HttpOnly; SameSite=Lax",
            "__Host-latchkey_csrf=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure; HttpOnly; SameSite=Lax",
            "__Host-latchkey_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure; HttpOnly; SameSite=Lax",
        ])
        #expect(throws: CookieError.self) { try response.setBrowserSessionCookie("bad; Domain=evil.example", maxAge: 1) }
        let value = BrowserCookies.newCSRFValue()
        #expect(value.count == 43 && value != BrowserCookies.newCSRFValue())
        let request = HTTPRequest(
            method: .get, path: "/oauth/authorize",
            headers: ["Cookie": "__Host-latchkey_session=abc; other=1; __Host-latchkey_csrf=def"])
        #expect(request.browserSessionToken == "abc")
        #expect(request.preSessionCSRFValue == "def")
        let empty = HTTPRequest(method: .get, path: "/", headers: ["Cookie": "__Host-latchkey_session="])
        #expect(empty.browserSessionToken == nil && empty.preSessionCSRFValue == nil)
    }
}
