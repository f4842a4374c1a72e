package import FoundationEssentials
import LatchkeyStore

/// A passkey as an operator sees it (`latchkey passkeys list`).
package struct PasskeySummary: Sendable {
    package var id: String
    package var name: String
    package var createdAt: Date
    package var lastUsedAt: Date?
    package var backedUp: Bool
    /// The AAGUID as a lowercase UUID.
    package var aaguid: String
    /// The provider the AAGUID names (``KnownAuthenticators``), if the table knows it.
    package var authenticator: String?
    /// `none`, `self` or `verified`.
    package var attestation: String
}

/// What `latchkey passkeys remove` did.
package struct PasskeyRemoval: Sendable {
    /// Whether the passkey was the account's last way to sign in: no password, no Apple
    /// identity and no other passkey are left, so the account cannot sign in until an operator
    /// sets a password (`latchkey users set-password`).
    package var wasLastWayToSignIn: Bool
}

extension PasskeyService {
    /// The account's passkeys, oldest first, for the CLI.
    package func summaries(userID: String) async throws -> [PasskeySummary] {
        try await list(userID: userID).map { passkey in
            PasskeySummary(
                id: passkey.id, name: passkey.name, createdAt: passkey.createdAt, lastUsedAt: passkey.lastUsedAt, backedUp: passkey.backedUp,
                aaguid: Self.uuid(passkey.aaguid), authenticator: KnownAuthenticators.name(aaguid: passkey.aaguid),
                attestation: passkey.attestation)
        }
    }

    /// Removes a passkey as an operator (`latchkey passkeys remove`): for a stolen or lost
    /// authenticator, so it stops working at once.
    ///
    /// Unlike `DELETE /v1/passkeys/{id}`, it needs no fresh sign-in and removes the account's
    /// last way to sign in too: the operator acts on the holder's word, and a stolen passkey must
    /// not keep working because the account has nothing else. The result says when that
    /// happened. Audited `passkey.removed` with `by: operator`, in the same transaction.
    ///
    /// - Throws: `not_found` when the account has no passkey with this id.
    package func removeAsOperator(_ id: String, userID: String, context: RequestContext) async throws -> PasskeyRemoval {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            // Removed by a concurrent request since it was listed: that request audited it.
            guard try self.passkeys.delete(id: id, userID: userID, on: connection) else { throw AuthError.notFound("no such passkey") }
            let last = try self.passkeys.count(userID: userID, on: connection) == 0
                && self.passwords.find(userID: userID, on: connection) == nil
                && self.passkeys.identityCount(userID: userID, on: connection) == 0
            try self.dependencies.record(
                .passkeyRemoved, .success, userID: userID, context: context, now: now,
                details: ["passkey_id": id, "by": "operator", "last_way_to_sign_in": last ? "true" : "false"], on: connection)
            return PasskeyRemoval(wasLastWayToSignIn: last)
        }
    }
}
