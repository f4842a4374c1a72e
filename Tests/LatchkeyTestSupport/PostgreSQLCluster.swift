package import Foundation
import Synchronization

/// A private PostgreSQL cluster started by `scripts/postgres` for the tests of this process:
/// its own temporary directory, a free loopback port, a random password, run by a non-root
/// user when the tests run as root. It stops and disappears when the process ends (the
/// script's `--owner-pid` watcher), or earlier with ``stop()``.
///
/// A cluster that cannot start is an error the test reports; nothing is skipped.
package final class PostgreSQLCluster: Sendable {
    /// A cluster that could not be started or driven, with what the script said.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package var description: String
    }

    /// `postgres://latchkey@127.0.0.1:PORT/postgres`: no password in it.
    package let url: String
    /// The superuser's password (from the cluster's password file).
    package let password: String
    /// The file holding ``password``.
    package let passwordFile: String
    /// The cluster's directory.
    package let directory: String

    private init(url: String, password: String, passwordFile: String, directory: String) {
        self.url = url
        self.password = password
        self.passwordFile = passwordFile
        self.directory = directory
    }

    /// The cluster every test of this process shares, started on first use.
    ///
    /// - Throws: ``Failure`` when it could not be started (the same failure every time).
    package static func shared() throws -> PostgreSQLCluster {
        try sharedCluster.withLock { cluster in
            if cluster == nil { cluster = Result { try start() }.mapError { $0 as? Failure ?? Failure(description: "\($0)") } }
            return try cluster!.get()
        }
    }

    private static let sharedCluster = Mutex<Result<PostgreSQLCluster, Failure>?>(nil)

    /// Starts a new cluster of its own, for tests that stop and start the server.
    ///
    /// - Throws: ``Failure`` with the script's output.
    package static func start() throws -> PostgreSQLCluster {
        let result = try script(["start", "--owner-pid", String(ProcessInfo.processInfo.processIdentifier)])
        var fields: [String: String] = [:]
        for line in result.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let url = fields["url"], let directory = fields["dir"], let passwordFile = fields["password_file"] else {
            throw Failure(description: "scripts/postgres start printed no url, dir and password_file")
        }
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return PostgreSQLCluster(url: url, password: password, passwordFile: passwordFile, directory: directory)
    }

    /// The URL of database `name` in this cluster (no password in it).
    package func url(database name: String) -> String {
        let base = url[..<url.lastIndex(of: "/")!]
        return base + "/" + name
    }

    /// Runs one statement as the superuser outside any transaction (`CREATE DATABASE`).
    package func sql(_ statement: String) throws {
        _ = try Self.script(["sql", directory, statement])
    }

    /// Creates database `name`, from `template` when given.
    package func createDatabase(_ name: String, template: String? = nil) throws {
        try sql("CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? ""))
    }

    /// Drops database `name`, ending its connections.
    package func dropDatabase(_ name: String) throws {
        try sql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Stops the server, keeping its data (`scripts/postgres down`).
    package func down() throws { _ = try Self.script(["down", directory]) }

    /// Starts the server again on the same port (`scripts/postgres up`).
    package func up() throws { _ = try Self.script(["up", directory]) }

    /// Stops the cluster and removes its directory.
    package func stop() throws { _ = try Self.script(["stop", directory]) }

    /// The repository's `scripts/postgres`.
    package static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/postgres")

    private static func script(_ arguments: [String]) throws -> String {
        let result = try Subprocess.run(URL(fileURLWithPath: "/bin/bash"), [scriptURL.path] + arguments)
        guard result.status == 0 else {
            throw Failure(description: "scripts/postgres \(arguments.first ?? "") failed (\(result.status)): \(result.error)")
        }
        return result.output
    }
}
