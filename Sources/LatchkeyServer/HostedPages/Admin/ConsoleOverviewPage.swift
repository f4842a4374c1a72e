import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE

/// The console's overview: the counts of `GET /v1/admin/stats` and the sign-ins of the last
/// 24 hours as a chart.
struct ConsoleOverviewPage: Sendable {
    var frame: ConsoleFrame
    var stats: AdminStats
    var chart: SignInChart
    var databaseEngine: String
    var keys: [SigningKeyRing.Key]
    var now: Date

    func render() -> HTML {
        let counts: [(String, String)] = [
            ("Accounts", "\(stats.accounts)"), ("Live sessions", "\(stats.liveSessions)"), ("Database", databaseEngine),
        ] + stats.outboxDepths.sorted { $0.key < $1.key }.map { ("Outbox: \($0.key)", "\($0.value)") }
        let facts = counts.map { name, value -> HTML in "<dt>\(name)</dt><dd>\(value)</dd>\n" }
        let events = stats.events.sorted { $0.key < $1.key }.flatMap { event, outcomes in
            outcomes.sorted { $0.key < $1.key }.map { outcome, count -> [HTML] in ["\(event)", "\(outcome)", "\(count)"] }
        }
        let keyRows = keys.map { key -> [HTML] in
            ["\(key.id)", "\(key.algorithm.rawValue)", "\(key.state(at: now))", "\(ConsoleFrame.time(key.createdAt))"]
        }
        return frame.document(
            title: "Overview", current: "/admin",
            body: """
                <dl class="facts">
                \(facts)</dl>
                <h2>Sign-ins, last 24 hours</h2>
                \(chart.render())
                <h2>Events, last 24 hours</h2>
                \(ConsoleFrame.table(["Event", "Outcome", "Count"], events, empty: "Nothing happened in the last 24 hours."))
                <h2>Signing keys</h2>
                \(ConsoleFrame.table(["Key", "Algorithm", "State", "Created"], keyRows, empty: "No signing keys."))
                """)
    }
}
