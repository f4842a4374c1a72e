import FoundationEssentials
import Glibc
import LatchkeyStore

/// Apple refresh tokens that must be revoked at Apple (account deletion, TN3194), kept in the
/// database until Apple accepts the revocation.
///
/// A deletion writes its outbox row in the same transaction that deletes the account, so a crash
/// or an Apple outage can delay a revocation but never lose it. ``runDue()`` claims due rows
/// with a lease (so two server processes do not send the same one twice at once), sends them,
/// and deletes each that Apple accepted; a failure is retried with exponential back-off, from
/// 30 seconds up to an hour, for as long as it takes.
final class AppleRevocationOutbox: Sendable {
    private let client: AppleClient
    private let database: any SQLDatabase
    private let masterKey: MasterKey
    private let audit: AuditLog
    private let clock: @Sendable () -> Date

    /// How long a claimed row is left alone by other processes.
    static let lease: TimeInterval = 60
    /// At most this many rows per pass.
    static let batchSize = 32

    init(client: AppleClient, database: any SQLDatabase, masterKey: MasterKey, clock: @escaping @Sendable () -> Date) {
        self.client = client
        self.database = database
        self.masterKey = masterKey
        self.audit = AuditLog(database: database)
        self.clock = clock
    }

    /// The wait before attempt `attempts + 1`.
    static func backoff(afterAttempts attempts: Int) -> TimeInterval {
        min(30 * pow(2, Double(max(attempts - 1, 0))), 3600)
    }

    /// Queues a revocation inside the caller's transaction, due at once.
    func enqueue(refreshToken: [UInt8], clientID: String, userID: String, now: Date, on connection: any SQLConnection) throws {
        let id = Identifiers.make("rvk")
        try connection.execute(
            database.dialect.sql(
                """
                INSERT INTO apple_revocations (id, user_id, client_id, token, created_at, next_attempt_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """),
            [.text(id), .text(userID), .text(clientID), .blob(try masterKey.seal(refreshToken, context: Self.context(id))), .time(now), .time(now)])
    }

    private static func context(_ id: String) -> String { "apple_revocations.token:" + id }

    /// Sends every due revocation once.
    ///
    /// - Returns: How many Apple accepted.
    @discardableResult
    func runDue() async throws -> Int {
        let now = clock()
        let dialect = database.dialect
        let claimed = try await database.write { connection in
            let rows = try connection.query(
                dialect.sql("SELECT * FROM apple_revocations WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?"),
                [.time(now), .integer(Int64(Self.batchSize))])
            for row in rows {
                try connection.execute(
                    dialect.sql("UPDATE apple_revocations SET next_attempt_at = ? WHERE id = ?"),
                    [.time(now.addingTimeInterval(Self.lease)), .text(try row.string("id"))])
            }
            return rows
        }
        var accepted = 0
        for row in claimed {
            let id = try row.string("id")
            let userID = try row.string("user_id")
            let attempts = Int(try row.int("attempts")) + 1
            var failure: String?
            do {
                let token = try masterKey.unseal(try row.blob("token"), context: Self.context(id))
                try await client.revoke(refreshToken: String(decoding: token, as: UTF8.self), clientID: try row.string("client_id"))
            } catch AppleError.rejected(let code) {
                failure = "Apple refused: \(code)"
            } catch AppleError.unavailable(let reason) {
                failure = reason
            } catch {
                failure = "the sealed token cannot be opened"
            }
            let finished = clock()
            try await database.write { [failure] connection in
                if let failure {
                    try connection.execute(
                        dialect.sql("UPDATE apple_revocations SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?"),
                        [.integer(Int64(attempts)), .time(finished.addingTimeInterval(Self.backoff(afterAttempts: attempts))),
                         .text(String(failure.prefix(200))), .text(id)])
                } else {
                    try connection.execute(dialect.sql("DELETE FROM apple_revocations WHERE id = ?"), [.text(id)])
                    try self.audit.record(
                        .init(time: finished, userID: userID, event: .appleTokenRevoked, outcome: .success, details: ["attempts": String(attempts)]),
                        on: connection)
                }
            }
            if failure == nil { accepted += 1 }
        }
        return accepted
    }
}
