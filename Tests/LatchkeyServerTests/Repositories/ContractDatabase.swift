import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// A database engine the repository contract runs on. Every contract test takes the engine as
/// its argument, so a new engine (PostgreSQL) joins by adding a case and the way to open it.
enum ContractEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    /// A private cluster started by `scripts/postgres` (``PostgreSQLCluster``); a fresh database
    /// per test, copied from a template migrated once per process.
    case postgres

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
    case .postgres:
        let cluster = try PostgreSQLCluster.shared()
        let template = try await ContractTemplate.shared.name(in: cluster)
        let name = "contract_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try cluster.createDatabase(name, template: template)
        defer { try? cluster.dropDatabase(name) }
        let database = try await PostgreSQLDatabase(
            configuration: .init(url: cluster.url(database: name), password: cluster.password))
        do {
            // Already at the newest version: the template was migrated; this proves it.
            try #require(try await Migrator.migrate(database).isEmpty)
            let result = try await body(database)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }
}

/// The migrated database every contract test's PostgreSQL database is copied from.
actor ContractTemplate {
    static let shared = ContractTemplate()
    private var made: Task<String, any Error>?

    /// The template's name, made on first use; callers arriving meanwhile wait for the same one.
    func name(in cluster: PostgreSQLCluster) async throws -> String {
        if made == nil { made = Task { try await Self.make(in: cluster) } }
        return try await made!.value
    }

    private static func make(in cluster: PostgreSQLCluster) async throws -> String {
        let name = "contract_template"
        try cluster.dropDatabase(name)
        try cluster.createDatabase(name)
        let database = try await PostgreSQLDatabase(configuration: .init(url: cluster.url(database: name), password: cluster.password))
        do {
            try await Migrator.migrate(database)
            await database.close()
        } catch {
            await database.close()
            throw error
        }
        return name
    }
}
