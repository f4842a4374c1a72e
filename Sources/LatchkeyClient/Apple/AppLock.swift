#if canImport(LocalAuthentication) && !os(tvOS) && !os(watchOS)
import LocalAuthentication

/// The app lock: the protected part of the app opens after Face ID, Touch ID or the device
/// passcode (`LARight(requirement: .biometry(fallback: .devicePasscode))`), and closes again as
/// its ``AppLockPolicy`` says, or on sign-out. Its decisions are ``AppLockGate``'s; this class
/// adapts `LARight` and the app's lifecycle to them, and reports each change on ``events`` as
/// ``AuthEvent/locked`` and ``AuthEvent/unlocked``.
///
/// Call ``enteredBackground()`` and ``enteredForeground()`` from the scene phase, and
/// ``unlock(localizedReason:)`` when the locked screen appears.
@available(iOS 16.0, macOS 13.0, *)
@MainActor
public final class AppLock {
    /// Whether the protected part of the app is closed.
    public var isLocked: Bool { gate.isLocked }
    /// The policy.
    public var policy: AppLockPolicy { gate.policy }

    private var gate: AppLockGate
    /// The authorized right, held by a task of its own until the lock closes: `LARight` is not
    /// `Sendable`, so it stays in that task, which deauthorizes it when `release` finishes.
    private var held: (release: AsyncStream<Void>.Continuation, deauthorized: Task<Void, Never>)?
    private let clock = ContinuousClock()
    private var continuations: [Int: AsyncStream<AuthEvent>.Continuation] = [:]
    private var nextStream = 0
    /// The clients ``follow(_:)`` is following, whose ``LatchkeyClient/authEvents`` also carry
    /// the lock's events.
    private var followed: [ObjectIdentifier: LatchkeyClient] = [:]

    /// A lock with `policy`, closed, as at launch.
    public init(policy: AppLockPolicy) {
        gate = AppLockGate(policy: policy)
    }

    /// A new stream for each access: ``AuthEvent/locked`` and ``AuthEvent/unlocked`` as they happen.
    public var events: AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream<AuthEvent>.makeStream()
        let id = nextStream
        nextStream += 1
        continuations[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.continuations[id] = nil }
        }
        return stream
    }

    /// Asks for biometry (or the passcode) and opens the app.
    ///
    /// - Returns: `false` when the device can do neither (no passcode set); the app decides then
    ///   whether to open without the lock.
    /// - Throws: LocalAuthentication's error when the user failed or dismissed the prompt.
    public func unlock(localizedReason: String) async throws -> Bool {
        guard gate.isLocked else { return true }
        let right = LARight(requirement: .biometry(fallback: .devicePasscode))
        do {
            try await right.checkCanAuthorize()
        } catch {
            return false
        }
        try await right.authorize(localizedReason: localizedReason)
        let (release, continuation) = AsyncStream<Void>.makeStream()
        let deauthorized = Task.detached {
            for await _ in release {}
            await right.deauthorize()
        }
        // Two unlocks racing across the awaits above: the later right replaces the earlier one.
        held?.release.finish()
        held = (continuation, deauthorized)
        if gate.unlocked() { send(.unlocked) }
        return true
    }

    /// Closes the app now (for a sign-out, or a "lock now" button).
    public func lock() async {
        if let held {
            self.held = nil
            held.release.finish()
            await held.deauthorized.value
        }
        if gate.locked() { send(.locked) }
    }

    /// The app went to the background: locks at once under ``AppLockPolicy/everyTime``, so the
    /// app switcher's snapshot shows the locked screen.
    public func enteredBackground() async {
        var next = gate
        if next.enteredBackground(at: clock.now) {
            await lock()
        } else {
            gate = next
        }
    }

    /// The app came back: locks when it was away longer than ``AppLockPolicy/afterInactivity(_:)``.
    public func enteredForeground() async {
        var next = gate
        if next.enteredForeground(at: clock.now) {
            await lock()
        } else {
            gate = next
        }
    }

    /// Locks whenever `client` signs out, and reports ``AuthEvent/locked`` and
    /// ``AuthEvent/unlocked`` on the client's ``LatchkeyClient/authEvents`` too, for as long as
    /// the calling task runs (for example in a SwiftUI `.task`).
    public func follow(_ client: LatchkeyClient) async {
        followed[ObjectIdentifier(client)] = client
        defer { followed[ObjectIdentifier(client)] = nil }
        for await event in client.authEvents {
            if case .signedOut = event { await lock() }
        }
    }

    private func send(_ event: AuthEvent) {
        for continuation in continuations.values { continuation.yield(event) }
        for client in followed.values { client.publish(event) }
    }
}
#endif
