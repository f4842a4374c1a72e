import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyStore

/// Health, readiness, metrics and the apple-app-site-association file.
struct OperationsRoutes {
    let configuration: Configuration
    let database: any SQLDatabase
    let metrics: Metrics

    func register(on router: Router) {
        let healthy = HTTPResponse.json(["status": "ok"])
        router.get("/healthz", synchronous: { _ in healthy })

        let database = database
        // Not ready while the database does not answer or the latest write failed on the
        // storage (a full disk); ready again once a write succeeds (see SQLiteDatabase.isHealthy).
        router.get("/readyz") { _ in
            guard await database.isHealthy() else {
                throw HTTPError(
                    status: 503, code: "not_ready", description: "the database does not answer or cannot be written",
                    headers: ["Retry-After": String(StoreErrorMiddleware.storageRetryAfter)])
            }
            return .json(["status": "ready"])
        }

        let metrics = metrics
        router.get("/metrics") { _ in
            .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }

        let association = HTTPResponse.json(Self.appSiteAssociation(configuration.associatedDomains))
        router.get("/.well-known/apple-app-site-association", synchronous: { _ in association })
    }

    /// The apple-app-site-association document: `webcredentials` lets the listed apps offer this
    /// domain's saved passwords (Password AutoFill) and end a web sign-in at an https callback on
    /// it; `applinks` lets them open the mailed links, `/email/*`, as universal links (the SDK's
    /// `emailLink(from:)`).
    ///
    /// Only `/email/*`: every other path of the domain is for a browser (the hosted sign-in pages,
    /// `/oauth/authorize` opened from a relying party's site), and a universal link would take
    /// it to the app instead.
    static func appSiteAssociation(_ domains: Configuration.AssociatedDomains) -> JSONValue {
        [
            "webcredentials": ["apps": .array(domains.webcredentials.map(JSONValue.string))],
            "applinks": ["details": .array(domains.applinks.isEmpty ? [] : [
                ["appIDs": .array(domains.applinks.map(JSONValue.string)), "components": [emailLinks]],
            ])],
        ]
    }

    /// The `applinks` component of the mailed links, `{public_url}/email/{purpose}?token=T`.
    static let emailLinks: JSONValue = ["/": "/email/*", "comment": "Latchkey's mailed links: verify, reset, sign-in, change"]
}
