import FoundationEssentials
import LatchkeyServer
import LatchkeyStore

/// `latchkey backup`: a consistent copy of the database while the server keeps serving.
enum BackupCommand {
    static let backup = Command(
        path: ["backup"], summary: "Copy the database to a new file, consistent while the server runs.",
        options: [
            ServeCommands.configOption,
            Option(name: "to", valueName: "FILE", help: "where to write the backup", isRequired: true),
            Option(name: "force", valueName: nil, help: "replace FILE if it exists"),
        ],
        details: """
            Uses SQLite's online backup: the copy is one snapshot holding every transaction
            committed before it began, taken without stopping the server or blocking its writes.
            FILE is written under a temporary name, flushed to disk and then moved into place with
            mode 0600, so it is whole or absent. The backup holds sealed secrets but not the master
            key: keep a copy of the master key elsewhere, or the backup cannot be used. Restoring
            is described in docs/deployment.md.
            """
    ) { arguments in
        let configuration = try ServeCommands.loadConfiguration(arguments, dev: false)
        guard !configuration.usesPostgreSQL else {
            printError("latchkey: backup copies an SQLite database; back up PostgreSQL with pg_dump or the server's own backups")
            return 1
        }
        try ServeCommands.checkServerData(configuration, forOperator: true)
        let destination = arguments[option: "to"] ?? ""
        let replacing = arguments.flags.contains("force")
        guard replacing || !FileManager.default.fileExists(atPath: destination) else {
            printError("latchkey: \(destination) exists; pass --force to replace it")
            return 1
        }
        let result: SQLiteBackup.Result
        do {
            result = try SQLiteBackup.copy(from: configuration.sqlitePath, to: destination, replacing: replacing)
        } catch let error as StoreError {
            printError("latchkey: \(error.message)")
            return 1
        }
        print("backed up \(configuration.sqlitePath) to \(destination): \(result.pages) pages, \(result.bytes) bytes")
        return 0
    }
}
