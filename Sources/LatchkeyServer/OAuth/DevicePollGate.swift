import FoundationEssentials
import Synchronization

/// When each pending device code was last polled, and whether it is known to be still pending,
/// in this process's memory (RFC 8628 §3.5), so that a poll never writes to the database and a
/// poll while the user has not answered does not read it either.
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
/// A code read pending stays known pending, and an on-time poll of it is answered
/// `authorization_pending` from here, until it expires or until ``invalidate()``: any answer to
/// any device code, on this instance (at once) or on another (when the database's change feed
/// brings it, ``DeviceAuthorizationRepository/changeChannel``), makes every code be read again at
/// its next poll. A read that began before an invalidation does not mark its code known pending
/// (``generation``), so an answer is never hidden by a read that raced it.
///
/// Each instance keeps its own clocks: a device whose polls a load balancer spreads over several
/// instances is held to the interval by each of them, not by all together, and its grown
/// interval is known only where it grew. docs/oauth.md says so.
final class DevicePollGate: Sendable {
    static let maximumCount = 100_000

    /// What a poll may do.
    enum Verdict: Sendable, Equatable {
        /// Read the authorization: the first poll this instance has seen, or one on time of a
        /// code not known pending.
        case proceed
        /// On time, and the code is known pending: `authorization_pending`, without a read.
        case pending
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
        /// The ``State/generation`` in which a read showed the code pending; it is known pending
        /// while that is still the generation.
        var pendingIn: UInt64?
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// Moves on at every ``invalidate()``.
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Decides a poll of the code with `hash` by `clientID` at `now`, and moves the code's clock
    /// to `now` when the poll is on time.
    func check(_ hash: [UInt8], clientID: String, now: Date) -> Verdict {
        state.withLock { state in
            guard var entry = state.entries[hash] else { return .proceed }
            guard entry.clientID == clientID else { return .otherClient }
            if now.timeIntervalSince(entry.lastPoll) < TimeInterval(entry.interval) {
                entry.interval += DeviceAuthorization.slowDownStep
                state.entries[hash] = entry
                return .slowDown(interval: entry.interval)
            }
            entry.lastPoll = now
            state.entries[hash] = entry
            return entry.pendingIn == state.generation && now < entry.expiresAt ? .pending : .proceed
        }
    }

    /// The generation to hand to ``track(_:clientID:expiresAt:now:readIn:)``: taken before the
    /// read whose result it tracks.
    var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// Tracks a code the database showed pending, polled at `now`: a code already tracked keeps
    /// its clock and interval. It is known pending from now on unless an invalidation came since
    /// `generation`, taken before the read.
    func track(_ hash: [UInt8], clientID: String, expiresAt: Date, now: Date, readIn generation: UInt64) {
        state.withLock { state in
            let pendingIn = generation == state.generation ? generation : nil
            if var entry = state.entries[hash] {
                entry.pendingIn = pendingIn
                state.entries[hash] = entry
                return
            }
            if state.entries.count >= Self.maximumCount {
                state.entries = state.entries.filter { $0.value.expiresAt > now }
                guard state.entries.count < Self.maximumCount else { return }
            }
            state.entries[hash] = Entry(
                clientID: clientID, interval: DeviceAuthorization.interval, lastPoll: now, expiresAt: expiresAt, pendingIn: pendingIn)
        }
    }

    /// Stops tracking a code that is no longer pending (redeemed, denied, expired).
    func forget(_ hash: [UInt8]) {
        _ = state.withLock { $0.entries.removeValue(forKey: hash) }
    }

    /// Some device code was answered (here or on another instance): no code is known pending
    /// any more, so each is read again at its next poll on time. Clocks and intervals stay.
    func invalidate() {
        state.withLock { $0.generation &+= 1 }
    }
}
