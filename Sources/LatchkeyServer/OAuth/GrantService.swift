import FoundationEssentials
import LatchkeyStore

/// A user's remembered consent to a client, as `GET /v1/grants` lists it.
struct Grant: Sendable, Hashable {
    var clientID: String
    var clientName: String
    var scopes: Set<String>
    var grantedAt: Date
    var updatedAt: Date
}

/// What users see and withdraw of the consent they gave third-party clients (`/v1/grants`).
/// Withdrawing ends the sessions the client got through that user's grants, each audited, in the
/// same transaction as the consent's removal (S27, S28).
struct GrantService: Sendable {
    let dependencies: Dependencies
    let sessions: SessionService
    let consents = ConsentRepository()
    let clients = ClientRepository()
    let sessionRows = SessionRepository()

    /// The user's consents, oldest first, with the name of each client.
    func grants(userID: String) async throws -> [Grant] {
        try await dependencies.database.read { connection in
            try self.consents.list(userID: userID, on: connection).compactMap { consent in
                // The foreign key removes a removed client's consents; a row without its client is skipped.
                guard let client = try self.clients.find(id: consent.clientID, on: connection) else { return nil }
                return Grant(
                    clientID: consent.clientID, clientName: client.name, scopes: consent.scopes, grantedAt: consent.grantedAt,
                    updatedAt: consent.updatedAt)
            }
        }
    }

    /// Withdraws the user's consent to the client and revokes the user's sessions of that
    /// client (reason `consent_revoked`).
    ///
    /// - Returns: Whether there was a consent to withdraw; without one nothing changes.
    func withdraw(userID: String, clientID: String, context: RequestContext) async throws -> Bool {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            guard try self.consents.delete(userID: userID, clientID: clientID, at: now, on: connection) else { return false }
            let revoked = try self.sessions.revoke(
                try self.sessionRows.unrevoked(userID: userID, clientID: clientID, on: connection),
                reason: AuthError.Reason.consentRevoked.rawValue, context: context, now: now, on: connection)
            try self.dependencies.record(
                .consentWithdrawn, .success, userID: userID, context: context, now: now,
                details: ["client_id": clientID, "sessions_revoked": String(revoked.count)], on: connection)
            return true
        }
    }
}
