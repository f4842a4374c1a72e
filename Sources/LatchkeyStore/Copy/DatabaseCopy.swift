/// Copies a Latchkey deployment's data from SQLite to PostgreSQL, for `latchkey db copy`.
///
/// The copy reads the source in one read transaction, so it is one consistent snapshot of a
/// live server: every transaction committed before the snapshot began, none after. It migrates
/// the target to this build's schema, refuses unless both are at the same version with the same
/// tables and columns, and refuses a target that already holds rows (a second run after a
/// first cannot leave the first run's stale rows, say a session since revoked, beside newer
/// ones). It then writes every table in one transaction, parents before children (by the
/// source's foreign keys), sets each identity column's sequence past the highest copied id
/// (`audit_log.id`), and counts the target's rows again after the commit.
///
/// The snapshot is held in memory between the two transactions: a PostgreSQL write may run its
/// body again after a serialization failure, so the body must not consume a stream.
package enum DatabaseCopy {
    /// One table's rows in the source snapshot and in the target after the copy.
    package struct TableCount: Sendable, Equatable {
        /// The table's name.
        package var table: String
        /// Rows in the source snapshot.
        package var source: Int
        /// Rows in the target, counted after the commit.
        package var target: Int
        /// Whether the two agree.
        package var matches: Bool { source == target }
    }

    /// What a copy did.
    package struct Report: Sendable {
        /// The schema version both databases are at.
        package var schemaVersion: Int
        /// Every copied table, in the order it was written.
        package var tables: [TableCount]
        /// Whether every table's counts agree.
        package var allMatch: Bool { tables.allSatisfy(\.matches) }
    }

    /// Copies every row of `source` into `target`.
    ///
    /// - Parameters:
    ///   - source: The SQLite database; it is only read.
    ///   - target: The PostgreSQL database; migrated first, then filled in one transaction.
    ///   - migrations: This build's migrations.
    /// - Returns: The per-table counts, read back from the target after the commit.
    /// - Throws: ``DatabaseCopyError`` when the schemas differ or the target holds rows (nothing
    ///   written but the target's migrations); ``StoreError`` from either database.
    package static func copy(
        from source: SQLiteDatabase, to target: PostgreSQLDatabase, migrations: [Migration] = LatchkeySchema.migrations
    ) async throws -> Report {
        let known = migrations.map(\.version)
        let snapshot = try await source.read { try Snapshot.take(on: $0) }
        guard let sourceVersion = snapshot.versions.max() else {
            throw DatabaseCopyError.schemaMismatch("the source has no schema_migrations table: it is not a Latchkey database")
        }
        guard snapshot.versions == known else {
            let newest = known.last ?? 0
            throw DatabaseCopyError.schemaMismatch(
                sourceVersion > newest
                    ? "the source is at schema version \(sourceVersion), newer than this build knows (\(newest)): run a newer latchkey"
                    : "the source is at schema version \(sourceVersion) and this build's is \(newest): "
                        + "migrate the source first (`latchkey migrate` with this build, or start this build's server on it)")
        }
        try await Migrator.migrate(target, migrations: migrations)
        let targetVersions = try await Migrator.appliedVersions(target)
        guard targetVersions == snapshot.versions else {
            throw DatabaseCopyError.schemaMismatch(
                "the target is at schema version \(targetVersions.max() ?? 0) and the source at \(sourceVersion)")
        }
        let generated = try await target.read { try TargetCatalog.read(on: $0) }.check(against: snapshot)
        try await target.write { connection in
            try fill(connection, with: snapshot, generated: generated)
        }
        let counts = try await target.read { connection in
            try snapshot.tables.map { try count(of: $0.name, on: connection) }
        }
        return Report(
            schemaVersion: sourceVersion,
            tables: zip(snapshot.tables, counts).map { TableCount(table: $0.name, source: $0.rows.count, target: $1) })
    }

    private static func fill(_ connection: any SQLConnection, with snapshot: Snapshot, generated: [String: [String]]) throws {
        // A big table may take longer than a request-sized statement timeout.
        _ = try connection.queryOne("SELECT set_config('statement_timeout', '0', true) AS timeout", [])
        var occupied: [String] = []
        for table in snapshot.tables {
            let rows = try count(of: table.name, on: connection)
            if rows > 0 { occupied.append("\(table.name) (\(rows))") }
        }
        guard occupied.isEmpty else {
            throw DatabaseCopyError.targetNotEmpty(
                "the target already holds rows in \(occupied.joined(separator: ", ")); db copy fills an empty database only, "
                    + "so that a second run cannot leave stale rows beside newer ones. Copy into a new database, "
                    + "or drop and re-create this one")
        }
        for table in snapshot.tables {
            try connection.insertRows(into: table.name, columns: table.columns, table.rows)
        }
        for table in snapshot.tables {
            for column in generated[table.name] ?? [] {
                // The next id the database assigns is one past the highest copied.
                _ = try connection.queryOne(
                    "SELECT setval(pg_get_serial_sequence(?, ?), COALESCE(MAX(\(SQLIdentifier.quoted(column))), 0) + 1, false) AS next FROM \(SQLIdentifier.quoted(table.name))",
                    [.text(SQLIdentifier.quoted(table.name)), .text(column)])
            }
        }
    }

    private static func count(of table: String, on connection: any SQLConnection) throws -> Int {
        Int(try connection.queryOne("SELECT COUNT(*) AS rows FROM \(SQLIdentifier.quoted(table))", [])?.int("rows") ?? 0)
    }
}

