import Foundation
import LatchkeyStore
import Testing

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("latchkey-store-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

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
