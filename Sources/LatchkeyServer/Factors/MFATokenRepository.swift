import FoundationEssentials
import LatchkeyStore

/// The `mfa_tokens` table: half-finished sign-ins waiting for a second factor.
struct MFATokenRepository: Sendable {}
