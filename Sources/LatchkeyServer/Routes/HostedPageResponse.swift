import LatchkeyHTTP

extension HTTPHeaders {
    /// The fields of every hosted page and of the redirects after its forms (S23, S29):
    ///
    /// - `Content-Security-Policy`: nothing loads but this server's stylesheet and images; no
    ///   script at all, no framing (`frame-ancestors 'none'`), no `<base>`. There is no
    ///   `form-action`: Chromium applies it to the 303 that follows a form post, which would
    ///   stop the redirect back to the client.
    /// - `X-Frame-Options: DENY`: no framing in browsers that predate `frame-ancestors`.
    /// - `Referrer-Policy: no-referrer`: a page's URL, which carries the authorization request,
    ///   does not leak to the sites it links to.
    /// - `Cache-Control: no-store`: forms with a CSRF token stay out of every cache.
    /// - `X-Content-Type-Options: nosniff`: the declared type is the type.
    static var hostedPageSecurity: HTTPHeaders {
        [
            "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        ]
    }
}

extension HTTPResponse {
    /// A hosted page: `text/html; charset=utf-8` with ``HTTPHeaders/hostedPageSecurity``.
    ///
    /// - Parameters:
    ///   - html: The rendered page.
    ///   - status: The status code; a page that reports an error says so with its status too.
    static func page(_ html: HTML, status: Int = 200) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "text/html; charset=utf-8"]
        headers.add(contentsOf: .hostedPageSecurity)
        return HTTPResponse(status: status, headers: headers, body: Array(html.text.utf8))
    }

    /// 303 See Other to `location` with `query` appended, with ``HTTPHeaders/hostedPageSecurity``:
    /// how every POST of the hosted pages answers, so the browser follows with a `GET`
    /// (RFC 9110 §15.4.4), and how the front channel sends the browser to a client or to Apple.
    ///
    /// - Parameters:
    ///   - location: A path or an absolute URL; a `?` in it means its query has begun (a client's
    ///     registered redirect URI may have one, RFC 6749 §3.1.2), and `query` follows with `&`.
    ///   - query: Parameters to append, in the order given, form-encoded (``FormEncoding/encode(_:)``).
    static func seeOther(_ location: String, query: [(String, String)] = []) -> HTTPResponse {
        let target = query.isEmpty ? location : location + (location.contains("?") ? "&" : "?") + FormEncoding.encode(query)
        var headers: HTTPHeaders = ["Location": target]
        headers.add(contentsOf: .hostedPageSecurity)
        return HTTPResponse(status: 303, headers: headers)
    }
}

extension HTTPResponse {
    /// The form-post response mode's page (``FormPostPage``): the hosted pages' headers, and a
    /// policy that lets exactly the page's own submitting script run.
    static func formPost(to redirectURI: String, _ fields: [HiddenField]) -> HTTPResponse {
        var response = page(FormPostPage(redirectURI: redirectURI, fields: fields).render())
        response.headers.set(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; script-src \(FormPostPage.scriptHash); frame-ancestors 'none'; base-uri 'none'")
        return response
    }
}
