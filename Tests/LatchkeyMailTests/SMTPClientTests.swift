import Foundation
import LatchkeyJSON
import LatchkeyMail
import LatchkeyTestSupport
import Testing

/// Our SMTP client against aiosmtpd (`scripts/smtp-sink`), a server no one here wrote: TLS as the
/// URL demands, AUTH, SMTPUTF8, dot-stuffing, connection reuse, and every failure classified.
@Suite("SMTP client against aiosmtpd (S33)")
struct SMTPClientTests {
    static let sender = MailAddress("no-reply@id.example", name: "Latchkey")!

    static func message(to address: String = "ada@example.com", name: String? = "Ada", text: String = "Your code is 042917.") -> MIMEMessage {
        MIMEMessage(
            from: sender, to: MailAddress(address, name: name)!, subject: "Your code", text: text, html: "<p>\(text)</p>", date: Date())
    }

    static func client(_ sink: SMTPSink, password: String? = nil, caFile: String?? = nil, url: String? = nil) throws -> SMTPClient {
        var configuration = SMTPClient.Configuration(
            server: try #require(SMTPServer(url: url ?? sink.url)), username: sink.options.user, password: password ?? sink.options.password,
            caFile: caFile ?? sink.caFile, helloName: "latchkey.test")
        configuration.stepTimeout = .seconds(5)
        return try SMTPClient(configuration: configuration)
    }

