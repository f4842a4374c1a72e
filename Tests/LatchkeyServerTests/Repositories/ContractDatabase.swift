import Foundation
import LatchkeyStore
import Testing

/// A database engine the repository contract runs on. Every contract test takes the engine as
/// its argument, so a new engine (PostgreSQL) joins by adding a case and the way to open it.
enum ContractEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite

    var testDescription: String { rawValue }
}

/// Opens a new, migrated database of `engine`, runs `body` with it, then closes and removes it,
/// whether `body` threw or not.
///
/// `body` sees only `any SQLDatabase`: what the contract proves holds for every engine, not for
/// SQLite's single writer.
func withContractDatabase<T>(_ engine: ContractEngine, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
    switch engine {
    case .sqlite:
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(configuration: .init(path: directory.appendingPathComponent("contract.sqlite").path))
        do {
            try await Migrator.migrate(database)
            let result = try await body(database)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }
}
