import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// Opens a database on a new file in a new temporary directory, runs `body`, then closes the
/// database and removes the directory, whether `body` threw or not.
func withDatabase<T>(
    readers: Int = 2, statementCacheSize: Int = 64, busyTimeout: Duration = .seconds(5), migrated: Bool = false,
    durability: SQLiteDatabase.Durability = .full, _ body: (SQLiteDatabase, TemporaryDirectory) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try SQLiteDatabase(
        configuration: .init(
            path: directory.file("test.sqlite"), readers: readers, busyTimeout: busyTimeout,
            statementCacheSize: statementCacheSize, durability: durability))
    do {
        if migrated { try await Migrator.migrate(database) }
        let result = try await body(database, directory)
        await database.close()
        return result
    } catch {
        await database.close()
        throw error
    }
}

/// A table with one column of each kind, for tests that need no real schema.
func createScratchTable(_ database: any SQLDatabase) async throws {
    try await database.write { connection in
        try connection.execute(
            "CREATE TABLE scratch (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB, number REAL, note TEXT)", [])
    }
}

/// How many rows `table` has, read through a reader.
func count(_ table: String, in database: any SQLDatabase) async throws -> Int64 {
    try await database.read { try $0.queryOne("SELECT count(*) AS n FROM \(table)", [])!.int("n") }
}

extension StoreError.Code {
    /// Whether `error` is a ``StoreError`` with this code.
    func matches(_ error: any Error) -> Bool {
        (error as? StoreError)?.code == self
    }
}

/// A write that stays inside its transaction until released, holding the database's writer (and,
/// once it has written, SQLite's lock): for tests of what other work does meanwhile.
struct HeldWrite: Sendable {
    private let semaphore: DispatchSemaphore
    private let task: Task<Bool, any Error>

    /// Starts a write on `database` that runs `body` and then waits for ``release()``, ten seconds
    /// at most, so a test that fails cannot hang; returns once `body` has run.
    init(on database: any SQLDatabase, _ body: @escaping @Sendable (any SQLConnection) throws -> Void = { _ in }) async {
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let semaphore = DispatchSemaphore(value: 0)
        self.semaphore = semaphore
        task = Task {
            try await database.write { connection -> Bool in
                try body(connection)
                enteredContinuation.yield()
                return semaphore.wait(timeout: .now() + 10) == .success
            }
        }
        for await _ in entered { break }
    }

    /// Lets the write commit.
    ///
    /// - Returns: Whether it was released by this call rather than by its timeout.
    func release() async throws -> Bool {
        semaphore.signal()
        return try await task.value
    }
}
