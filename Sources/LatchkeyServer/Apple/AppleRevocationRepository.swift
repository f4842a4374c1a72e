import FoundationEssentials
import LatchkeyStore

/// The `apple_revocations` table: the outbox of Apple refresh tokens to revoke at Apple.
struct AppleRevocationRepository: Sendable {}
