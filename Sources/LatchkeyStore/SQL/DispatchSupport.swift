internal import Dispatch
import Synchronization

/// A continuation resumed by whichever comes first of several racers (a health probe and its
/// timer); the later ones do nothing.
final class OneShot: Sendable {
    private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func arm(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ value: Bool) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

extension DispatchTimeInterval {
    /// The duration in whole nanoseconds (a negative one as zero), for a dispatch timer.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }
}
