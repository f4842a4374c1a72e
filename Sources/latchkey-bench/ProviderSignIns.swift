import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import Synchronization

/// `latchkey-bench provider-sign-ins URL CLIENT_ID COUNT CONCURRENCY [STEPS]`: COUNT complete sign-ins
/// through the upstream provider `bench` of the server at URL, as a browser and an app would do
/// them, CONCURRENCY at a time, and prints `provider_sign_in RATE` (completed sign-ins per second
/// over the whole run), `provider_sign_in_failed N` and `provider_sign_in_client_cpu µs` (this
/// process's own CPU per sign-in).
///
/// One sign-in, with a fresh cookie jar (a browser without a session):
/// 1. `GET /oauth/authorize?…&provider=bench` (PKCE S256) → 303 to the upstream's authorize
///    endpoint, with the `__Host-latchkey_provider` cookie;
/// 2. the upstream's sign-in form posted (`email`, `email_verified=true`, `action=continue`; the
///    page itself is not fetched) → 303 to the server's callback with the upstream's code;
/// 3. `GET` the callback with the cookie: the server exchanges the code at the upstream, checks
///    the ID token and signs in (or makes) the account → 303 to `/oauth/authorize`, with the
///    browser session's cookie;
/// 4. `GET /oauth/authorize` with that session → 303 to the client's redirect URI with a code;
/// 5. `POST /oauth/token` with the code and the PKCE verifier → 200 with an access token.
///
/// Sign-in `n` is for `bench{n % 1000}@example.com`: a first run of 1,000 makes the accounts
/// (first sign-ins); later runs sign existing accounts in. Every answer is checked; a failure is
/// counted, and the first few are printed on standard error. Requests go over keep-alive
/// HTTP/1.1 connections (at most CONCURRENCY per origin). With STEPS (1 to 5), each flow stops
/// after that step, and counts as completed there: to see what each step costs the server.
///
/// `latchkey-bench sandbox-tokens ISSUER SECRET_FILE COUNT CONCURRENCY`: the reference, the
/// upstream's own token endpoint. Mints COUNT codes at a development server's sandbox OpenID
/// provider (ISSUER is its `…/sandbox/oidc`, SECRET_FILE holds its client secret, as
/// `LATCHKEY_PROVIDER_SANDBOX_SECRET` gave it), untimed, then exchanges them all,
/// CONCURRENCY at a time, as the server does in step 3 (`client_secret_basic`, PKCE), and prints
/// `sandbox_token RATE`, `sandbox_token_failed N` and `sandbox_token_client_cpu µs`.
///
/// The sandbox keeps at most 10,000 unexpired codes (60 s) and access tokens (300 s): COUNT, and
/// the sign-ins a server sends one sandbox process, must stay under that.
enum ProviderSignIns {
    static let emails = 1000
    static let redirectURI = "http://127.0.0.1/cb"
    static let providerID = "bench"

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func client(concurrency: Int) throws -> EventHTTPClient {
        var configuration = EventHTTPClient.Configuration()
        configuration.maxIdleConnectionsPerOrigin = concurrency
        return try EventHTTPClient(configuration: configuration)
    }

    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 4 || arguments.count == 5, let base = URL(string: arguments[0]), let count = Int(arguments[2]), count > 0,
            let concurrency = Int(arguments[3]), concurrency > 0, let steps = arguments.count == 5 ? Int(arguments[4]) : 5, (1...5).contains(steps)
        else {
            FileHandle.standardError.write(Data("usage: latchkey-bench provider-sign-ins URL CLIENT_ID COUNT CONCURRENCY [STEPS]\n".utf8))
            return 2
        }
        let clientID = arguments[1]
        do {
            let http = try client(concurrency: concurrency)
            let (rate, failed, cpu) = await timed(count: count, concurrency: concurrency) { index in
                try await signIn(index, base: base, clientID: clientID, steps: steps, http: http)
            }
            print("provider_sign_in \(String(format: "%.1f", rate))")
            print("provider_sign_in_failed \(failed)")
            print("provider_sign_in_client_cpu \(String(format: "%.1f", cpu))")
            return 0
        } catch {
            FileHandle.standardError.write(Data("provider-sign-ins: \(error)\n".utf8))
            return 1
        }
    }

    static func runTokens(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 4, let issuer = URL(string: arguments[0]), let count = Int(arguments[2]), count > 0,
            let concurrency = Int(arguments[3]), concurrency > 0
        else {
            FileHandle.standardError.write(Data("usage: latchkey-bench sandbox-tokens ISSUER SECRET_FILE COUNT CONCURRENCY\n".utf8))
            return 2
        }
        do {
            let secret = try String(contentsOfFile: arguments[1], encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let http = try client(concurrency: concurrency)
            let verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
            let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
            // The codes, made before the clock starts.
            let codes = try await withThrowingTaskGroup(of: String.self) { group in
                var codes = [String]()
                codes.reserveCapacity(count)
                for index in 0..<count {
                    if index >= concurrency, let code = try await group.next() { codes.append(code) }
                    group.addTask {
                        let fields = [
                            "client_id": "latchkey-dev", "redirect_uri": redirectURI, "response_type": "code", "scope": "openid email profile",
                            "code_challenge": challenge, "code_challenge_method": "S256", "nonce": "n\(index)", "state": "s\(index)",
                            "email": "bench\(index % emails)@example.com", "email_verified": "true", "action": "continue",
                        ]
                        let response = try await http.send(.form(issuer.appendingPathComponent("authorize"), fields))
                        guard response.status == 303, let location = response.headers["Location"],
                            let code = query(location)["code"]
                        else { throw Failure("the sandbox's authorize answered \(response.status): \(response.headers["Location"] ?? "")") }
                        return code
                    }
                }
                for try await code in group { codes.append(code) }
                return codes
            }
            let pair = PercentEncoding.encode("latchkey-dev") + ":" + PercentEncoding.encode(secret)
            let authorization = "Basic " + Data(pair.utf8).base64EncodedString()
            let token = issuer.appendingPathComponent("token")
            let (rate, failed, cpu) = await timed(count: count, concurrency: concurrency) { index in
                var request = OutboundRequest.form(
                    token, ["grant_type": "authorization_code", "code": codes[index], "redirect_uri": redirectURI, "code_verifier": verifier])
                request.headers.add("Authorization", authorization)
                let response = try await http.send(request)
                guard response.status == 200, (try? JSONValue(parsing: response.body))?["id_token"]?.stringValue != nil else {
                    throw Failure("the sandbox's token endpoint answered \(response.status): \(String(decoding: response.body.prefix(200), as: UTF8.self))")
                }
            }
            print("sandbox_token \(String(format: "%.1f", rate))")
            print("sandbox_token_failed \(failed)")
            print("sandbox_token_client_cpu \(String(format: "%.1f", cpu))")
            return 0
        } catch {
            FileHandle.standardError.write(Data("sandbox-tokens: \(error)\n".utf8))
            return 1
        }
    }

    /// This process's CPU time so far (user + system), in microseconds.
    static func cpuMicroseconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }

    /// Runs `operation` for indices 0..<count on `concurrency` workers; returns the completed
    /// operations per second, the number that failed (the first five printed), and this
    /// process's CPU per completed operation in µs.
    static func timed(count: Int, concurrency: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async -> (Double, Int, Double) {
        let cpuStart = cpuMicroseconds()
        final class Progress: Sendable {
            let next = Atomic<Int>(0)
            let completed = Atomic<Int>(0)
            let failures = Mutex<[String]>([])
        }
        let progress = Progress()
        let clock = ContinuousClock()
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(concurrency, count) {
                group.addTask {
                    while true {
                        let index = progress.next.wrappingAdd(1, ordering: .relaxed).oldValue
                        guard index < count else { return }
                        do {
                            try await operation(index)
                            progress.completed.wrappingAdd(1, ordering: .relaxed)
                        } catch {
                            progress.failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = cpuMicroseconds() - cpuStart
        let done = max(1, progress.completed.load(ordering: .relaxed))
        let failed = progress.failures.withLock { $0 }
        for failure in failed.prefix(5) { FileHandle.standardError.write(Data("failed: \(failure)\n".utf8)) }
        return (Double(progress.completed.load(ordering: .relaxed)) / seconds, failed.count, cpu / Double(done))
    }

    /// One sign-in, steps 1 to `steps`.
    static func signIn(_ index: Int, base: URL, clientID: String, steps: Int = 5, http: EventHTTPClient) async throws {
        var jar: [String: String] = [:]
        let verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
        let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
        let state = "st\(index)"
        let start = FormEncoding.encode([
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", "openid profile email"),
            ("state", state), ("code_challenge", challenge), ("code_challenge_method", "S256"), ("provider", providerID),
        ])
        // 1: to the upstream.
        var response = try await get(URL(string: base.absoluteString + "/oauth/authorize?" + start)!, jar: &jar, http: http)
        guard response.status == 303, let upstream = response.headers["Location"], let action = URL(string: String(upstream.prefix { $0 != "?" }))
        else {
            throw Failure("authorize answered \(response.status), not 303 to the upstream")
        }
        if steps == 1 { return }
        // 2: the upstream's form.
        var form = query(upstream)
        form["email"] = "bench\(index % emails)@example.com"
        form["email_verified"] = "true"
        form["action"] = "continue"
        response = try await http.send(.form(action, form))
        guard response.status == 303, let callback = response.headers["Location"], query(callback)["code"] != nil else {
            throw Failure("the upstream's form answered \(response.status): \(response.headers["Location"] ?? "")")
        }
        if steps == 2 { return }
        // 3 and 4: the callback, then the authorization endpoint again, to the redirect URI.
        var location = callback
        var hops = 0
        while !location.hasPrefix(redirectURI) {
            hops += 1
            guard hops <= 4, let url = URL(string: location, relativeTo: base)?.absoluteURL else {
                throw Failure("too many redirects, or a bad one: \(location.prefix(120))")
            }
            response = try await get(url, jar: &jar, http: http)
            guard response.status == 303 || response.status == 302, let next = response.headers["Location"] else {
                throw Failure("\(url.path) answered \(response.status): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
            }
            location = next
            if steps == 3 { return }
        }
        let answer = query(location)
        guard let code = answer["code"], answer["state"] == state else { throw Failure("the redirect URI got no code: \(location.prefix(200))") }
        if steps == 4 { return }
        // 5: the app's exchange.
        response = try await http.send(
            .form(
                URL(string: base.absoluteString + "/oauth/token")!,
                ["grant_type": "authorization_code", "client_id": clientID, "code": code, "code_verifier": verifier, "redirect_uri": redirectURI]))
        guard response.status == 200, (try? JSONValue(parsing: response.body))?["access_token"]?.stringValue != nil else {
            throw Failure("/oauth/token answered \(response.status): \(String(decoding: response.body.prefix(200), as: UTF8.self))")
        }
    }

    /// A GET to the server with the jar's cookies; its `Set-Cookie` fields go into the jar.
    static func get(_ url: URL, jar: inout [String: String], http: EventHTTPClient) async throws -> OutboundResponse {
        var headers = HTTPHeaders()
        if !jar.isEmpty { headers.add("Cookie", jar.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")) }
        let response = try await http.send(OutboundRequest(url: url, headers: headers))
        for field in response.headers.values("Set-Cookie") {
            let pair = field.prefix { $0 != ";" }
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals].drop { $0 == " " })
            let value = String(pair[pair.index(after: equals)...])
            let lowered = field.lowercased()
            if value.isEmpty || lowered.contains("max-age=0") || lowered.contains("expires=thu, 01 jan 1970") {
                jar[name] = nil
            } else {
                jar[name] = value
            }
        }
        return response
    }

    /// The query fields of a URL.
    static func query(_ url: String) -> [String: String] {
        let bytes = url.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [:] }
        let query = bytes[bytes.index(after: mark)...]
        let end = query.firstIndex(of: UInt8(ascii: "#")) ?? query.endIndex
        return FormEncoding.decode(String(Substring(url.utf8[query.startIndex..<end]))) ?? [:]
    }
}
