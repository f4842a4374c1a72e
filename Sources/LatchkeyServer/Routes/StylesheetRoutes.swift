import LatchkeyHTTP

/// `GET /oauth/style.css`: the hosted pages' stylesheet, the one file their
/// `Content-Security-Policy` lets them load.
struct StylesheetRoutes {
    /// A day of caching; the text changes only with a new build.
    static let cacheControl = "public, max-age=86400"

    func register(on router: Router) {
        var response = HTTPResponse.text(Stylesheet.text, contentType: "text/css; charset=utf-8")
        response.headers.set("Cache-Control", Self.cacheControl)
        response.headers.set("X-Content-Type-Options", "nosniff")
        let stylesheet = response
        router.get(Stylesheet.path, synchronous: { _ in stylesheet })
    }
}