    @Test("S33: STARTTLS and AUTH PLAIN; the message arrives whole, dot-stuffing undone, and parses with no defect")
    func startTLSAndPlain() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let text = "Line one.\n.\n..two dots\n. a dot and a space\nThe end."
        try await Self.client(sink).send(Self.message(text: text))
        let deliveries = try sink.deliveries()
        try #require(deliveries.count == 1)
        #expect(deliveries[0].tls && deliveries[0].user == "latchkey")
        #expect(deliveries[0].mailFrom == "no-reply@id.example" && deliveries[0].recipients == ["ada@example.com"])
        #expect(!deliveries[0].smtpUTF8)
        let parsed = try JSONValue(parsing: Array(try PythonEmail.parse(deliveries[0].raw).utf8))
        #expect(parsed["defects"] == [])
        #expect(parsed["plain"]?.stringValue == text)
    }

    @Test("S33: AUTH LOGIN when the server offers no PLAIN")
    func login() async throws {
        var options = SMTPSink.Options()
        options.mechanisms = ["LOGIN"]
        let sink = try await SMTPSink.start(options)
        defer { sink.stop() }
        try await Self.client(sink).send(Self.message())
        #expect(try sink.deliveries().map(\.user) == ["latchkey"])
    }

    @Test("S33: smtps:// speaks TLS from the first byte")
    func implicitTLS() async throws {
        var options = SMTPSink.Options()
        options.security = .implicitTLS
        let sink = try await SMTPSink.start(options)
        defer { sink.stop() }
        try await Self.client(sink).send(Self.message())
        #expect(try sink.deliveries().map(\.tls) == [true])
    }

    @Test("S33: smtp:// to a server that offers no STARTTLS sends nothing, not even the credentials")
    func startTLSRequired() async throws {
        var options = SMTPSink.Options()
        options.security = .none
        options.user = nil
        let sink = try await SMTPSink.start(options)
        defer { sink.stop() }
        var configuration = SMTPClient.Configuration(
            server: try #require(SMTPServer(url: "smtp://localhost:\(sink.port)")), username: "latchkey", password: "never-sent-password", helloName: "t")
        configuration.stepTimeout = .seconds(5)
        let error = await #expect(throws: SMTPError.self) { try await SMTPClient(configuration: configuration).send(Self.message()) }
        #expect(error?.kind == .tls && error?.reason.contains("STARTTLS") == true && error?.isPermanent == false)
        #expect(try sink.deliveries().isEmpty)
    }

    @Test("S33: a certificate from a CA we do not trust is refused")
    func untrustedCertificate() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let error = await #expect(throws: SMTPError.self) { try await Self.client(sink, caFile: .some(nil)).send(Self.message()) }
        #expect(error?.kind == .tls && error?.reason.contains("certificate") == true, "\(String(describing: error))")
        #expect(try sink.deliveries().isEmpty)
    }

    @Test("S33: wrong credentials are an authentication error that keeps the message and never shows the password")
    func wrongPassword() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let error = await #expect(throws: SMTPError.self) { try await Self.client(sink, password: "wrong-password-123").send(Self.message()) }
        #expect(error?.kind == .authentication && error?.isPermanent == false)
        #expect(error.map { !"\($0)".contains("wrong-password-123") && !"\($0)".contains(sink.options.password) } == true)
    }

    @Test("S33: a 550 for the recipient is permanent, a 451 transient; the connection serves the next message")
    func refusals() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let client = try Self.client(sink)
        let bounced = await #expect(throws: SMTPError.self) { try await client.send(Self.message(to: "bounce-1@example.com")) }
        #expect(bounced?.kind == .refused(code: 550) && bounced?.isPermanent == true)
        let deferred = await #expect(throws: SMTPError.self) { try await client.send(Self.message(to: "later-1@example.com")) }
        #expect(deferred?.kind == .refused(code: 451) && deferred?.isPermanent == false)
        try await client.send(Self.message())
        #expect(try sink.deliveries().count == 1)
    }

    @Test("S33: messages in a row share one connection")
    func reuse() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let client = try Self.client(sink)
        let before = sink.connections()
        for index in 0..<5 { try await client.send(Self.message(to: "user\(index)@example.com")) }
        #expect(try sink.deliveries().count == 5)
        #expect(sink.connections() - before == 1)
    }

    @Test("S33: a kept connection the server dropped is replaced; an outage is a transient connection error")
    func outage() async throws {
        let sink = try await SMTPSink.start()
        let client = try Self.client(sink)
        try await client.send(Self.message())
        sink.stop()
        let error = await #expect(throws: SMTPError.self) { try await client.send(Self.message()) }
        #expect(error?.isOutage == true && error?.isPermanent == false, "\(String(describing: error))")
        let again = try await sink.restart()
        defer { again.stop() }
        try await client.send(Self.message(to: "after@example.com"))
        #expect(try again.deliveries().map(\.recipients) == [["ada@example.com"], ["after@example.com"]])
    }

    @Test("S33: a server that never answers times out at the step's deadline")
    func tarpit() async throws {
        var options = SMTPSink.Options()
        options.tarpit = true
        let sink = try await SMTPSink.start(options)
        defer { sink.stop() }
        var configuration = SMTPClient.Configuration(server: try #require(SMTPServer(url: sink.url)), caFile: sink.caFile, helloName: "t")
        configuration.stepTimeout = .milliseconds(500)
        let start = ContinuousClock.now
        let error = await #expect(throws: SMTPError.self) { try await SMTPClient(configuration: configuration).send(Self.message()) }
        #expect(error?.kind == .timedOut && error?.isOutage == true)
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test("S33: an internationalised address goes with SMTPUTF8")
    func smtpUTF8() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        try await Self.client(sink).send(Self.message(to: "josé@exemple.fr", name: "José"))
        let deliveries = try sink.deliveries()
        #expect(deliveries.map(\.recipients) == [["josé@exemple.fr"]] && deliveries.map(\.smtpUTF8) == [true])
    }

    @Test("S33: CR LF in a display name adds no header and no recipient")
    func headerInjection() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        try await Self.client(sink).send(Self.message(name: "Ada\r\nBcc: victim@example.net\r\nX-Evil: 1"))
        let deliveries = try sink.deliveries()
        try #require(deliveries.count == 1)
        #expect(deliveries[0].recipients == ["ada@example.com"])
        let parsed = try JSONValue(parsing: Array(try PythonEmail.parse(deliveries[0].raw).utf8))
        #expect(parsed["headers"] == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"])
        #expect(parsed["to"] == ["ada@example.com"])
    }

    @Test("S33: bytes a server sends after its 220 to STARTTLS, before the handshake, are refused (CVE-2011-0411)")
    func startTLSInjection() async throws {
        // A server that answers STARTTLS and an injected reply in one write, then waits.
        let script = """
            import socket, sys
            server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
            print(server.getsockname()[1], flush=True)
            connection, _ = server.accept(); reader = connection.makefile("rb")
            connection.sendall(b"220 plain.example ESMTP\\r\\n")
            reader.readline(); connection.sendall(b"250-plain.example\\r\\n250 STARTTLS\\r\\n")
            reader.readline(); connection.sendall(b"220 go ahead\\r\\n250 injected\\r\\n")
            sys.stdin.read()
            """
        let python = try #require(ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"], "needs LATCHKEY_PYTHON (make test sets it)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try Subprocess.launch(process)
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let line = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)) }
        }
        let port = try #require(Int(line.trimmingCharacters(in: .whitespacesAndNewlines)))
        var configuration = SMTPClient.Configuration(server: try #require(SMTPServer(url: "smtp://127.0.0.1:\(port)")), helloName: "t")
        configuration.stepTimeout = .seconds(5)
        let error = await #expect(throws: SMTPError.self) { try await SMTPClient(configuration: configuration).send(Self.message()) }
        #expect(error?.kind == .tls && error?.reason.contains("after its answer to STARTTLS") == true, "\(String(describing: error))")
    }

    @Test("S33: SMTP URLs: the three schemes, default ports, IPv6, and nothing else")
    func urls() {
        #expect(SMTPServer(url: "smtp://mail.example.com") == SMTPServer(url: "smtp://mail.example.com:587"))
        #expect(SMTPServer(url: "smtps://mail.example.com")?.port == 465)
        #expect(SMTPServer(url: "smtp+plain://localhost")?.security == .plain)
        #expect(SMTPServer(url: "smtp://[::1]:2525")?.host == "::1")
        #expect(SMTPServer(url: "smtp+plain://127.0.0.1:25")?.host == "127.0.0.1")
        for bad in ["http://mail.example.com", "smtp://user:pw@mail.example.com", "smtp://", "smtp://mail.example.com:0",
                    "smtp://mail.example.com:99999", "smtp://mail.example.com/path", "smtp://mail example.com", "smtp://mail.example.com\r\n"] {
            #expect(SMTPServer(url: bad) == nil, "\(bad)")
        }
    }
}
