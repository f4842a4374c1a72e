import FoundationEssentials
import LatchkeyStore

/// The `totp_factors` table: sealed TOTP secrets and the last step used (S17).
struct TOTPRepository: Sendable {}
