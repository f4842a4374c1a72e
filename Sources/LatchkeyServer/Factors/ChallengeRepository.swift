import FoundationEssentials
import LatchkeyStore

/// The `challenges` table: one-time device-key challenges (S16).
struct ChallengeRepository: Sendable {}
