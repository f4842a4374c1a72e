import Foundation

/// Fans events out to every open ``LatchkeyClient/authEvents`` stream, and remembers the current
/// session so that a new stream can start with it.
final class AuthEventHub: @unchecked Sendable {
    // @unchecked: every stored property is only touched under `lock`. NSLock rather than Mutex,
    // which needs iOS 18 / macOS 15 while the SDK supports iOS 16 / macOS 13.
    private let lock = NSLock()
    private var current: Session?
    private var continuations: [Int: AsyncStream<AuthEvent>.Continuation] = [:]
    private var nextID = 0

    init(current: Session?) {
        self.current = current
    }

    /// A new stream: `.initialSession(current)`, then every later event.
    func stream() -> AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream<AuthEvent>.makeStream(bufferingPolicy: .unbounded)
        let id: Int = lock.withLock {
            let id = nextID
            nextID += 1
            continuation.yield(.initialSession(current))
            continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Records the session a later stream starts with, without an event.
    func setCurrent(_ session: Session?) {
        lock.withLock { current = session }
    }

    /// Sends `event` to every stream, and records the session it implies.
    func send(_ event: AuthEvent) {
        lock.withLock {
            switch event {
            case .signedIn(let session), .tokenRefreshed(let session): current = session
            case .signedOut: current = nil
            case .userUpdated(let user): current?.user = user
            case .initialSession, .locked, .unlocked: break
            }
            for continuation in continuations.values { continuation.yield(event) }
        }
    }
}
