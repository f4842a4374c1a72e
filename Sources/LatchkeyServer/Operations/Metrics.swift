import Synchronization

/// Counters, gauges and histograms, rendered as Prometheus text (`GET /metrics`).
///
/// Label values are route patterns, methods, statuses and outcomes: never user input that could
/// carry a secret or grow without bound (docs/security.md S26).
package final class Metrics: Sendable {
    /// A metric family: its name, kind and help line.
    package struct Family: Sendable, Hashable {
        package enum Kind: String, Sendable { case counter, gauge, histogram }
        package var name: String
        package var kind: Kind
        package var help: String

        package static let httpRequests = Family(name: "latchkey_http_requests_total", kind: .counter, help: "HTTP requests by method, route and status.")
        package static let httpDuration = Family(name: "latchkey_http_request_duration_seconds", kind: .histogram, help: "HTTP request latency by route.")
        package static let httpConnections = Family(name: "latchkey_http_connections", kind: .gauge, help: "Open HTTP connections.")
        package static let signIns = Family(name: "latchkey_sign_ins_total", kind: .counter, help: "Sign-ins by method and outcome.")
        package static let refreshReuse = Family(name: "latchkey_refresh_token_reuse_total", kind: .counter, help: "Retired refresh tokens presented again (sessions revoked).")
        package static let refreshReplays = Family(
            name: "latchkey_refresh_token_replays_total", kind: .counter,
            help: "Retired refresh tokens presented again within the reuse grace, answered with their unused successor.")
        package static let rateLimitHits = Family(name: "latchkey_rate_limit_hits_total", kind: .counter, help: "Requests refused by a rate limit, by scope.")
        package static let queueDepth = Family(name: "latchkey_queue_depth", kind: .gauge, help: "Jobs waiting in a bounded work queue.")
        package static let secondFactors = Family(
            name: "latchkey_second_factor_checks_total", kind: .counter, help: "Second-factor proofs checked, by factor, use and outcome.")
        package static let passkeyRegistrations = Family(
            name: "latchkey_passkey_registrations_total", kind: .counter, help: "Passkey registrations answered, by outcome.")
        /// Labelled `operation` (`attest`, `assert`) and `outcome` (`success`, `failure`).
        package static let appAttest = Family(
            name: "latchkey_app_attest_total", kind: .counter, help: "App Attest attestations and assertions answered, by operation and outcome.")
        /// Labelled `endpoint` (`signup`, `sign_in`, `token`) and `outcome` (`passed`, `refused`, `logged`).
        package static let appChecks = Family(
            name: "latchkey_app_checks_total", kind: .counter, help: "App check tokens checked on enforced endpoints, by endpoint and outcome.")

        package static let jwksKeysSkipped = Family(
            name: "latchkey_jwks_keys_skipped_total", kind: .counter,
            help: "Keys in a fetched JWK Set skipped as unusable, by source and reason (counted at every fetch).")

        /// Labelled `job` with a name of ``BackgroundJob``, a closed set.
        package static let backgroundFailures = Family(
            name: "latchkey_background_failures_total", kind: .counter, help: "Failed passes of a periodic background job, by job.")

        /// Labelled `purpose` (a template: `verify`, `reset`, `sign-in`, `change`, `change_notice`)
        /// and `outcome` (`sent`, `deferred`, `bounced`): `deferred` counts the failed attempts that will be retried.
        package static let emailMessages = Family(
            name: "latchkey_email_messages_total", kind: .counter, help: "Attempts to deliver mail from the outbox, by purpose and outcome.")

        /// 1 while the SMTP server of `email.smtp_url` takes mail, 0 during an outage.
        package static let smtpUp = Family(
            name: "latchkey_email_smtp_up", kind: .gauge, help: "Whether the SMTP server answered the last delivery (1) or is in an outage (0).")

        static let all: [Family] = [
            httpRequests, httpDuration, httpConnections, signIns, refreshReuse, refreshReplays, rateLimitHits, queueDepth, secondFactors, passkeyRegistrations,
            appAttest, appChecks, jwksKeysSkipped,
            backgroundFailures, emailMessages, smtpUp,
        ]
    }

    /// Histogram bucket bounds in seconds, from 100 µs to 10 s.
    static let buckets: [Double] = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    private struct Series: Hashable {
        var family: String
        var labels: String  // rendered `{a="b",c="d"}` or ""
    }

    private struct Histogram {
        var counts = [UInt64](repeating: 0, count: Metrics.buckets.count)
        var sum = 0.0
        var count: UInt64 = 0

        mutating func record(bucket: Int?, value: Double) {
            if let bucket { counts[bucket] += 1 }
            sum += value
            count += 1
        }

        mutating func add(_ other: Histogram) {
            for index in counts.indices { counts[index] += other.counts[index] }
            sum += other.sum
            count += other.count
        }
    }

    private struct State {
        var values: [Series: Double] = [:]
        var histograms: [Series: Histogram] = [:]
    }

    /// Per-request figures, keyed without building label strings: this is the hot path, taken
    /// once for every request; labels are rendered only when `/metrics` is read.
    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private let state = Mutex(State())
    private let requests = Mutex<[RequestKey: Histogram]>([:])
    private let gauges = Mutex<[Series: @Sendable () -> Double]>([:])

    package init() {}

    /// Counts one answered request and its latency (`latchkey_http_requests_total` and
    /// `latchkey_http_request_duration_seconds`).
    ///
    /// A method other than those of RFC 9110 §9 and `PATCH` is counted as `other`: the router
    /// answers any token of up to 32 characters (405), and each one kept as a label would be a
    /// series that is never freed. Routes are patterns from the router's fixed table or
    /// `unmatched`, and statuses are set by the server's own code, so neither can grow with what
    /// clients send (S26).
    package func recordRequest(method: String, route: String, status: Int, seconds: Double) {
        let key = RequestKey(method: Self.methodLabel(method), route: route, status: status)
        let bucket = Self.buckets.firstIndex { seconds <= $0 }
        requests.withLock { requests in
            requests[key, default: Histogram()].record(bucket: bucket, value: seconds)
        }
    }

    /// Adds to a counter.
    package func increment(_ family: Family, _ labels: KeyValuePairs<String, String> = [:], by amount: Double = 1) {
        let series = Series(family: family.name, labels: Self.render(labels))
        state.withLock { $0.values[series, default: 0] += amount }
    }

    /// Records one observation in a histogram.
    package func observe(_ family: Family, _ labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        let series = Series(family: family.name, labels: Self.render(labels))
        let bucket = Self.buckets.firstIndex { value <= $0 }
        state.withLock { $0.histograms[series, default: Histogram()].record(bucket: bucket, value: value) }
    }

    /// Registers a gauge read when metrics are rendered (queue depths, open connections).
    package func gauge(_ family: Family, _ labels: KeyValuePairs<String, String> = [:], _ read: @escaping @Sendable () -> Double) {
        let series = Series(family: family.name, labels: Self.render(labels))
        gauges.withLock { $0[series] = read }
    }

    /// The current value of a counter or gauge series recorded through ``increment(_:_:by:)`` or
    /// ``gauge(_:_:_:)``; request counts are read through ``render()``.
    package func value(_ family: Family, _ labels: KeyValuePairs<String, String> = [:]) -> Double {
        let series = Series(family: family.name, labels: Self.render(labels))
        if let read = gauges.withLock({ $0[series] }) { return read() }
        return state.withLock { $0.values[series] ?? 0 }
    }

    /// Everything in the Prometheus text exposition format (version 0.0.4).
    package func render() -> String {
        var snapshot = state.withLock { $0 }
        for (key, histogram) in requests.withLock({ $0 }) {
            let counter = Series(family: Family.httpRequests.name, labels: Self.render(["method": key.method, "route": key.route, "status": String(key.status)]))
            snapshot.values[counter, default: 0] += Double(histogram.count)
            snapshot.histograms[Series(family: Family.httpDuration.name, labels: Self.render(["route": key.route])), default: Histogram()].add(histogram)
        }
        let readers = gauges.withLock { $0 }
        var output = ""
        for family in Family.all {
            output += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.kind.rawValue)\n"
            switch family.kind {
            case .counter:
                for (series, value) in snapshot.values.filter({ $0.key.family == family.name }).sorted(by: { $0.key.labels < $1.key.labels }) {
                    output += "\(family.name)\(series.labels) \(Self.format(value))\n"
                }
            case .gauge:
                for (series, read) in readers.filter({ $0.key.family == family.name }).sorted(by: { $0.key.labels < $1.key.labels }) {
                    output += "\(family.name)\(series.labels) \(Self.format(read()))\n"
                }
            case .histogram:
                for (series, histogram) in snapshot.histograms.filter({ $0.key.family == family.name }).sorted(by: { $0.key.labels < $1.key.labels }) {
                    var cumulative: UInt64 = 0
                    for (bound, count) in zip(Self.buckets, histogram.counts) {
                        cumulative += count
                        output += "\(family.name)_bucket\(Self.adding("le", Self.format(bound), to: series.labels)) \(cumulative)\n"
                    }
                    output += "\(family.name)_bucket\(Self.adding("le", "+Inf", to: series.labels)) \(histogram.count)\n"
                    output += "\(family.name)_sum\(series.labels) \(Self.format(histogram.sum))\n"
                    output += "\(family.name)_count\(series.labels) \(histogram.count)\n"
                }
            }
        }
        return output
    }

    /// The method itself when RFC 9110 §9 or RFC 5789 (`PATCH`) defines it, else `other`; returns
    /// a literal or the argument, so the hot path allocates nothing.
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE": method
        default: "other"
        }
    }

    private static func render(_ labels: KeyValuePairs<String, String>) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.key)=\"\(escape($0.value))\"" }.joined(separator: ",") + "}"
    }

    private static func adding(_ name: String, _ value: String, to labels: String) -> String {
        labels.isEmpty ? "{\(name)=\"\(value)\"}" : String(labels.dropLast()) + ",\(name)=\"\(value)\"}"
    }

    private static func escape(_ value: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += ["\\", "\\"]
            case "\"": escaped += ["\\", "\""]
            case "\n": escaped += ["\\", "n"]
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    private static func format(_ value: Double) -> String {
        if let integer = Int64(exactly: value) { return String(integer) }
        return String(value)
    }
}
