// Portable on purpose: the app lock's decisions are pure logic over an injected clock reading, so
// Linux tests reach them; `AppLock` (LocalAuthentication) only adapts `LARight` to them.

/// When the app lock asks for Face ID, Touch ID or the passcode again.
public enum AppLockPolicy: Sendable, Hashable {
    /// Every time the app comes back to the foreground.
    case everyTime
    /// Once after each launch; the app stays open until the process ends or the user signs out.
    case oncePerLaunch
    /// When the app was in the background for at least this long (for example `.seconds(300)`).
    case afterInactivity(Duration)
}

/// The app lock's state machine: whether the app is locked, and when it locks again under its
/// ``AppLockPolicy``. Times are readings of a `ContinuousClock` (it keeps counting while the
/// device sleeps, so "after five minutes" includes sleep), passed in by the caller.
public struct AppLockGate: Sendable, Hashable {
    /// The policy.
    public let policy: AppLockPolicy
    /// Whether the protected part of the app is closed.
    public private(set) var isLocked = true
    /// When the app last went to the background while unlocked; `nil` in the foreground.
    public private(set) var backgroundedAt: ContinuousClock.Instant?

    /// A gate for `policy`, locked, as at launch.
    public init(policy: AppLockPolicy) {
        self.policy = policy
    }

    /// The user authenticated: the app opens.
    ///
    /// - Returns: whether this changed the state (an `.unlocked` event is due).
    public mutating func unlocked() -> Bool {
        defer { isLocked = false; backgroundedAt = nil }
        return isLocked
    }

    /// The app closes now (the user signed out, or asked to lock).
    ///
    /// - Returns: whether this changed the state (a `.locked` event is due).
    public mutating func locked() -> Bool {
        defer { isLocked = true; backgroundedAt = nil }
        return !isLocked
    }

    /// The app went to the background at `now`.
    ///
    /// - Returns: whether the app locks right away (``AppLockPolicy/everyTime``), so that its
    ///   content is hidden from the app switcher's snapshot.
    public mutating func enteredBackground(at now: ContinuousClock.Instant) -> Bool {
        guard !isLocked else { return false }
        switch policy {
        case .everyTime:
            return locked()
        case .oncePerLaunch:
            return false
        case .afterInactivity:
            backgroundedAt = now
            return false
        }
    }

    /// The app came back to the foreground at `now`.
    ///
    /// - Returns: whether it locked because it was away at least the policy's duration.
    public mutating func enteredForeground(at now: ContinuousClock.Instant) -> Bool {
        guard !isLocked, case .afterInactivity(let limit) = policy, let since = backgroundedAt else {
            backgroundedAt = nil
            return false
        }
        backgroundedAt = nil
        let away: Duration = since.duration(to: now)
        guard away >= limit else { return false }
        return locked()
    }
}
