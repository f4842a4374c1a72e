import Foundation

/// Runs blocking client loops (plain sockets) on threads of their own.
///
/// Blocking calls inside Swift tasks would occupy the cooperative pool, which has one thread
/// per core: with a few such tasks nothing else, not even the test's own timer, could run. Nor
/// do they go to Dispatch's global queue: on Linux its pool adds about one thread a second
/// while its threads are blocked, so 16 blocked clients took 15 s to start, and a timer queued
/// behind them (the kill of a crash test) came seconds late.
package enum BlockingWorkers {
    /// Starts `count` copies of `body` on threads of their own and returns once all have
    /// finished, without blocking the caller's thread. `action` runs `delay` seconds after the
    /// start, on a thread of its own too, so a busy task pool cannot postpone it (a signal to a
    /// server under load).
    package static func run<T: Sendable>(
        _ count: Int, _ body: @escaping @Sendable (Int) -> T, after delay: Double = 0, do action: @escaping @Sendable () -> Void = {}
    ) async -> [T] {
        let results = Results<T>(count: count)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: delay)
            action()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Countdown(count) { continuation.resume() }
            for index in 0..<count {
                Thread.detachNewThread {
                    results.set(index, body(index))
                    remaining.finish()
                }
            }
        }
        return results.all
    }
}

import Synchronization

private final class Results<T: Sendable>: Sendable {
    private let values: Mutex<[T?]>
    init(count: Int) { values = Mutex(Array(repeating: nil, count: count)) }
    func set(_ index: Int, _ value: T) { values.withLock { $0[index] = value } }
    var all: [T] { values.withLock { $0.compactMap { $0 } } }
}

/// Calls `done` once `finish()` was called `count` times (at once when `count` is 0).
private final class Countdown: Sendable {
    private let left: Mutex<Int>
    private let done: @Sendable () -> Void

    init(_ count: Int, done: @escaping @Sendable () -> Void) {
        left = Mutex(count)
        self.done = done
        if count == 0 { done() }
    }

    func finish() {
        if left.withLock({ $0 -= 1; return $0 == 0 }) { done() }
    }
}
