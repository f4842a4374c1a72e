import Foundation
import LatchkeyStore
import LatchkeyTestSupport

/// Creates a new database in `cluster` (the process's shared cluster by default), opens it with
/// the settings `configure` makes, runs `body`, then closes and drops it, whether `body` threw
/// or not. A cluster that cannot start fails the test.
func withPostgreSQL<T>(
    cluster: PostgreSQLCluster? = nil, migrated: Bool = false,
    configure: (inout PostgreSQLDatabase.Configuration) -> Void = { _ in },
    _ body: (PostgreSQLDatabase, PostgreSQLDatabase.Configuration) async throws -> T
) async throws -> T {
    let cluster = try cluster ?? PostgreSQLCluster.shared()
    let name = "store_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    try cluster.createDatabase(name)
    defer { try? cluster.dropDatabase(name) }
    var configuration = PostgreSQLDatabase.Configuration(url: cluster.url(database: name), password: cluster.password)
    configure(&configuration)
    let database = try await PostgreSQLDatabase(configuration: configuration)
    do {
        if migrated { try await Migrator.migrate(database) }
        let result = try await body(database, configuration)
        await database.close()
        return result
    } catch {
        await database.close()
        throw error
    }
}
