/// A running watch on one change channel of a database (``SQLDatabase/subscribe(to:_:)``);
/// ``cancel()`` stops it.
///
/// The channel is engine-neutral: a writer announces a change inside its transaction with
/// ``SQLConnection/announceChange(on:)``, and every process subscribed to the channel hears of
/// it after the commit. PostgreSQL delivers it with `NOTIFY`/`LISTEN` on a connection of its
/// own; SQLite has no such signal, so its subscriptions poll `PRAGMA data_version` and fire on
/// any committed change to the file, from any process.
package struct SQLChangeSubscription: Sendable {
    private let stop: @Sendable () -> Void

    /// Creates a subscription that `stop` ends.
    ///
    /// - Parameter stop: Ends the watch; called once or more, it must be idempotent.
    package init(stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// Stops the watch; the callback may still run once if a change was being delivered.
    package func cancel() { stop() }

    /// Whether `channel` is a name every engine takes as it is: lower-case ASCII letters,
    /// digits and `_`, starting with a letter, at most 63 bytes (PostgreSQL's identifier limit).
    ///
    /// - Parameter channel: The name.
    /// - Returns: `true` when it is valid.
    package static func isValidChannel(_ channel: String) -> Bool {
        let bytes = Array(channel.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), bytes.count <= 63 else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }
}
