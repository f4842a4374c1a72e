import Dispatch
package import Foundation
import Synchronization

/// The real `latchkey` in a child process, for what only a process shows: the banner, exit
/// statuses, signals, a kill in the middle of work, an app talking to a dev server.
///
/// Starting and waiting never hold a thread of Swift's cooperative pool (one per core): the
/// banner is read on a thread of its own, and the exit arrives through `terminationHandler`.
/// Suites run in parallel, and a pool thread blocked in a read would stall every other test.
package final class ServerProcess: @unchecked Sendable {
    // @unchecked: the Process is set up before launch and afterwards only signalled; what
    // changes (the exit status, the output) is behind mutexes.
    private let process: Process
    private let exit: ExitWatch
    /// Standard error goes to a file: the access log must never block on a full pipe.
    package let errorLog: URL
    /// The URL from the banner's "listening on" line.
    package let baseURL: String
    /// Everything printed before the banner's first line ended.
    package let banner: String

    private init(process: Process, exit: ExitWatch, errorLog: URL, baseURL: String, banner: String) {
        self.process = process
        self.exit = exit
        self.errorLog = errorLog
        self.baseURL = baseURL
        self.banner = banner
    }

    /// Starts `latchkey` with `arguments` in `directory` and waits for the "listening on" line.
    ///
    /// - Parameters:
    ///   - environment: Set on top of this process's environment (`LATCHKEY_…` settings).
    ///   - timeout: How long the banner may take; then the process is killed.
    /// - Throws: ``ServerProcessError`` with what the process printed when it ended or timed
    ///   out before the banner.
    package static func start(
        _ arguments: [String], in directory: URL, environment: [String: String] = [:], timeout: Duration = .seconds(60)
    ) async throws -> ServerProcess {
        let process = Process()
        process.executableURL = Executables.latchkey
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let errorLog = directory.appendingPathComponent("latchkey-\(UUID()).stderr")
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorLog)
        let exit = ExitWatch()
        process.terminationHandler = { exit.exited($0.terminationStatus) }
        try Subprocess.launch(process)
        let pid = process.processIdentifier

        // The banner is read on a thread of its own, which then drains standard output to its
        // end so the server never blocks on a full pipe.
        let banner = OneShot<(url: String, text: String)?>()
        let reading = output.fileHandleForReading
        Thread.detachNewThread {
            var text = ""
            var found = false
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                guard !found else { continue }
                text += String(decoding: chunk, as: UTF8.self)
                if let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: "\n") {
                    found = true
                    banner.resume((String(text[range.upperBound..<end]), text))
                }
            }
            if !found { banner.resume(nil) }
            try? reading.close()
        }
        let timer = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGKILL)
        }
        let started = await banner.value
        timer.cancel()
        guard let started else {
            kill(pid, SIGKILL)
            _ = await exit.status()
            let errors = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            throw ServerProcessError(description: "latchkey did not start: \(errors)")
        }
        return ServerProcess(process: process, exit: exit, errorLog: errorLog, baseURL: started.url, banner: started.text)
    }

    /// The child's process id.
    package var processIdentifier: Int32 { process.processIdentifier }

    /// Sends a signal.
    package func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end, at most `timeout` seconds, without holding a thread.
    ///
    /// - Returns: Its exit status, or `nil` if it was still running (then it is killed).
    package func waitForExit(timeout: TimeInterval) async -> Int32? {
        let pid = process.processIdentifier
        let exit = exit
        return await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await exit.status() }
            group.addTask {
                // Cancelled once the process ended; otherwise the kill ends the first task too.
                guard (try? await Task.sleep(for: .seconds(timeout))) != nil else { return nil }
                kill(pid, SIGKILL)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// For `defer`: sends `signal` and returns at once. A process that has not ended 15 seconds
    /// later is killed, so nothing outlives the test run.
    package func stop(_ signal: Int32 = SIGTERM) {
        let pid = process.processIdentifier
        kill(pid, signal)
        guard signal != SIGKILL else { return }
        let exit = exit
        Self.reaper.asyncAfter(deadline: .now() + 15) {
            if exit.hasExited == false { kill(pid, SIGKILL) }
        }
    }

    /// A serial queue of its own (see ``BlockingWorkers`` on Dispatch's global queue).
    private static let reaper = DispatchQueue(label: "latchkey.tests.reaper")

    /// Whether the process is still running.
    package var isRunning: Bool { !exit.hasExited }

    /// What the process has written to standard error.
    package var errors: String {
        (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
    }
}

/// A child that did not start, with what it printed.
package struct ServerProcessError: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) { self.description = description }
}

/// The exit status of a child, for any number of waiters, from `Process.terminationHandler`.
private final class ExitWatch: Sendable {
    private let state = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    func exited(_ status: Int32) {
        let waiters = state.withLock { state in
            state.status = status
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    var hasExited: Bool { state.withLock { $0.status != nil } }

    func status() async -> Int32 {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> Int32? in
                if let status = state.status { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}

/// A value handed over once from any thread to one async waiter.
private final class OneShot<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, done: Bool, waiter: CheckedContinuation<Value, Never>?)>((nil, false, nil))

    func resume(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard !state.done else { return nil }
            state.done = true
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let known = state.withLock { state -> Value?? in
                    if state.done { return .some(state.value) }
                    state.waiter = continuation
                    return .none
                }
                if case .some(let value) = known { continuation.resume(returning: value!) }
            }
        }
    }
}
