import FoundationEssentials
import LatchkeyStore

/// Team transfer (docs/reference.md "Team transfer"): when an app moves to our team, its users' Apple ids
/// change. The operator gets each user's transfer id from the sending team (Apple's migration
/// endpoint) and imports them; a sign-in whose token carries a matching `transfer_sub` then
/// links to the old account instead of creating one (see ``AppleService/signIn(_:context:)``).
extension AppleService {
    /// One imported transfer id and the identity it belongs to.
    struct TransferEntry: Sendable, Hashable {
        /// Whom the transfer id belongs to.
        enum Target: Sendable, Hashable {
            /// The user's Apple id at the sending team.
            case subject(String)
            /// Our user id.
            case userID(String)
        }

        var transferSubject: String
        var target: Target
    }

    /// What an import did.
    struct TransferImport: Sendable, Hashable {
        /// Identities that now carry a transfer id.
        var recorded = 0
        /// Entries naming no Apple identity we know.
        var unknown = 0
    }

    /// Records transfer ids, in one transaction, and audits the import.
    ///
    /// - Returns: How many identities now carry a transfer id, and how many entries matched none.
    func importTransfers(_ entries: [TransferEntry], context: RequestContext) async throws -> TransferImport {
        let now = clock()
        let issuer = settings.issuer
        let identities = identities
        return try await database.write { connection in
            var result = TransferImport()
            for entry in entries {
                let changed: Int
                switch entry.target {
                case .subject(let subject):
                    changed = try identities.recordTransfer(entry.transferSubject, provider: Self.provider, issuer: issuer, subject: subject, on: connection)
                case .userID(let userID):
                    changed = try identities.recordTransfer(entry.transferSubject, provider: Self.provider, issuer: issuer, userID: userID, on: connection)
                }
                if changed > 0 { result.recorded += changed } else { result.unknown += 1 }
            }
            try self.audit.record(
                .init(time: now, event: .appleTransfersImported, outcome: .success, requestID: context.requestID, details: [
                    "recorded": String(result.recorded), "unknown": String(result.unknown),
                ]),
                on: connection)
            return result
        }
    }
}
