import FoundationEssentials
import Synchronization

/// When each pending device code was last polled, in this process's memory (RFC 8628 §3.5), so
/// that a poll never writes to the database.
///
/// A device polls every `interval` seconds (5 to begin with). A poll that comes sooner is
/// answered `slow_down` here, without a database read, and adds 5 seconds to that code's
/// interval for every later poll; it does not count as a poll, so the next one is measured from
/// the last poll that was on time, and a device that then waits the grown interval is answered
/// normally. Only codes the database has shown to exist and be pending are tracked (after a read),
/// so made-up codes cannot fill the memory; ``maximumCount`` bounds it anyway, by dropping
/// expired entries and then, if need be, by not tracking new codes (they are then read at every
/// poll, still without a write).
///
/// Each instance keeps its own: a device whose polls a load balancer spreads over several
/// instances is held to the interval by each of them, not by all together, and its grown
/// interval is known only where it grew. docs/oauth.md says so.
final class DevicePollGate: Sendable {
    static let maximumCount = 100_000

    /// What a poll may do.
    enum Verdict: Sendable, Equatable {
        /// Read the authorization: the first poll this instance has seen, or one on time.
        case proceed
        /// Too soon after the last poll on time: `slow_down`; the interval is now this long.
        case slowDown(interval: Int)
        /// The code is tracked for another client: `invalid_grant`, without a read.
        case otherClient
    }

    private struct Entry {
        var clientID: String
        var interval: Int
        /// The last poll that was on time (or the first one seen).
        var lastPoll: Date
        var expiresAt: Date
    }

    private let entries = Mutex<[[UInt8]: Entry]>([:])

    /// Decides a poll of the code with `hash` by `clientID` at `now`, and moves the code's clock
    /// to `now` when the poll is on time.
    func check(_ hash: [UInt8], clientID: String, now: Date) -> Verdict {
        entries.withLock { entries in
            guard var entry = entries[hash] else { return .proceed }
            guard entry.clientID == clientID else { return .otherClient }
            if now.timeIntervalSince(entry.lastPoll) < TimeInterval(entry.interval) {
                entry.interval += DeviceAuthorization.slowDownStep
                entries[hash] = entry
                return .slowDown(interval: entry.interval)
            }
            entry.lastPoll = now
            entries[hash] = entry
            return .proceed
        }
    }

    /// Starts tracking a code the database showed pending, polled at `now`; a code already
    /// tracked keeps its clock and interval.
    func track(_ hash: [UInt8], clientID: String, expiresAt: Date, now: Date) {
        entries.withLock { entries in
            guard entries[hash] == nil else { return }
            if entries.count >= Self.maximumCount {
                entries = entries.filter { $0.value.expiresAt > now }
                guard entries.count < Self.maximumCount else { return }
            }
            entries[hash] = Entry(clientID: clientID, interval: DeviceAuthorization.interval, lastPoll: now, expiresAt: expiresAt)
        }
    }

    /// Stops tracking a code that is no longer pending (redeemed, denied, expired).
    func forget(_ hash: [UInt8]) {
        _ = entries.withLock { $0.removeValue(forKey: hash) }
    }
}
