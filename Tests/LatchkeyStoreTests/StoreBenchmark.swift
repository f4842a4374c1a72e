import Foundation
import LatchkeyTestSupport
import LatchkeyStore
import Testing

/// Operations per second through the store's API against the same loop in C.
///
/// Off by default; run it in release, where the figures mean something:
///
///     LATCHKEY_STORE_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter StoreBenchmark
///
/// (`-enable-testing` because other test targets use `@testable import`.)
///
/// The C loop (below) is compiled with `cc -O2 … -lsqlite3` and run on its own file in the same
/// directory, with the same pragmas, schema and statements; it runs each operation on the
/// calling thread, so the difference is the cost of the store: the hop to its thread and back,
/// `SQLValue` boxing, and the `BEGIN`/`COMMIT` around each read.
@Suite("StoreBenchmark", .enabled(if: ProcessInfo.processInfo.environment["LATCHKEY_STORE_BENCH"] == "1"))
struct StoreBenchmark {
    static let inserts = 20_000
    static let selects = 100_000
    static let tasks = 8
    static let schema =
        "CREATE TABLE bench (id TEXT PRIMARY KEY NOT NULL, user_id TEXT NOT NULL, created_at INTEGER NOT NULL, data BLOB NOT NULL)"
    static let insert = "INSERT INTO bench (id, user_id, created_at, data) VALUES (?, ?, ?, ?)"
    static let select = "SELECT id, user_id, created_at, data FROM bench WHERE id = ?"

    static func id(_ index: Int) -> String {
        "s-" + String(repeating: "0", count: max(0, 8 - String(index).count)) + String(index)
    }

    static func rate(_ operations: Int, _ elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let perSecond = Double(operations) / seconds
        return "\(Int(perSecond.rounded())) /s (\(String(format: "%.1f", seconds * 1e6 / Double(operations))) µs each)"
    }

