internal import CLatchkeySQLite

#if canImport(Glibc)
private import Glibc
#elseif canImport(Musl)
private import Musl
#elseif canImport(Darwin)
private import Darwin
#endif

/// A copy of an SQLite database file taken with SQLite's online backup API
/// (`sqlite3_backup_init`, `_step`, `_finish`), safe while a server writes to it.
///
/// The copy is one snapshot: every page is copied in a single step, inside one read
/// transaction on the source. In WAL mode a reader never blocks the writer, so the server keeps
/// committing while the copy runs, and the copy holds exactly the transactions committed before
/// it began. (Copying in several steps would let another process's commit restart the copy
/// from the first page, again and again under steady traffic.)
///
/// The file appears whole or not at all: the copy is written to a temporary file beside the
/// destination, created with mode 0600 (the database holds sealed secrets and password hashes),
/// flushed with `fsync`, then moved into place, and the directory is flushed too.
package enum SQLiteBackup {
    /// What a finished backup wrote.
    package struct Result: Sendable, Hashable {
        /// The database pages copied.
        package var pages: Int
        /// The size of the backup file in bytes.
        package var bytes: Int
    }

    /// Copies the database at `source` to a new file at `destination`.
    ///
    /// Blocks the calling thread for as long as the copy takes (about the time to read the
    /// file); call it from a command-line tool or a thread that may block, never from an
    /// event loop.
    ///
    /// - Parameters:
    ///   - source: The database file; it must exist. Its `-wal` file, if any, is read too.
    ///   - destination: The backup's path; its directory must exist.
    ///   - replacing: Whether an existing file at `destination` may be replaced.
    ///   - busyTimeout: How long to wait when another process holds a lock the copy needs
    ///     (only while a WAL is being recovered or reset).
    /// - Returns: The pages and bytes written.
    /// - Throws: ``StoreError``: ``StoreError/Code/io`` when a file cannot be opened, written or
    ///   moved, or `destination` exists and `replacing` is `false` (nothing is written then);
    ///   ``StoreError/Code/busy`` when a lock stayed taken for the whole timeout;
    ///   ``StoreError/Code/corrupt`` when the source is not a database.
    @discardableResult
    package static func copy(
        from source: String, to destination: String, replacing: Bool = false, busyTimeout: Duration = .seconds(5)
    ) throws -> Result {
        guard replacing || access(destination, F_OK) != 0 else {
            throw StoreError.io("backup: \(destination) already exists; it was not replaced")
        }
        guard access(source, F_OK) == 0 else { throw StoreError.io("backup: no database at \(source)") }
        let temporary = destination + ".partial-\(getpid())"
        do {
            try createPrivateFile(temporary)
            let pages = try copyPages(from: source, to: temporary, busyTimeout: busyTimeout)
            try flush(temporary)
            try moveIntoPlace(temporary, destination, replacing: replacing)
            var status = stat()
            guard stat(destination, &status) == 0 else { throw posixError("stat \(destination)") }
            return Result(pages: pages, bytes: Int(status.st_size))
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Runs the backup from `source` into the empty file at `temporary`; returns the page count.
    private static func copyPages(from source: String, to temporary: String, busyTimeout: Duration) throws -> Int {
        // Read-write without create: a read-only connection to a WAL database needs the `-shm`
        // file to exist already, which it does not while no server runs. The connection only reads.
        let from = try openConnection(source, flags: SQLITE_OPEN_READWRITE)
        defer { sqlite3_close_v2(from) }
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(from, Int32(clamping: milliseconds))
        let into = try openConnection(temporary, flags: SQLITE_OPEN_READWRITE)
        defer { sqlite3_close_v2(into) }
        // The file is renamed into place only after the copy completed and was flushed, so the
        // destination needs no journal of its own: a failed copy is simply deleted.
        for pragma in ["PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF"] {
            let code = sqlite3_exec(into, pragma, nil, nil, nil)
            guard code == SQLITE_OK else { throw SQLiteResult.error(code, handle: into, context: "backup: \(pragma)") }
        }
        guard let backup = sqlite3_backup_init(into, "main", from, "main") else {
            throw SQLiteResult.error(sqlite3_extended_errcode(into), handle: into, context: "backup: start")
        }
        let deadline = ContinuousClock.now + busyTimeout
        var code: Int32
        repeat {
            // -1: every page in one step, so in one read transaction: one consistent snapshot.
            code = sqlite3_backup_step(backup, -1)
            if code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED {
                guard ContinuousClock.now < deadline else { break }
                Platform.sleep(microseconds: 10_000)
            }
        } while code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED
        let pages = Int(sqlite3_backup_pagecount(backup))
        sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw SQLiteResult.error(code, handle: nil, context: "backup: copy \(source)")
        }
        return pages
    }

    private static func openConnection(_ path: String, flags: Int32) throws -> OpaquePointer {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteResult.error(code, handle: handle, context: "backup: open \(path)")
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        return handle
    }

    /// An empty file only its owner can read: SQLite would create it with 0644 less the umask.
    private static func createPrivateFile(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw posixError("create \(path)") }
        close(descriptor)
    }

    private static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw posixError("open \(path)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw posixError("fsync \(path)") }
    }

    /// `rename` when replacing; otherwise `link`, which refuses an existing destination
    /// atomically (one created after the check at the start is not overwritten either).
    private static func moveIntoPlace(_ temporary: String, _ destination: String, replacing: Bool) throws {
        if replacing {
            guard rename(temporary, destination) == 0 else { throw posixError("rename to \(destination)") }
        } else {
            guard link(temporary, destination) == 0 else {
                if errno == EEXIST { throw StoreError.io("backup: \(destination) already exists; it was not replaced") }
                throw posixError("link \(destination)")
            }
            unlink(temporary)
        }
        // The new directory entry is durable only once the directory itself is flushed.
        let directory = destination.contains("/") ? String(destination[..<destination.lastIndex(of: "/")!]) : "."
        try flush(directory.isEmpty ? "/" : directory)
    }

    private static func posixError(_ context: String) -> StoreError {
        StoreError.io("backup: \(context): \(String(cString: strerror(errno)))")
    }
}
