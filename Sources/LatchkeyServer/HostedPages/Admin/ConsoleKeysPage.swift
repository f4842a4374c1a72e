import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE

/// The console's signing keys, and the button that rotates them (admin only, fresh sign-in).
struct ConsoleKeysPage: Sendable {
    var frame: ConsoleFrame
    var keys: [SigningKeyRing.Key]
    var now: Date
    var notice: String?

    func render() -> HTML {
        let rows = keys.map { key -> [HTML] in
            [
                "\(key.id)", "\(key.algorithm.rawValue)", "\(key.state(at: now))", "\(ConsoleFrame.time(key.createdAt))",
                "\(ConsoleFrame.time(key.activatesAt))", "\(ConsoleFrame.time(key.retiresAt))",
            ]
        }
        return frame.document(
            title: "Signing keys", current: "/admin/keys",
            body: """
                \(notice.map { "<p class=\"lead\" role=\"status\">\($0)</p>\n" as HTML } ?? "")\
                \(ConsoleFrame.table(["Key", "Algorithm", "State", "Created", "Signs from", "Retires"], rows, empty: "No signing keys."))
                <p><a class="button small danger" href="/admin/keys/confirm/rotate">Rotate the keys</a></p>
                """)
    }
}
