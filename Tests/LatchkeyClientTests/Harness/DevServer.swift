import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyClient
import LatchkeyJSON
import LatchkeyTestSupport

/// The real `latchkey serve --dev` in a child process on a free port, with its own SQLite file
/// and the sandbox Apple it mounts: what an app on a developer's machine talks to.
final class DevServer: Sendable {
    let directory: TemporaryDirectory
    let process: ServerProcess
    /// From the banner's "listening on" line.
    let baseURL: URL

    private init(directory: TemporaryDirectory, process: ServerProcess, baseURL: URL) {
        self.directory = directory
        self.process = process
        self.baseURL = baseURL
    }

    /// Starts the server, with `environment` on top of this process's (`LATCHKEY_…` settings).
    static func start(environment: [String: String] = [:]) async throws -> DevServer {
        let directory = try TemporaryDirectory("sdk")
        do {
            let process = try await ServerProcess.start(
                ["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory.url, environment: environment)
            guard let url = URL(string: process.baseURL) else {
                process.stop(SIGKILL)
                throw HarnessError("latchkey serve --dev printed no URL: \(process.banner)")
            }
            return DevServer(directory: directory, process: process, baseURL: url)
        } catch {
            directory.remove()
            throw HarnessError("latchkey serve --dev did not start (is it built?): \(error)")
        }
    }

    /// Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its directory.
    func stop() async {
        process.send(SIGTERM)
        _ = await process.waitForExit(timeout: 10)
        directory.remove()
    }

    /// Runs `body` against a fresh server, stopping it afterwards whatever happens.
    static func with<T>(environment: [String: String] = [:], _ body: (DevServer) async throws -> T) async throws -> T {
        let server = try await DevServer.start(environment: environment)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// A client of this server with `store` (a fresh in-memory one by default).
    func client(
        store: any CredentialStore = InMemoryCredentialStore(), transport: any HTTPTransport = URLSessionTransport(),
        configure: (inout LatchkeyConfiguration) -> Void = { _ in }
    ) -> LatchkeyClient {
        var configuration = LatchkeyConfiguration(baseURL: baseURL, store: store)
        configure(&configuration)
        return LatchkeyClient(configuration: configuration, transport: transport)
    }

    /// How many audit entries of `event` the server wrote for `userID`, read with `latchkey audit`
    /// from the server's own database while it runs, as an operator would.
    func auditCount(_ event: String, userID: String) async throws -> Int {
        let result = try await Subprocess.runDetached(
            Executables.latchkey, ["audit", "--user", userID, "--event", event, "--json", "--limit", "100000"], directory: directory.url)
        guard result.status == 0 else { throw HarnessError("latchkey audit failed: \(result.error)") }
        return result.output.split(separator: "\n").count
    }

    /// Posts `body` to `path` and returns the status and the parsed answer (for the sandbox).
    func post(_ path: String, _ body: JSONValue) async throws -> (status: Int, json: JSONValue) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.serialized)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, data.isEmpty ? .null : (try? JSONValue(parsing: Array(data))) ?? .null)
    }

    /// What Sign in with Apple would hand the app: the sandbox Apple authorizes with the hash of
    /// a fresh ``Nonce``; on a first authorization Apple also shares `name`.
    func appleCredential(email: String, subject: String? = nil, name: PersonName? = nil) async throws -> AppleCredential {
        let nonce = Nonce.make()
        var body: [String: JSONValue] = ["nonce": .string(nonce.sha256), "email": .string(email)]
        if let subject { body["sub"] = .string(subject) }
        let answer = try await post("/sandbox/apple/authorize", .object(body))
        guard answer.status == 200, let token = answer.json["identity_token"]?.stringValue, let sub = answer.json["sub"]?.stringValue else {
            throw HarnessError("the sandbox Apple did not authorize: \(answer.status)")
        }
        return AppleCredential(
            user: sub, identityToken: token, authorizationCode: answer.json["authorization_code"]?.stringValue, rawNonce: nonce.raw,
            name: name, email: email)
    }

    /// Has the sandbox Apple send this server a signed notification (`consent-revoked`, …).
    func appleNotification(subject: String, type: String) async throws -> Int {
        try await post("/sandbox/apple/notify", ["sub": .string(subject), "type": .string(type)]).status
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
