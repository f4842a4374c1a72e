import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyStore

/// Team transfer (docs/reference.md "Team transfer"): when an app moves to our team, its users' Apple ids
/// change. The operator gets each user's transfer id from the sending team (Apple's migration
/// endpoint) and imports them; a sign-in whose token carries a matching `transfer_sub` then
/// links to the old account instead of creating one (see ``AppleService/signIn(_:context:)``).
extension AppleService {
    /// What an import did.
    struct TransferImport: Sendable {
        /// Identities that now carry a transfer id.
        var recorded = 0
        /// Entries naming no Apple identity we know.
        var unknown = 0
    }

    /// Records transfer ids from a JSON array of `{"transfer_sub": …, "sub": <old Apple id>}` or
    /// `{"transfer_sub": …, "user_id": <our user id>}`, in one transaction.
    ///
    /// - Throws: `invalid_request` naming the first bad entry; nothing is recorded then.
    func importTransfers(_ json: JSONValue, context: RequestContext) async throws -> TransferImport {
        guard case .array(let entries) = json else { throw HTTPError.invalidRequest("the file must hold a JSON array") }
        var parsed = [(transferSubject: String, column: String, value: String)]()
        for (index, entry) in entries.enumerated() {
            guard let transferSubject = entry["transfer_sub"]?.stringValue, !transferSubject.isEmpty else {
                throw HTTPError.invalidRequest("entry \(index): transfer_sub is required")
            }
            if let subject = entry["sub"]?.stringValue {
                parsed.append((transferSubject, "subject", subject))
            } else if let userID = entry["user_id"]?.stringValue {
                parsed.append((transferSubject, "user_id", userID))
            } else {
                throw HTTPError.invalidRequest("entry \(index): sub or user_id is required")
            }
        }
        let now = clock()
        let dialect = database.dialect
        let issuer = settings.issuer
        return try await database.write { [parsed] connection in
            var result = TransferImport()
            for entry in parsed {
                let changed = try connection.execute(
                    dialect.sql("UPDATE identities SET transfer_sub = ? WHERE provider = 'apple' AND issuer = ? AND \(entry.column) = ?"),
                    [.text(entry.transferSubject), .text(issuer), .text(entry.value)])
                if changed > 0 { result.recorded += changed } else { result.unknown += 1 }
            }
            try self.audit.record(
                .init(time: now, event: .appleTransfersImported, outcome: .success, details: [
                    "recorded": String(result.recorded), "unknown": String(result.unknown),
                ]),
                on: connection)
            return result
        }
    }
}
