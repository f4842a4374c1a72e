import FoundationEssentials
import LatchkeyStore

/// The `dpop_proofs` table: one row per DPoP proof accepted, named by the SHA-256 of its key's
/// thumbprint and its `jti`, kept until the proof's `iat` is out of the acceptance window (then
/// the housekeeping removes it, ``RetentionRepository``).
struct DPoPReplayRepository: Sendable {
    /// Compare-and-set: records a proof as used.
    ///
    /// - Returns: false when it was used already (on this instance or another).
    func spend(proofHash: [UInt8], expiresAt: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "INSERT INTO dpop_proofs (proof_hash, expires_at) VALUES (?, ?) ON CONFLICT (proof_hash) DO NOTHING",
            [.blob(proofHash), .time(expiresAt)]) == 1
    }
}
