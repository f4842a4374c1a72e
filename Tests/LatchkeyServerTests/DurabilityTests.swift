import Foundation
import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyWire
import Synchronization
import Testing

/// What the kernel sees: `strace` attached to a running server records every sync of the WAL
/// and every socket read and write, with their times, while clients do refresh grants.
@Suite("Durability")
struct DurabilityTests {
    @Test("S28: with database_durability full, every refresh grant's answer is sent only after an fdatasync of the WAL that began after its request arrived")
    func s28AnswersLeaveAfterTheirSync() async throws {
        try await Self.withTracedServer(durability: nil) { server, tokens, trace in
            // One client at a time: each grant is a group of its own and needs its own sync.
            var latest = tokens
            for round in 0..<10 {
                for index in latest.indices {
                    latest[index] = try #require(Self.refresh(port: server.port, latest[index]), "round \(round)")
                }
            }
            // Eight clients at once: groups form, and each answer still waits for a sync.
            let chains = Mutex(latest)
            let failures = Atomic<Int>(0)
            _ = await BlockingWorkers.run(latest.count, { index in
                for _ in 0..<10 {
                    let token = chains.withLock { $0[index] }
                    guard let next = Self.refresh(port: server.port, token) else {
                        failures.add(1, ordering: .relaxed)
                        return
                    }
                    chains.withLock { $0[index] = next }
                }
            })
            #expect(failures.load(ordering: .relaxed) == 0)

            let events = try await trace()
            let exchanges = events.exchanges(path: "/v1/token")
            #expect(exchanges.count == 2 * 10 * tokens.count, "every grant's request and answer were traced")
            let syncs = events.walSyncs
            #expect(syncs.count >= 10 * tokens.count, "at least one sync per grant made alone")
            for exchange in exchanges {
                #expect(
                    syncs.contains { $0.start > exchange.received && $0.end <= exchange.answered },
                    "the answer sent at \(exchange.answered) was not preceded by a sync of its write")
            }
            // How far the concurrent half shared syncs, for the log (housekeeping and checkpoints
            // sync too, so no bound is asserted).
            let concurrentStart = exchanges.sorted { $0.received < $1.received }[10 * tokens.count].received
            let concurrentSyncs = syncs.filter { $0.start > concurrentStart }.count
            print("durability full: \(syncs.count) WAL syncs for \(exchanges.count) grants (\(concurrentSyncs) for the \(10 * tokens.count) sent concurrently)")
        }
    }

    @Test("S28: with database_durability normal, refresh grants are answered without any sync of the WAL (the documented risk)")
    func normalDurabilityDoesNotSync() async throws {
        try await Self.withTracedServer(durability: "normal") { server, tokens, trace in
            var latest = tokens
            for index in latest.indices {
                latest[index] = try #require(Self.refresh(port: server.port, latest[index]))
            }
            let events = try await trace()
            let exchanges = events.exchanges(path: "/v1/token")
            #expect(exchanges.count == tokens.count)
            // The checkpoint at shutdown syncs; nothing before the last answer did.
            let lastAnswer = try #require(exchanges.map(\.answered).max())
            #expect(events.walSyncs.filter { $0.start < lastAnswer }.isEmpty)
        }
    }

    @Test("database_durability is full by default, accepts normal, and refuses anything else naming the setting")
    func durabilitySetting() throws {
        #expect(try ConfigurationLoader.load(file: nil, environment: [:]).databaseDurability == "full")
        #expect(try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_DATABASE_DURABILITY": "normal"]).databaseDurability == "normal")
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_DATABASE_DURABILITY": "off"]) }
        do {
            _ = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_DATABASE_DURABILITY": "off"])
        } catch {
            #expect(error.problems == ["LATCHKEY_DATABASE_DURABILITY: must be full or normal"] || error.problems == ["database_durability: must be full or normal"])
        }
    }

    // MARK: Harness

    struct Server {
        let port: Int
    }

    /// Starts `latchkey serve`, signs up eight password accounts for their refresh tokens, then
    /// attaches `strace` to every thread and runs `body`; `trace()` stops the server and parses.
    static func withTracedServer(
        durability: String?, _ body: (Server, [String], () async throws -> TraceEvents) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory("durability").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let configFile = directory.appendingPathComponent("latchkey.json")
        let durabilityField = durability.map { #","database_durability":"\#($0)""# } ?? ""
        try Data(#"{"database":"sqlite:\#(directory.path)/latchkey.sqlite","master_key_file":"\#(directory.path)/master.key","dev":true,"listen":"127.0.0.1:0"\#(durabilityField)}"#.utf8)
            .write(to: configFile)
        let process = try await ServerProcess.start(["serve", "--config", configFile.path], in: directory)
        defer { process.stop(SIGKILL) }
        let server = Server(port: try #require(URLComponents(string: process.baseURL)?.port))

        var tokens = [String]()
        for index in 0..<8 {
            let body = #"{"username":"durable\#(index)@example.com","password":"correct horse battery"}"#
            guard case .response(let bytes) = RawHTTP.exchange(port: server.port, RawHTTP.post("/v1/auth/password/signup", json: body)),
                let response = RawHTTP.parse(bytes), response.status == 201,
                let token = (try? WireTokenResponse(parsing: response.body))?.refreshToken
            else { throw TraceError(description: "sign-up \(index) failed") }
            tokens.append(token)
        }

        let strace = URL(fileURLWithPath: "/usr/bin/strace")
        try #require(FileManager.default.isExecutableFile(atPath: strace.path), "this test needs strace (scripts/bootstrap installs it)")
        let output = directory.appendingPathComponent("trace.txt")
        let messages = directory.appendingPathComponent("strace.stderr")
        _ = FileManager.default.createFile(atPath: messages.path, contents: nil)
        let tracer = Process()
        tracer.executableURL = strace
        // -f with -p follows every thread of the process, and the ones it starts later; -y
        // names each descriptor's file or socket; -ttt -T give each call's start and duration.
        tracer.arguments = [
            "-f", "-p", String(process.processIdentifier), "-ttt", "-T", "-y", "-s", "48", "-o", output.path,
            "-e", "trace=fsync,fdatasync,read,recvfrom,write,writev,sendto,sendmsg",
        ]
        tracer.standardError = try FileHandle(forWritingTo: messages)
        try Subprocess.launch(tracer)
        // strace inherits the test runner's blocked signals, so it is not stopped by one: it
        // ends by itself when the server it traces has exited.
        defer { if tracer.isRunning { process.send(SIGKILL); tracer.waitUntilExit() } }
        // strace says "attached" once it holds every thread.
        _ = try await eventually(within: .seconds(20)) {
            ((try? String(contentsOf: messages, encoding: .utf8)) ?? "").contains("attached") || !tracer.isRunning
        }
        try #require(tracer.isRunning, "strace could not attach: \((try? String(contentsOf: messages, encoding: .utf8)) ?? "")")

        try await body(server, tokens) {
            process.send(SIGTERM)
            _ = await process.waitForExit(timeout: 30)
            tracer.waitUntilExit()
            return TraceEvents(try String(contentsOf: output, encoding: .utf8))
        }
    }

    /// One refresh grant on a connection of its own; the new refresh token, or nil.
    static func refresh(port: Int, _ token: String) -> String? {
        let body = #"{"grant_type":"refresh_token","refresh_token":"\#(token)"}"#
        guard case .response(let bytes) = RawHTTP.exchange(port: port, RawHTTP.post("/v1/token", json: body), timeout: 30),
            let response = RawHTTP.parse(bytes), response.status == 200
        else { return nil }
        return (try? WireTokenResponse(parsing: response.body))?.refreshToken
    }

    struct TraceError: Error, CustomStringConvertible {
        var description: String
    }
}

/// The calls an `strace -f -ttt -T -y` log shows, with calls that another thread interrupted
/// (`<unfinished ...>`, then `<... name resumed>`) joined again.
struct TraceEvents {
    struct Call {
        var thread: String
        var name: String
        var text: String
        var start: Double
        var end: Double
    }

    /// A request read from a socket and the first answer written to the same socket after it.
    struct Exchange {
        var received: Double
        var answered: Double
    }

    var calls: [Call] = []

    init(_ log: String) {
        var pending: [String: (start: Double, text: String)] = [:]
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, let time = Double(parts[1]) else { continue }
            let thread = String(parts[0])
            var text = String(parts[2])
            var start = time
            if text.hasSuffix("<unfinished ...>") {
                pending[thread] = (time, text)
                continue
            }
            if text.hasPrefix("<... "), let begun = pending.removeValue(forKey: thread) {
                start = begun.start
                text = begun.text + text
            }
            guard let open = text.firstIndex(of: "(") else { continue }
            let name = String(text[..<open])
            // The duration is the last `<seconds>` on the line.
            var duration = 0.0
            if let lastOpen = text.lastIndex(of: "<"), text.hasSuffix(">"),
                let seconds = Double(text[text.index(after: lastOpen)..<text.index(before: text.endIndex)])
            {
                duration = seconds
            }
            calls.append(Call(thread: thread, name: name, text: text, start: start, end: start + duration))
        }
    }

    /// Syncs of the write-ahead log.
    var walSyncs: [Call] {
        calls.filter { ($0.name == "fdatasync" || $0.name == "fsync") && $0.text.contains("-wal>") }
    }

    /// Each request for `path` and the answer that followed on its socket.
    func exchanges(path: String) -> [Exchange] {
        func socket(_ call: Call) -> Substring? {
            guard let range = call.text.range(of: "<socket:["), let end = call.text[range.upperBound...].firstIndex(of: "]") else { return nil }
            return call.text[range.upperBound..<end]
        }
        let reads = ["read", "recvfrom"], writes = ["write", "writev", "sendto", "sendmsg"]
        var result: [Exchange] = []
        for request in calls where reads.contains(request.name) && request.text.contains("\"POST \(path) HTTP/1.1") {
            guard let id = socket(request) else { continue }
            let answer = calls.filter { writes.contains($0.name) && $0.start > request.end && socket($0) == id && $0.text.contains("\"HTTP/1.1 ") }
                .min { $0.start < $1.start }
            if let answer { result.append(Exchange(received: request.end, answered: answer.start)) }
        }
        return result
    }
}
