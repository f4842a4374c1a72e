import FoundationEssentials
import Glibc
import LatchkeyCrypto
import LatchkeyStore

/// Brute-force limits on password checks, per account and per client address (docs/security.md S14).
///
/// Counters live in the `rate_limits` table, so they hold across restarts and across server
/// processes on one database. Each counter counts failures in a 15-minute window that starts at
/// its first failure. Once it reaches its limit the key is blocked for one minute, and every
/// further failure after a block doubles the block (2, 4, 8 … minutes, at most an hour) until the
/// window has passed and no block is running. With the default 10 per account that is at most
/// about 14 guesses per 15 minutes, well under S14's 100 an hour.
///
/// The account key is the SHA-256 of the normalised username, not the user id: an unknown
/// username is limited exactly like a known one (no enumeration through the limit), and text
/// typed into the username field, which is sometimes a password, is never stored.
struct LoginRateLimiter: Sendable {
    /// A counter: what it limits and its key in the table.
    struct Key: Sendable, Hashable {
        /// `account` or `ip`: the audit entry's `scope`, and with a `login_` prefix the `scope`
        /// label of `latchkey_rate_limit_hits_total`.
        var scope: String
        var key: String
        var limit: Int
    }

    /// A refusal: which counter and how long until the next try.
    struct Block: Sendable {
        var scope: String
        var retryAfter: Int
    }

    let perAccount: Int
    let perIP: Int
    let repository = RateLimitRepository()

    static let window: TimeInterval = 15 * 60
    static let firstBlock: TimeInterval = 60
    static let longestBlock: TimeInterval = 60 * 60

    /// The counters a password check against `username` from `ip` is subject to.
    func keys(username: String, ip: String?) -> [Key] {
        var keys = [Key(scope: "account", key: "login:account:" + HashFunction.sha256.hexDigest(Array(username.utf8)), limit: perAccount)]
        if let ip { keys.append(Key(scope: "ip", key: "login:ip:" + ip, limit: perIP)) }
        return keys
    }

    /// The block in force on any of `keys`, the longest first; nil when the check may go ahead.
    func block(_ keys: [Key], now: Date, on connection: any SQLConnection) throws -> Block? {
        var found: Block?
        for key in keys {
            guard let until = try repository.blockedUntil(key: key.key, on: connection), until > now else { continue }
            let seconds = Int(until.timeIntervalSince(now).rounded(.up))
            if seconds > found?.retryAfter ?? 0 { found = Block(scope: key.scope, retryAfter: max(1, seconds)) }
        }
        return found
    }

    /// Counts one failure on each key inside the caller's transaction, starting a new window when
    /// the last one has passed, and blocks a key that reached its limit.
    ///
    /// Each count is one upsert that returns the new total, and a block only ever grows, so
    /// failures counted at once by several processes are all counted and the longest block wins.
    func recordFailure(_ keys: [Key], now: Date, on connection: any SQLConnection) throws {
        for key in keys {
            let failures = try repository.recordFailure(
                key: key.key, now: now, windowStartedBefore: now.addingTimeInterval(-Self.window), on: connection)
            guard failures >= key.limit else { continue }
            let doublings = min(failures - key.limit, 12)
            let block = min(Self.firstBlock * pow(2, Double(doublings)), Self.longestBlock)
            try repository.extendBlock(key: key.key, until: now.addingTimeInterval(block), on: connection)
        }
    }

    /// Forgets the failures of `key`, and so lifts its block (after a successful sign-in on the
    /// account, or an operator's password reset).
    ///
    /// - Returns: Whether there were failures to forget.
    @discardableResult
    func reset(_ key: Key, on connection: any SQLConnection) throws -> Bool {
        try repository.delete(key: key.key, on: connection)
    }
}
