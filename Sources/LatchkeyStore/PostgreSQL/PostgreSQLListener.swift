internal import CLatchkeyPQ
internal import Dispatch
import Synchronization
#if canImport(Glibc)
private import Glibc
#elseif canImport(Musl)
private import Musl
#endif

/// One `LISTEN` session for one channel: a connection of its own, outside the pool, on a
/// dispatch queue of its own that it blocks for as long as it runs.
///
/// It waits on the connection's socket (`poll`, half a second at a time so that ``stop()`` is
/// seen soon), reads notifications with `PQconsumeInput`/`PQnotifies` and calls `onChange` once
/// per batch. After `checkInterval` without a word from the server it asks `SELECT 1`, and gives
/// the connection up when no answer comes within the connector's response timeout: a connection
/// can be half dead (a server that hangs, a peer gone without a reset, a network that drops
/// packets) and then no notification ever arrives and no error either; TCP keepalives
/// (``PostgreSQLConnector``) catch a dead peer, not a hung server. When the connection is lost,
/// or cannot be made, it tries again each second; after it is made again it calls `onChange`
/// once, since notifications sent meanwhile were missed. ``start()`` returns once the first
/// `LISTEN` took effect (or its first attempt failed, or two seconds passed), so a change
/// committed after it returns is heard; when the first `LISTEN` comes later than that, it calls
/// `onChange` too.
final class PostgreSQLListener: Sendable {
    private let channel: String
    private let connector: PostgreSQLConnector
    private let onChange: @Sendable () -> Void
    private let checkInterval: Duration
    private let stopped = Atomic<Bool>(false)
    private let queue: DispatchQueue
    /// Whether the first `LISTEN` took effect, and whether ``start()`` stopped waiting for it:
    /// decided under one lock, so a change in between is told either way.
    private let firstListen = Mutex((listening: false, startGaveUp: false))

    init(channel: String, connector: PostgreSQLConnector, checkInterval: Duration, onChange: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.connector = connector
        self.checkInterval = checkInterval
        self.onChange = onChange
        self.queue = DispatchQueue(label: "latchkey.store.postgresql.listen.\(channel)")
    }

    /// How long ``start()`` waits for the first `LISTEN`.
    static let startWait = 2.0

    /// Starts listening, and returns once the first attempt is over (at most ``startWait``).
    func start() {
        let firstAttempt = DispatchSemaphore(value: 0)
        queue.async { self.run(firstAttempt) }
        if firstAttempt.wait(timeout: .now() + Self.startWait) == .timedOut {
            firstListen.withLock { if !$0.listening { $0.startGaveUp = true } }
        }
    }

    /// Ends the session within about half a second.
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    private func run(_ firstAttempt: DispatchSemaphore) {
        var first = true
        while !isStopped {
            guard let handle = try? connector.connect() else {
                if first { firstAttempt.signal() }
                first = false
                pause()
                continue
            }
            if listen(on: handle) {
                let missed = firstListen.withLock { state in
                    defer { state.listening = true }
                    return !first || state.startGaveUp
                }
                if first { firstAttempt.signal() }
                first = false
                if missed { onChange() }
                wait(on: handle)
            } else if first {
                firstAttempt.signal()
                first = false
            }
            PQfinish(handle)
            if !isStopped { pause() }
        }
    }

    /// Sleeps about a second before the next attempt, waking early to stop.
    private func pause() {
        for _ in 0..<10 where !isStopped { usleep(100_000) }
    }

    /// `LISTEN channel`; the name was checked, so it goes into the text as it is.
    private func listen(on handle: OpaquePointer) -> Bool {
        guard let result = PQexec(handle, "LISTEN \(channel)") else { return false }
        defer { PQclear(result) }
        return PQresultStatus(result) == PGRES_COMMAND_OK
    }

    /// Delivers notifications until the connection is lost or the listener stops.
    private func wait(on handle: OpaquePointer) {
        var heardAt = ContinuousClock.now
        while !isStopped {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 500)
            if ready < 0, errno != EINTR { return }
            if ready > 0 {
                guard PQconsumeInput(handle) == 1 else { return }
                heardAt = .now
            }
            var heard = false
            while let notification = PQnotifies(handle) {
                heard = true
                PQfreemem(notification)
            }
            if heard { onChange() }
            if PQstatus(handle) != CONNECTION_OK { return }
            if ContinuousClock.now - heardAt >= checkInterval {
                guard answers(handle) else { return }
                heardAt = .now
            }
        }
    }

    /// Whether the server answers `SELECT 1` within the response timeout. Notifications that
    /// arrive meanwhile stay queued in libpq for `PQnotifies`.
    private func answers(_ handle: OpaquePointer) -> Bool {
        guard PQsendQuery(handle, "SELECT 1") == 1 else { return false }
        let deadline = ContinuousClock.now + connector.responseTimeout
        while true {
            guard PQconsumeInput(handle) == 1 else { return false }
            if PQisBusy(handle) == 0 { break }
            let left = deadline - ContinuousClock.now
            guard left > .zero, !isStopped else { return false }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let milliseconds = min(500, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1)
            if poll(&descriptor, 1, milliseconds) < 0, errno != EINTR { return false }
        }
        var answered = false
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_TUPLES_OK { answered = true }
            PQclear(result)
        }
        return answered
    }
}
