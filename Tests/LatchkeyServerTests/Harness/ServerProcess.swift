import Foundation
import LatchkeyTestSupport

/// The real `latchkey serve` in a child process, for what only a process shows: the banner,
/// exit statuses, signals, a kill in the middle of work.
final class ServerProcess: @unchecked Sendable {
    // @unchecked: the Process and pipes are set up in init and afterwards only read or signalled.
    let process = Process()
    let output = Pipe()
    /// Standard error goes to a file: the access log must never block on a full pipe.
    let errorLog: URL
    /// The URL from the banner's "listening on" line.
    private(set) var baseURL = ""
    /// Everything printed before the banner's first line ended.
    private(set) var banner = ""

    /// Starts `latchkey` with `arguments` in `directory` and waits for the "listening on" line.
    init(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws {
        process.executableURL = Executables.latchkey
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        errorLog = directory.appendingPathComponent("latchkey-\(UUID()).stderr")
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorLog)
        try Subprocess.launch(process)
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: "\n") {
                baseURL = String(text[range.upperBound..<end])
                banner = text
                return
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw ServerProcessError(description: "latchkey did not start: \(text) \(errors)")
    }

    /// Sends a signal.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end, at most `timeout` seconds; returns its status, or nil if it
    /// was still running (then it is killed).
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    /// What the process has written to standard error.
    var errors: String {
        (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
    }
}

struct ServerProcessError: Error, CustomStringConvertible {
    var description: String
}
