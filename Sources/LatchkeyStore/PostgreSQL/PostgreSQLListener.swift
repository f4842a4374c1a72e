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
/// per batch. When the connection is lost, or cannot be made, it tries again each second; after
/// it is made again it calls `onChange` once, since notifications sent meanwhile were missed.
final class PostgreSQLListener: Sendable {
    private let channel: String
    private let connector: PostgreSQLConnector
    private let onChange: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)
    private let queue: DispatchQueue

    init(channel: String, connector: PostgreSQLConnector, onChange: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.connector = connector
        self.onChange = onChange
        self.queue = DispatchQueue(label: "latchkey.store.postgresql.listen.\(channel)")
    }

    /// Starts listening.
    func start() {
        queue.async { self.run() }
    }

    /// Ends the session within about half a second.
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    private func run() {
        var connectedBefore = false
        while !isStopped {
            guard let handle = try? connector.connect() else {
                pause()
                continue
            }
            if listen(on: handle) {
                if connectedBefore { onChange() }
                connectedBefore = true
                wait(on: handle)
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
        while !isStopped {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 500)
            if ready < 0, errno != EINTR { return }
            if ready > 0 {
                guard PQconsumeInput(handle) == 1 else { return }
            }
            var heard = false
            while let notification = PQnotifies(handle) {
                heard = true
                PQfreemem(notification)
            }
            if heard { onChange() }
            if PQstatus(handle) != CONNECTION_OK { return }
        }
    }
}
