import Dispatch

/// Runs blocking client loops (plain sockets) on threads of their own.
///
/// Blocking calls inside Swift tasks would occupy the cooperative pool, which has one thread
/// per core: with a few such tasks nothing else, not even the test's own timer, could run.
package enum BlockingWorkers {
    /// Starts `count` copies of `body` on dispatch threads and returns once all have finished,
    /// without blocking the caller's thread. `action` runs `delay` seconds after the start, on a
    /// dispatch thread too, so a busy task pool cannot postpone it (a signal to a server under load).
    package static func run<T: Sendable>(
        _ count: Int, _ body: @escaping @Sendable (Int) -> T, after delay: Double = 0, do action: @escaping @Sendable () -> Void = {}
    ) async -> [T] {
        let results = Results<T>(count: count)
        let group = DispatchGroup()
        for index in 0..<count {
            DispatchQueue.global().async(group: group) { results.set(index, body(index)) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: action)
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
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
