import FoundationEssentials
import LatchkeyStore

/// The `recovery_codes` table: hashes of one-time recovery codes (S18).
struct RecoveryCodeRepository: Sendable {}
