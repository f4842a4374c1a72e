import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// DPoP (RFC 9449): accepting a proof for a request, once. A proof that verifies
/// (``DPoPProof/verify(_:for:now:keys:)``) must also carry the current server nonce when nonces are
/// on (`dpop.nonce`), and its `jti` must be new for its key: the replay cache is a table, so a
/// proof spent on one instance is refused on every other (S41).
///
/// Binding happens where tokens are issued (the sign-in pipeline, refresh, the OAuth token
/// endpoint), enforcement where they are used (the bearer check); both call ``accept(_:for:context:)``.
package struct DPoPService: Sendable {
    let dependencies: Dependencies
    /// `dpop.required`: every token request needs a proof.
    let required: Bool
    /// The server nonces, when `dpop.nonce` is `on`.
    let nonces: DPoPNonces?
    let proofs = DPoPReplayRepository()
    /// The keys of recent proofs, read once each.
    let keys = DPoPKeyCache()

    init(dependencies: Dependencies, masterKey: MasterKey, configuration: Configuration) {
        self.dependencies = dependencies
        self.required = configuration.dpop.required
        self.nonces = configuration.dpop.nonce == "on" ? DPoPNonces(masterKey: masterKey) : nil
    }

    /// The nonce to hand out now, when nonces are on.
    func currentNonce() -> String? {
        nonces?.current(now: dependencies.clock())
    }

    /// Accepts a proof for `target`: verified, with the current nonce when nonces are on, and
    /// its `jti` spent. A replay is audited (`dpop.proof_replayed`).
    ///
    /// - Returns: The thumbprint of the key that proved possession.
    /// - Throws: ``AuthError`` `invalid_dpop_proof`, or `use_dpop_nonce` with a nonce to use.
    func accept(_ compact: String, for target: DPoPProof.Target, context: RequestContext) async throws -> String {
        let now = dependencies.clock()
        let proof = try DPoPProof.verify(compact, for: target, now: now, keys: keys)
        if let nonces {
            guard let nonce = proof.nonce, nonces.isValid(nonce, now: now) else {
                var error = AuthError(.useDPoPNonce, "the DPoP proof must carry the nonce of the DPoP-Nonce header")
                error.dpopNonce = nonces.current(now: now)
                throw error
            }
        }
        let hash = HashFunction.sha256.hash(Array((proof.keyThumbprint + " " + proof.tokenID).utf8))
        // Past iat + leeway the proof is refused as stale, so its row is no longer needed.
        let expiresAt = proof.issuedAt.addingTimeInterval(DPoPProof.leeway + 1)
        let fresh = try await dependencies.database.write { connection in
            guard try self.proofs.spend(proofHash: hash, expiresAt: expiresAt, on: connection) else {
                try self.dependencies.record(
                    .dpopProofReplayed, .failure, userID: nil, context: context, now: now,
                    details: ["jkt": proof.keyThumbprint, "htm": target.method], on: connection)
                return false
            }
            return true
        }
        guard fresh else { throw AuthError.invalidDPoPProof("the DPoP proof was already used (its jti is not new)") }
        return proof.keyThumbprint
    }
}
