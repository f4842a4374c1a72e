import FoundationEssentials
import LatchkeyStore

/// The `rate_limits` table: failure counters and blocks per account and per address (S13).
struct RateLimitRepository: Sendable {}
