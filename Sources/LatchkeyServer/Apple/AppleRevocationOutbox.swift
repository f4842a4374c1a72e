import FoundationEssentials
import Glibc
import LatchkeyJSON
import LatchkeyStore

/// Apple refresh tokens that must be revoked at Apple (account deletion, TN3194), kept in the
/// database until Apple accepts the revocation.
///
/// A deletion writes its outbox row in the same transaction that deletes the account, so a crash
/// or an Apple outage can delay a revocation but never lose it. ``runDue()`` claims each due row
/// with a lease, a compare-and-set (so two server processes never send the same one at once),
/// sends it, and deletes each that Apple accepted, only while its claim holds; a failure is
/// retried with exponential back-off, from 30 seconds up to an hour, for as long as it takes.
final class AppleRevocationOutbox: Sendable {
    private let client: AppleClient
    private let database: any SQLDatabase
    private let masterKey: MasterKey
    private let audit: AuditLog
    private let revocations = AppleRevocationRepository()
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
        try revocations.insert(
            AppleRevocation(
                id: id, userID: userID, clientID: clientID, sealedToken: try masterKey.seal(refreshToken, context: Self.context(id)),
                createdAt: now, attempts: 0, nextAttemptAt: now, lastError: nil),
            on: connection)
    }

    private static func context(_ id: String) -> String { "apple_revocations.token:" + id }

    /// Sends every due revocation once.
    ///
    /// Each row is claimed (a compare-and-set, in a transaction of its own) just before it is
    /// sent, so its lease covers its own send only; a row another process claimed first is
    /// skipped. Only the claimer deletes the row or schedules its retry, and only while its claim
    /// holds.
    ///
    /// - Returns: How many Apple accepted.
    @discardableResult
    func runDue() async throws -> Int {
        let now = clock()
        let revocations = revocations
        let due = try await database.read { try revocations.due(at: now, limit: Self.batchSize, on: $0) }
        var accepted = 0
        for revocation in due {
            let claimedAt = clock()
            let claim = try await database.write { connection in
                try revocations.claim(
                    id: revocation.id, dueAt: claimedAt, until: claimedAt.addingTimeInterval(Self.lease), on: connection)
            }
            guard let claim else { continue }
            let attempts = revocation.attempts + 1
            var failure: String?
            do {
                let token = try masterKey.unseal(revocation.sealedToken, context: Self.context(revocation.id))
                try await client.revoke(refreshToken: String(decoding: token, as: UTF8.self), clientID: revocation.clientID)
            } catch AppleError.rejected(let code) {
                failure = "Apple refused: \(code)"
            } catch AppleError.unavailable(let reason) {
                failure = reason
            } catch {
                failure = "the sealed token cannot be opened"
            }
            let finished = clock()
            let stillClaimed = try await database.write { [failure] connection in
                if let failure {
                    return try revocations.release(
                        id: revocation.id, claim: claim, retryAt: finished.addingTimeInterval(Self.backoff(afterAttempts: attempts)),
                        error: String(failure.prefix(200)), on: connection)
                }
                guard try revocations.delete(id: revocation.id, claim: claim, on: connection) else { return false }
                try self.audit.record(
                    .init(time: finished, userID: revocation.userID, event: .appleTokenRevoked, outcome: .success, details: ["attempts": String(attempts)]),
                    on: connection)
                return true
            }
            if !stillClaimed {
                // The lease ran out during the send and another process claimed the row: it owns
                // the row now, and its send is harmless (Apple accepts revoking a revoked token).
                ServerLog.write(.warning, "apple_revocation_lease_lost", time: finished, ["revocation": .string(revocation.id)])
            }
            if failure == nil && stillClaimed { accepted += 1 }
        }
        return accepted
    }
}
