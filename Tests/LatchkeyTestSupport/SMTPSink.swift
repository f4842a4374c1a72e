package import Foundation

/// A real SMTP server for a test: `scripts/smtp-sink`, which runs aiosmtpd (PyPI) from the test
/// venv (`LATCHKEY_PYTHON`) with STARTTLS or implicit TLS and AUTH, and keeps every message it
/// accepts as a file.
///
/// It stops when ``stop()`` is called or the test process ends. A sink that cannot start is an
/// error the test reports; nothing is skipped.
package final class SMTPSink: Sendable {
    package enum Security: String, Sendable {
        case startTLS = "starttls"
        case implicitTLS = "implicit"
        case none
    }

    /// How to start one.
    package struct Options: Sendable {
        package var security: Security = .startTLS
        /// AUTH with this user and ``password`` is required when set.
        package var user: String? = "latchkey"
        package var password = "sink-" + UUID().uuidString
        /// `PLAIN`, `LOGIN`: what the server offers.
        package var mechanisms = ["PLAIN", "LOGIN"]
        /// Accept connections and never answer.
        package var tarpit = false

        package init() {}
    }

    /// One accepted message: its envelope and its bytes as received.
    package struct Delivery: Sendable {
        package var mailFrom: String
        package var recipients: [String]
        package var smtpUTF8: Bool
        package var tls: Bool
        package var user: String?
        package var raw: String
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let port: Int
    /// The CA that signed the sink's certificate (for `localhost` and 127.0.0.1).
    package let caFile: String
    package let directory: URL
    package let options: Options
    private let process: Process

    private init(port: Int, caFile: String, directory: URL, options: Options, process: Process) {
        self.port = port
        self.caFile = caFile
        self.directory = directory
        self.options = options
        self.process = process
    }

    /// `smtp://localhost:PORT` (or `smtps://`, `smtp+plain://`).
    package var url: String {
        switch options.security {
        case .startTLS: "smtp://localhost:\(port)"
        case .implicitTLS: "smtps://localhost:\(port)"
        case .none: "smtp+plain://localhost:\(port)"
        }
    }

    /// Starts a sink in a new directory, or again in `directory` on `port` (same CA, same
    /// mail folder) after ``stop()``.
    package static func start(_ options: Options = Options(), directory: URL? = nil, port: Int? = nil) async throws -> SMTPSink {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-smtp-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var arguments = [scriptURL.path, "--dir", directory.path, "--tls", options.security.rawValue, "--mechanisms", options.mechanisms.joined(separator: ","),
                         "--owner-pid", String(ProcessInfo.processInfo.processIdentifier)]
        if let port { arguments += ["--port", String(port)] }
        if options.tarpit { arguments.append("--tarpit") }
        if let user = options.user {
            let passwordFile = directory.appendingPathComponent("password")
            try Data(options.password.utf8).write(to: passwordFile)
            arguments += ["--user", user, "--password-file", passwordFile.path]
        }
        guard let python = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"] else {
            throw Failure(description: "needs LATCHKEY_PYTHON: the venv of scripts/requirements-test.txt, with aiosmtpd (make test sets it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try Subprocess.launch(process)
        // `port=N` and `ca=PATH`, or the end of the output when Python failed (its error goes to
        // the test's standard error).
        let text = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                while String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n").filter({ $0.hasPrefix("ca=") }).isEmpty {
                    let data = output.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    bytes += data
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if let equals = line.firstIndex(of: "=") { fields[String(line[..<equals])] = String(line[line.index(after: equals)...]) }
        }
        guard let portText = fields["port"], let found = Int(portText), let caFile = fields["ca"] else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Failure(description: "scripts/smtp-sink did not start")
        }
        return SMTPSink(port: found, caFile: caFile, directory: directory, options: options, process: process)
    }

    /// Stops the sink at once (SIGKILL): the port refuses connections until it starts again.
    package func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts it again on the same port, with the same CA and messages.
    package func restart() async throws -> SMTPSink {
        try await Self.start(options, directory: directory, port: port)
    }

    /// Every message accepted so far, in order.
    package func deliveries() throws -> [Delivery] {
        let folder = directory.appendingPathComponent("mail")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let envelope = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) as? [String: Any] ?? [:]
            let raw = try String(contentsOf: folder.appendingPathComponent(name.replacingOccurrences(of: ".json", with: ".eml")), encoding: .utf8)
            return Delivery(
                mailFrom: envelope["mail_from"] as? String ?? "", recipients: envelope["rcpt_tos"] as? [String] ?? [],
                smtpUTF8: envelope["smtputf8"] as? Bool ?? false, tls: envelope["tls"] as? Bool ?? false, user: envelope["user"] as? String, raw: raw)
        }
    }

    /// Connections accepted so far (aiosmtpd's own readiness check is one of them).
    package func connections() -> Int {
        (try? String(contentsOf: directory.appendingPathComponent("connections"), encoding: .utf8)).flatMap { Int($0) } ?? 0
    }

    /// The repository's `scripts/smtp-sink`.
    package static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/smtp-sink")
}
