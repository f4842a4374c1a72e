import Dispatch
package import Foundation
import Synchronization

/// Runs a program to completion, the way a user at a shell would, and collects what it printed.
package enum Subprocess {
    /// Starts `process`, one launch at a time: Foundation's `Process.run()` on Linux can crash
    /// when several threads launch at once, and the test suites run in parallel.
    package static func launch(_ process: Process) throws {
        try launchLock.withLock { _ in try process.run() }
    }

    private static let launchLock = Mutex(())

    /// What a finished program left.
    package struct Result: Sendable {
        package var status: Int32
        package var output: String
        package var error: String
    }

    /// ``run(_:_:input:directory:)`` on a thread of its own, for a child that talks to a server
    /// running in this process: waiting for it on the cooperative pool (one thread per core)
    /// could leave no thread for the server's own handlers. (Not on Dispatch's global queue
    /// either: its threads are the pool's, and it adds about one a second when they block.)
    package static func runDetached(
        _ executable: URL, _ arguments: [String], input: String? = nil, directory: URL? = nil
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Swift.Result { try run(executable, arguments, input: input, directory: directory) })
            }
        }
    }

    /// Runs `executable` with `arguments`, feeding `input` on standard input.
    package static func run(
        _ executable: URL, _ arguments: [String], input: String? = nil, directory: URL? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let error = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        try launch(process)
        if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
        try standardInput.fileHandleForWriting.close()
        // Read standard error on another thread, so neither pipe can fill up and stall the child.
        let errorText = ErrorCollector(error.fileHandleForReading)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self), error: errorText.text)
    }
}

private final class ErrorCollector: @unchecked Sendable {
    // @unchecked: `data` is written once by the reading thread before `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }
    }

    var text: String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
