import FoundationEssentials
import LatchkeyServer
import LatchkeyStore

/// `latchkey db copy`: moves an SQLite deployment's data into PostgreSQL.
enum DatabaseCopyCommand {
    static let copy = Command(
        path: ["db", "copy"], summary: "Copy an SQLite deployment's data into an empty PostgreSQL database.",
        options: [
            Option(name: "from", valueName: "sqlite:PATH", help: "the SQLite database to read (it is only read)", isRequired: true),
            Option(name: "to", valueName: "URL", help: "the PostgreSQL database to fill: postgres://USER@HOST:PORT/DATABASE", isRequired: true),
            ServeCommands.configOption,
        ],
        details: """
            Reads the SQLite database in one read transaction, a consistent snapshot even while its
            server runs, migrates the PostgreSQL database to this build's schema, and writes every
            table in one transaction, parents first; then counts each table again and exits 1 if any
            count differs. Writes committed to SQLite after the snapshot began are not copied: stop
            the SQLite server (or its writers) for the final copy.

            The PostgreSQL database must be empty: a run into a database that already holds rows is
            refused and changes nothing, so re-running after a failure is safe, and a second copy
            never mixes stale rows with newer ones. Copy again into a new database.

            The password comes from the URL, database_password_file (--config) or
            LATCHKEY_DATABASE_PASSWORD, as for serve, and is never printed. Serve the copy with the
            same master_key_file: the secrets in the rows stay sealed under it.
            """
    ) { arguments in
        let from = arguments[option: "from"] ?? ""
        let to = arguments[option: "to"] ?? ""
        guard from.hasPrefix("sqlite:"), from.count > "sqlite:".count else {
            throw UsageError(message: "--from must be sqlite:PATH")
        }
        guard PostgreSQLURL.isPostgreSQL(to) else {
            throw UsageError(message: "--to must be a postgres:// or postgresql:// URL")
        }
        // The target is the configured database, so its password comes from where serve finds it.
        var environment = ProcessInfo.processInfo.environment
        environment["LATCHKEY_DATABASE"] = to
        let configuration: Configuration
        do {
            configuration = try ConfigurationLoader.load(file: arguments[option: "config"], environment: environment)
        } catch let error as ConfigurationError {
            throw CLIError(error.problems.map { "configuration: \($0)" }.joined(separator: "\nlatchkey: "))
        }
        let path = String(from.dropFirst("sqlite:".count))
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("no SQLite database at \(path)")
        }
        let source = try SQLiteDatabase(configuration: SQLiteDatabase.Configuration(path: path, readers: 1))
        let target: any SQLDatabase
        do {
            target = try await LatchkeyApplication.openDatabase(configuration)
        } catch let error as ConfigurationError {
            await source.close()
            throw CLIError(error.message)
        }
        guard let postgres = target as? PostgreSQLDatabase else {
            await source.close()
            await target.close()
            throw CLIError("--to must be a PostgreSQL database")
        }
        let report: DatabaseCopy.Report
        do {
            report = try await DatabaseCopy.copy(from: source, to: postgres)
            await source.close()
            await postgres.close()
        } catch {
            await source.close()
            await postgres.close()
            if let error = error as? DatabaseCopyError { throw CLIError("db copy: \(error.message)") }
            throw error
        }
        print("copied \(from) to \(configuration.databaseForDisplay) at schema version \(report.schemaVersion)")
        let width = max(5, report.tables.map(\.table.count).max() ?? 0) + 2
        print("  " + "table".padded(to: width) + "source".leftPadded(to: 10) + "target".leftPadded(to: 10))
        for table in report.tables {
            print(
                "  " + table.table.padded(to: width) + String(table.source).leftPadded(to: 10) + String(table.target).leftPadded(to: 10)
                    + (table.matches ? "  ok" : "  DIFFERS"))
        }
        let differing = report.tables.filter { !$0.matches }.map(\.table)
        guard differing.isEmpty else {
            printError("latchkey: db copy: the counts differ in \(differing.joined(separator: ", "))")
            return 1
        }
        print("verified: every table of the \(report.tables.count) holds as many rows as the snapshot; serve it with the same master_key_file")
        return 0
    }
}

extension String {
    /// The text after spaces up to `width` characters, for right-aligned columns.
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
