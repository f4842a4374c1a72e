import LatchkeyStore
import LatchkeyTestSupport
import Synchronization
import Testing

/// `SQLDatabase.subscribe(to:_:)` on both engines: what caches rely on to hear of other
/// processes' writes.
@Suite("Change feed")
struct ChangeFeedTests {
    /// Subscribes, commits an announced change at once, and waits for the call that must follow.
    /// The wait is generous: the point is that the change is told at all (SQLite polls once a
    /// second), and a loaded test machine can hold the poll back for seconds.
    static func changeRightAfterSubscribing(_ database: any SQLDatabase) async throws -> Bool {
        try await database.write { _ = try $0.execute("CREATE TABLE marks (id INTEGER PRIMARY KEY, note TEXT)", []) }
        let calls = Atomic<Int>(0)
        let subscription = database.subscribe(to: "marks") { calls.add(1, ordering: .relaxed) }
        defer { subscription.cancel() }
        try await database.write { connection in
            _ = try connection.execute("INSERT INTO marks (id, note) VALUES (1, 'changed')", [])
            try connection.announceChange(on: "marks")
        }
        return try await eventually(within: .seconds(20)) { calls.load(ordering: .relaxed) > 0 }
    }

    @Test("SQLite: a change committed right after subscribing, before the first poll, is told")
    func sqliteStartRace() async throws {
        let told = try await withDatabase { database, _ in try await Self.changeRightAfterSubscribing(database) }
        #expect(told)
    }

    @Test("PostgreSQL: a change committed right after subscribing, before the LISTEN took effect, is told")
    func postgresStartRace() async throws {
        let told = try await withPostgreSQL { database, _ in try await Self.changeRightAfterSubscribing(database) }
        #expect(told)
    }
}