extension DatabaseCopy {
    /// One table of the snapshot.
    struct Table: Sendable {
        var name: String
        var columns: [String]
        var rows: [[SQLValue]]
    }

    /// Every row of the source, read in one transaction.
    struct Snapshot: Sendable {
        /// The applied schema versions, in increasing order.
        var versions: [Int]
        /// Every table but `schema_migrations`, parents before the tables that refer to them.
        var tables: [Table]

        static func take(on connection: any SQLConnection) throws -> Snapshot {
            let names = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' ORDER BY name", []
            ).map { try $0.string("name") }
            guard names.contains("schema_migrations") else { return Snapshot(versions: [], tables: []) }
            let versions = try connection.query("SELECT version FROM schema_migrations ORDER BY version", []).map { Int(try $0.int("version")) }
            var columns: [String: [String]] = [:]
            var parents: [String: Set<String>] = [:]
            for name in names where name != "schema_migrations" {
                columns[name] = try connection.query("PRAGMA table_info(\(SQLIdentifier.quoted(name)))", []).map { try $0.string("name") }
                parents[name] = Set(try connection.query("PRAGMA foreign_key_list(\(SQLIdentifier.quoted(name)))", []).map { try $0.string("table") })
                    .subtracting([name])
            }
            var tables: [Table] = []
            for name in try dependencyOrder(parents) {
                let list = columns[name]!
                let rows = try connection.query("SELECT \(list.map(SQLIdentifier.quoted).joined(separator: ", ")) FROM \(SQLIdentifier.quoted(name))", [])
                tables.append(Table(name: name, columns: list, rows: rows.map(\.values)))
            }
            return Snapshot(versions: versions, tables: tables)
        }

        /// The tables ordered so that each comes after every table it refers to; ties by name.
        static func dependencyOrder(_ parents: [String: Set<String>]) throws -> [String] {
            var remaining = parents
            var order: [String] = []
            while !remaining.isEmpty {
                let ready = remaining.filter { $0.value.allSatisfy { order.contains($0) || parents[$0] == nil } }.keys.sorted()
                guard let next = ready.first else {
                    throw DatabaseCopyError(.foreignKeyCycle, "the foreign keys of \(remaining.keys.sorted().joined(separator: ", ")) form a cycle")
                }
                order.append(next)
                remaining[next] = nil
            }
            return order
        }
    }

    /// The target's tables and columns, from PostgreSQL's information schema.
    struct TargetCatalog {
        /// Column names by table.
        var columns: [String: Set<String>]
        /// The columns whose values a sequence assigns (identity or serial), by table.
        var generated: [String: [String]]

        static func read(on connection: any SQLConnection) throws -> TargetCatalog {
            let rows = try connection.query(
                """
                SELECT c.table_name AS table_name, c.column_name AS column_name,
                    (c.is_identity = 'YES' OR COALESCE(c.column_default, '') LIKE 'nextval(%') AS generated
                FROM information_schema.columns c
                JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
                WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
                ORDER BY c.table_name, c.ordinal_position
                """, [])
            var catalog = TargetCatalog(columns: [:], generated: [:])
            for row in rows {
                let table = try row.string("table_name")
                let column = try row.string("column_name")
                catalog.columns[table, default: []].insert(column)
                if try row.bool("generated") { catalog.generated[table, default: []].append(column) }
            }
            return catalog
        }

        /// The generated columns by table, once the target's tables and columns are the source's.
        func check(against snapshot: Snapshot) throws -> [String: [String]] {
            let sourceTables = Set(snapshot.tables.map(\.name))
            let targetTables = Set(columns.keys).subtracting(["schema_migrations"])
            guard sourceTables == targetTables else {
                let onlySource = sourceTables.subtracting(targetTables).sorted()
                let onlyTarget = targetTables.subtracting(sourceTables).sorted()
                throw DatabaseCopyError.schemaMismatch(
                    "the tables differ: only in the source \(onlySource), only in the target \(onlyTarget)")
            }
            for table in snapshot.tables where Set(table.columns) != columns[table.name] {
                throw DatabaseCopyError.schemaMismatch(
                    "the columns of \(table.name) differ: source \(table.columns.sorted()), target \((columns[table.name] ?? []).sorted())")
            }
            return generated
        }
    }
}
