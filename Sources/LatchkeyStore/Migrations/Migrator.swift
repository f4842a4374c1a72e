package import FoundationEssentials

/// Applies ``Migration``s in order and records them in `schema_migrations`.
///
/// Each migration runs in its own write transaction together with the row that records it, so
/// a failure leaves the database at the previous version. The check for "already applied" is
/// repeated inside that transaction, so two processes migrating at once (a server starting
/// while `latchkey migrate` runs) apply each migration exactly once.
package enum Migrator {
    /// Applies every migration the database does not have yet, in version order.
    ///
    /// - Parameters:
    ///   - database: The database.
    ///   - migrations: The known migrations, in increasing version order.
    ///   - now: The time recorded as `applied_at`.
    /// - Returns: The migrations applied by this call; empty when the database was current.
    /// - Throws: ``StoreError/Code/schema`` when the database has a version newer than any
    ///   known here (an older build must not write to a newer schema);
    ///   ``StoreError/Code/misuse`` when `migrations` is out of order; the error of a failing
    ///   migration, after which the earlier ones stay applied.
    @discardableResult
    package static func migrate(
        _ database: any SQLDatabase, migrations: [Migration] = LatchkeySchema.migrations, now: Date = Date()
    ) async throws -> [Migration] {
        try validate(migrations)
        // Instances starting together on one PostgreSQL take turns (pg_advisory_lock); a
        // concurrent CREATE TABLE IF NOT EXISTS there can fail instead of skipping.
        return try await database.withExclusiveLock("latchkey.migrations") {
            try await migrateLocked(database, migrations: migrations, now: now)
        }
    }

    private static func migrateLocked(_ database: any SQLDatabase, migrations: [Migration], now: Date) async throws -> [Migration] {
        let dialect = database.dialect
        let newestKnown = migrations.last?.version ?? 0
        let applied = try await database.write { connection in
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version \(dialect.bigIntegerType) PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    applied_at \(dialect.bigIntegerType) NOT NULL
                )
                """)
            return try Set(appliedVersions(on: connection))
        }
        if let newest = applied.max(), newest > newestKnown {
            throw StoreError.schema(
                "the database is at schema version \(newest), newer than this build knows (\(newestKnown)); "
                    + "run a newer latchkey")
        }
        var appliedNow: [Migration] = []
        for migration in migrations where !applied.contains(migration.version) {
            let ran = try await database.write { connection in
                let recorded = try connection.queryOne(
                    "SELECT version FROM schema_migrations WHERE version = ?", [.integer(Int64(migration.version))])
                guard recorded == nil else { return false }
                if dialect == .postgreSQL {
                    // A migration may rewrite a big table: no request-sized statement timeout.
                    _ = try connection.queryOne("SELECT set_config('statement_timeout', '0', true) AS timeout", [])
                }
                for statement in migration.statements(dialect) {
                    try connection.execute(statement, [])
                }
                try connection.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name), .time(now)])
                return true
            }
            if ran { appliedNow.append(migration) }
        }
        return appliedNow
    }

    /// The versions recorded in `schema_migrations`, in increasing order; empty for a database
    /// never migrated.
    ///
    /// - Parameter database: The database.
    /// - Returns: The applied versions.
    /// - Throws: ``StoreError``.
    package static func appliedVersions(_ database: any SQLDatabase) async throws -> [Int] {
        do {
            return try await database.read { try appliedVersions(on: $0) }
        } catch let error as StoreError where error.code == .schema {
            // No schema_migrations table yet: nothing applied. Reading must not create it.
            return []
        }
    }

    private static func appliedVersions(on connection: any SQLConnection) throws -> [Int] {
        try connection.query("SELECT version FROM schema_migrations ORDER BY version", []).map { Int(try $0.int("version")) }
    }

    private static func validate(_ migrations: [Migration]) throws {
        var previous = 0
        for migration in migrations {
            guard migration.version > previous else {
                throw StoreError.misuse(
                    "migration versions must start at 1 and increase; \(migration.version) follows \(previous)")
            }
            previous = migration.version
        }
    }
}
