import FoundationEssentials
import LatchkeyStore

/// The `sessions`, `refresh_tokens` and `ended_refresh_tokens` tables: sessions, their rotating
/// refresh tokens (only SHA-256 hashes are stored, S7) and the tombstones that name why a
/// deleted account's tokens stopped working.
struct SessionRepository: Sendable {}
