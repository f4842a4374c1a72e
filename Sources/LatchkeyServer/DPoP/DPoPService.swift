import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// DPoP (RFC 9449): accepting a proof for a request, once. A proof that verifies
/// (``DPoPProof/verify(_:for:now:keys:)``) must also carry the current server nonce when nonces are
/// on (`dpop.nonce`), and its `jti` must be new for its key: the replay cache is a table, so a
/// proof spent on one instance is refused on every other (S41).
///
/// Binding happens where tokens are issued (the sign-in pipeline, refresh, the OAuth token
/// endpoint), enforcement where they are used (the bearer check); both call ``accept(_:for:context:)``,
/// but for a refresh, which checks the proof with ``check(_:for:)`` and spends its `jti` with
/// ``spend(_:context:on:)`` inside the transaction that rotates the token: one write, not two.
package struct DPoPService: Sendable {
    let dependencies: Dependencies
    /// `dpop.required`: every token request needs a proof.
    let required: Bool
    /// The server nonces, when `dpop.nonce` is `on`.
    let nonces: DPoPNonces?
    let proofs = DPoPReplayRepository()
    /// The keys of recent proofs, read once each.
    let keys = DPoPKeyCache()

    /// A proof that holds for its request and whose `jti` is still to be spent.
    package struct CheckedProof: Sendable {
        /// The thumbprint of the key that proved possession.
        package var keyThumbprint: String
        /// The row the replay cache keys it by: SHA-256 of the thumbprint and the `jti`.
        var hash: [UInt8]
        /// When the row may go: past `iat` + leeway the proof is refused as stale anyway.
        var expiresAt: Date
        /// `htm`, for the audit entry of a replay.
        var method: String
    }

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
        let proof = try check(compact, for: target)
        let fresh = try await dependencies.database.write { connection in try self.spend(proof, context: context, on: connection) }
        guard fresh else { throw Self.replayed }
        return proof.keyThumbprint
    }

    /// Checks a proof for `target` as ``accept(_:for:context:)`` does, but for its `jti`, which
    /// the caller spends with ``spend(_:context:on:)`` in the transaction the proof allows.
    ///
    /// - Throws: ``AuthError`` `invalid_dpop_proof`, or `use_dpop_nonce` with a nonce to use.
    func check(_ compact: String, for target: DPoPProof.Target) throws(AuthError) -> CheckedProof {
        let now = dependencies.clock()
        let proof = try DPoPProof.verify(compact, for: target, now: now, keys: keys)
        if let nonces {
            guard let nonce = proof.nonce, nonces.isValid(nonce, now: now) else {
                var error = AuthError(.useDPoPNonce, "the DPoP proof must carry the nonce of the DPoP-Nonce header")
                error.dpopNonce = nonces.current(now: now)
                throw error
            }
        }
        return CheckedProof(
            keyThumbprint: proof.keyThumbprint, hash: HashFunction.sha256.hash(Array((proof.keyThumbprint + " " + proof.tokenID).utf8)),
            expiresAt: proof.issuedAt.addingTimeInterval(DPoPProof.leeway + 1), method: target.method)
    }

    /// Compare-and-set: spends a checked proof's `jti` in the caller's transaction; a replay is
    /// audited (`dpop.proof_replayed`).
    ///
    /// - Returns: false when the proof was used already (on this instance or another): the
    ///   caller refuses the request with ``replayed`` and writes nothing else.
    func spend(_ proof: CheckedProof, context: RequestContext, on connection: any SQLConnection) throws -> Bool {
        guard try proofs.spend(proofHash: proof.hash, expiresAt: proof.expiresAt, on: connection) else {
            try dependencies.record(
                .dpopProofReplayed, .failure, userID: nil, context: context, now: dependencies.clock(),
                details: ["jkt": proof.keyThumbprint, "htm": proof.method], on: connection)
            return false
        }
        return true
    }

    /// The refusal of a proof whose `jti` was spent already.
    static let replayed = AuthError.invalidDPoPProof("the DPoP proof was already used (its jti is not new)")
}
