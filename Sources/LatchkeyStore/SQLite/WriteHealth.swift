import Synchronization

/// A change in whether writes reach the database file, as ``SQLiteDatabase`` reports it to
/// ``SQLiteDatabase/Configuration/onStorageEvent``.
package enum StorageEvent: Sendable {
    /// A write failed with ``StoreError/Code/io`` or ``StoreError/Code/corrupt`` (a full disk,
    /// a read-only or moved file, an I/O error, damage) after the last write had succeeded.
    /// Reported once per outage, not once per failing write.
    case writesFailing(StoreError)
    /// A write succeeded again after an outage: how many writes failed during it, and for how
    /// long.
    case writesRecovered(failedWrites: Int, duration: Duration)
}

/// The outcome of the latest write, for `/readyz` and the error log.
///
/// Every write reports here. While writes succeed that costs one relaxed atomic load; only the
/// changes between failing and succeeding take the lock and call the observer.
final class WriteHealth: Sendable {
    /// The outage under way: when it began and how many writes failed in it.
    struct Outage: Sendable {
        var since: ContinuousClock.Instant
        var failedWrites: Int
        var error: StoreError
    }

    private let failing = Atomic<Bool>(false)
    private let outage = Mutex<Outage?>(nil)
    private let observer: (@Sendable (StorageEvent) -> Void)?

    init(observer: (@Sendable (StorageEvent) -> Void)?) {
        self.observer = observer
    }

    /// Whether the latest write failed on the storage.
    var isFailing: Bool { failing.load(ordering: .acquiring) }

    /// The outage under way, if any.
    var current: Outage? { outage.withLock { $0 } }

    /// Whether `error` means the storage refused the write, rather than the write itself being
    /// wrong (a constraint, a busy lock, a bug).
    static func isStorageFailure(_ error: any Error) -> Bool {
        guard let error = error as? StoreError else { return false }
        return error.code == .io || error.code == .corrupt
    }

    /// Records a write's outcome: `nil` for success.
    func record(_ error: (any Error)?) {
        if let error {
            guard Self.isStorageFailure(error), let error = error as? StoreError else { return }
            let began: Bool = outage.withLock { outage in
                if outage != nil {
                    outage!.failedWrites += 1
                    return false
                }
                outage = Outage(since: .now, failedWrites: 1, error: error)
                failing.store(true, ordering: .releasing)
                return true
            }
            if began { observer?(.writesFailing(error)) }
        } else {
            guard failing.load(ordering: .relaxed) else { return }
            let ended: Outage? = outage.withLock { outage in
                defer { outage = nil }
                failing.store(false, ordering: .releasing)
                return outage
            }
            if let ended { observer?(.writesRecovered(failedWrites: ended.failedWrites, duration: .now - ended.since)) }
        }
    }
}