    @Test("single-row INSERT transactions and point SELECTs per second, API vs C")
    func throughput() async throws {
        let directory = "/tmp/latchkey-store-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var report: [String] = ["store benchmark (\(Self.inserts) inserts, \(Self.selects) selects, file in \(directory))"]

        let database = try SQLiteDatabase(configuration: .init(path: directory + "/api.sqlite"))
        try await database.write { try $0.execute(Self.schema, []) }
        let data = SQLValue.blob([UInt8](repeating: 7, count: 32))
        let clock = ContinuousClock()

        var elapsed = try await clock.measure {
            for index in 0..<Self.inserts / 2 {
                try await database.write {
                    try $0.execute(Self.insert, [.text(Self.id(index)), "user", .integer(Int64(index)), data])
                }
            }
        }
        report.append("api insert tx, one at a time:   " + Self.rate(Self.inserts / 2, elapsed))
        elapsed = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<Self.tasks {
                    group.addTask {
                        for index in stride(from: Self.inserts / 2 + task, to: Self.inserts, by: Self.tasks) {
                            try await database.write {
                                try $0.execute(Self.insert, [.text(Self.id(index)), "user", .integer(Int64(index)), data])
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        report.append("api insert tx, \(Self.tasks) tasks:          " + Self.rate(Self.inserts / 2, elapsed))
        #expect(try await count("bench", in: database) == Int64(Self.inserts))

        elapsed = try await clock.measure {
            for index in 0..<Self.selects {
                let row = try await database.read {
                    try $0.queryOne(Self.select, [.text(Self.id(index * 7919 % Self.inserts))])
                }
                precondition(row != nil)
            }
        }
        report.append("api point select, one at a time: " + Self.rate(Self.selects, elapsed))
        elapsed = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<Self.tasks {
                    group.addTask {
                        for index in stride(from: task, to: Self.selects, by: Self.tasks) {
                            let row = try await database.read {
                                try $0.queryOne(Self.select, [.text(Self.id(index * 7919 % Self.inserts))])
                            }
                            precondition(row != nil)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        report.append("api point select, \(Self.tasks) tasks:      " + Self.rate(Self.selects, elapsed))
        elapsed = try await clock.measure {
            try await database.read { connection in
                for index in 0..<Self.selects {
                    let row = try connection.queryOne(Self.select, [.text(Self.id(index * 7919 % Self.inserts))])
                    precondition(row != nil)
                }
            }
        }
        report.append("api point select, all in one read (no hop): " + Self.rate(Self.selects, elapsed))
        elapsed = try await clock.measure {
            for _ in 0..<Self.selects {
                _ = try await database.read { _ in 0 }
            }
        }
        report.append("api empty read (hop + BEGIN/COMMIT): " + Self.rate(Self.selects, elapsed))
        elapsed = try await clock.measure {
            for _ in 0..<Self.inserts {
                _ = try await database.write { _ in 0 }
            }
        }
        report.append("api empty write (hop + BEGIN IMMEDIATE/COMMIT): " + Self.rate(Self.inserts, elapsed))
        await database.close()

        report.append(contentsOf: try Self.runC(directory: directory))
        print(report.joined(separator: "\n"))
    }

    /// Compiles and runs the C loop; its lines, or one saying why it did not run.
    static func runC(directory: String) throws -> [String] {
        let source = directory + "/bench.c"
        let binary = directory + "/bench"
        try cSource.write(toFile: source, atomically: true, encoding: .utf8)
        guard try run("/usr/bin/env", ["cc", "-O2", "-o", binary, source, "-lsqlite3"]).status == 0 else {
            return ["c: not run (cc or libsqlite3-dev missing)"]
        }
        let (status, output) = try run(binary, [directory + "/c.sqlite", String(inserts), String(selects)])
        return status == 0 ? output.split(separator: "\n").map(String.init) : ["c: failed: \(output)"]
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try Subprocess.launch(process)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    static let cSource = #"""
        #include <sqlite3.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <time.h>

        static double now(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return t.tv_sec + t.tv_nsec / 1e9;
        }

        static sqlite3 *db;

        static void ok(int rc, const char *what) {
            if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
                fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
                exit(1);
            }
        }

        static sqlite3_stmt *prepare(const char *sql) {
            sqlite3_stmt *s;
            ok(sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL), sql);
            return s;
        }

        static void run(sqlite3_stmt *s) {
            ok(sqlite3_step(s), sqlite3_sql(s));
            sqlite3_reset(s);
        }

        static void report(const char *what, int n, double seconds) {
            printf("c   %-29s%.0f /s (%.1f µs each)\n", what, n / seconds, seconds * 1e6 / n);
        }

        int main(int argc, char **argv) {
            int inserts = atoi(argv[2]), selects = atoi(argv[3]);
            ok(sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL), "open");
            ok(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
                "CREATE TABLE bench (id TEXT PRIMARY KEY NOT NULL, user_id TEXT NOT NULL, created_at INTEGER NOT NULL, data BLOB NOT NULL)",
                NULL, NULL, NULL), "setup");
            sqlite3_stmt *immediate = prepare("BEGIN IMMEDIATE"), *begin = prepare("BEGIN"), *commit = prepare("COMMIT");
            sqlite3_stmt *insert = prepare("INSERT INTO bench (id, user_id, created_at, data) VALUES (?, ?, ?, ?)");
            sqlite3_stmt *select = prepare("SELECT id, user_id, created_at, data FROM bench WHERE id = ?");
            unsigned char data[32];
            memset(data, 7, sizeof data);
            char id[32];

            double start = now();
            for (int i = 0; i < inserts; i++) {
                snprintf(id, sizeof id, "s-%08d", i);
                run(immediate);
                sqlite3_bind_text(insert, 1, id, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(insert, 2, "user", -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(insert, 3, i);
                sqlite3_bind_blob(insert, 4, data, sizeof data, SQLITE_TRANSIENT);
                run(insert);
                sqlite3_clear_bindings(insert);
                run(commit);
            }
            report("insert tx:", inserts, now() - start);

            volatile long sink = 0;
            for (int transaction = 1; transaction >= 0; transaction--) {
                start = now();
                for (int i = 0; i < selects; i++) {
                    snprintf(id, sizeof id, "s-%08d", (int)((long)i * 7919 % inserts));
                    if (transaction) run(begin);
                    sqlite3_bind_text(select, 1, id, -1, SQLITE_TRANSIENT);
                    if (sqlite3_step(select) != SQLITE_ROW) { fprintf(stderr, "missing %s\n", id); return 1; }
                    /* Copy what the API copies: every column. */
                    char text[64], user[64], blob[64];
                    snprintf(text, sizeof text, "%s", (const char *)sqlite3_column_text(select, 0));
                    snprintf(user, sizeof user, "%s", (const char *)sqlite3_column_text(select, 1));
                    sink += sqlite3_column_int64(select, 2);
                    memcpy(blob, sqlite3_column_blob(select, 3), (size_t)sqlite3_column_bytes(select, 3));
                    sink += text[0] + user[0] + blob[0];
                    sqlite3_reset(select);
                    sqlite3_clear_bindings(select);
                    if (transaction) run(commit);
                }
                report(transaction ? "point select in BEGIN/COMMIT:" : "point select, autocommit:", selects, now() - start);
            }
            sqlite3_finalize(immediate); sqlite3_finalize(begin); sqlite3_finalize(commit);
            sqlite3_finalize(insert); sqlite3_finalize(select);
            return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
        }
        """#
}
