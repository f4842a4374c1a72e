import FoundationEssentials
import Glibc
import LatchkeyStore

/// Apple refresh tokens that must be revoked at Apple (account deletion, TN3194): items of kind
/// `apple_revocation` in the ``Outbox``, kept until Apple accepts the revocation.
///
/// A deletion queues its revocations in the same transaction that deletes the account, so a
/// crash or an Apple outage can delay a revocation but never lose it. A failure is retried with
/// exponential back-off, from 30 seconds up to an hour, for as long as it takes; each accepted
/// revocation is audited `apple.token_revoked`.
final class AppleRevocationOutbox: Sendable {
    private let outbox: Outbox<Sender>
    private let masterKey: MasterKey

    init(client: AppleClient, database: any SQLDatabase, masterKey: MasterKey, clock: @escaping @Sendable () -> Date) {
        self.masterKey = masterKey
        self.outbox = Outbox(database: database, clock: clock, sender: Sender(client: client, masterKey: masterKey, audit: AuditLog(database: database)))
    }

    /// Queues a revocation inside the caller's transaction, due at once.
    func enqueue(refreshToken: [UInt8], clientID: String, userID: String, now: Date, on connection: any SQLConnection) throws {
        let id = Identifiers.make("rvk")
        try outbox.enqueue(
            id: id, payload: try masterKey.seal(refreshToken, context: Sender.context(id)), userID: userID, label: clientID,
            giveUpAfter: Sender.forever, now: now, on: connection)
    }

    /// Sends every due revocation once.
    ///
    /// - Returns: How many Apple accepted.
    @discardableResult
    func runDue() async throws -> Int {
        try await outbox.runDue()
    }

    /// How many revocations of a (deleted) user are still queued.
    func pending(userID: String) async throws -> Int {
        try await outbox.pending(userID: userID)
    }

    struct Sender: OutboxSender {
        let client: AppleClient
        let masterKey: MasterKey
        let audit: AuditLog

        var kind: String { "apple_revocation" }
        /// A revocation is never given up.
        static let forever: TimeInterval = 100 * 365 * 86_400

        /// The sealing context of a queued token; the same since revocations had a table of their own.
        static func context(_ id: String) -> String { "apple_revocations.token:" + id }

        func backoff(afterAttempts attempts: Int) -> TimeInterval {
            min(30 * pow(2, Double(max(attempts - 1, 0))), 3600)
        }

        func deliver(_ item: OutboxItem) async -> OutboxAttempt {
            do {
                let token = try masterKey.unseal(item.payload, context: Self.context(item.id))
                try await client.revoke(refreshToken: String(decoding: token, as: UTF8.self), clientID: item.label ?? "")
                return .delivered
            } catch AppleError.rejected(let code) {
                return .deferred("Apple refused: \(code)")
            } catch AppleError.unavailable(let reason) {
                return .deferred(reason)
            } catch {
                return .deferred("the sealed token cannot be opened")
            }
        }

        func settle(_ item: OutboxItem, _ attempt: OutboxAttempt, attempts: Int, at time: Date, on connection: any SQLConnection) throws {
            try audit.record(
                .init(time: time, userID: item.userID, event: .appleTokenRevoked, outcome: .success, details: ["attempts": String(attempts)]),
                on: connection)
        }
    }
}
