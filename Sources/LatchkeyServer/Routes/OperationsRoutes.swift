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
    /// domain's saved passwords (Password AutoFill); `applinks` lets them open its https links,
    /// which is how an https redirect returns to the app.
    static func appSiteAssociation(_ domains: Configuration.AssociatedDomains) -> JSONValue {
        [
            "webcredentials": ["apps": .array(domains.webcredentials.map(JSONValue.string))],
            "applinks": ["details": .array(domains.applinks.isEmpty ? [] : [
                ["appIDs": .array(domains.applinks.map(JSONValue.string)), "components": [["/": "/*"]]],
            ])],
        ]
    }
}
