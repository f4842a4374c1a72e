// latchkey-sdk-probe: an SDK client in its own process.
//
//   latchkey-sdk-probe refresh --url URL --store FILE [--lock FILE] [--go FILE] [--rounds N]
//       Waits until the --go file exists (so that two probes start together), then asks N times
//       for an access token that must live an hour, which forces a refresh each round. With
//       --lock the client coordinates through that lock file (.shared). Prints one line per
//       round, `token <first 16 hex of the token's SHA-256>`, never the token; exits 0, or 1
//       with `error <code>` at the first failure.
//
//   latchkey-sdk-probe bench [--iterations N] [--rounds R]
//       The SDK's cost per authorized request with a fresh token: `authorize(&request)` on a
//       client whose stored session is valid for an hour (no network: a fresh token never needs
//       one). Prints `<name> <ops/s>` per round and `<name>_us <microseconds per call, median
//       round>` for sdk.access_token_fresh (the SDK alone), foundation.set_authorization (setting
//       the header on a URLRequest) and sdk.authorize_fresh_token (both, as an app calls it).
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyClient

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

func refreshProbe(_ arguments: [String]) async -> Int32 {
    guard let url = option("url", in: arguments).flatMap(URL.init(string:)), let store = option("store", in: arguments) else {
        fail("usage: latchkey-sdk-probe refresh --url URL --store FILE [--lock FILE] [--go FILE] [--rounds N]")
    }
    var configuration = LatchkeyConfiguration(baseURL: url, store: FileCredentialStore(url: URL(fileURLWithPath: store)))
    if let lock = option("lock", in: arguments) { configuration.coordination = .shared(lockFile: URL(fileURLWithPath: lock)) }
    let client = LatchkeyClient(configuration: configuration)
    if let go = option("go", in: arguments) {
        while !FileManager.default.fileExists(atPath: go) { try? await Task.sleep(for: .milliseconds(1)) }
    }
    let rounds = Int(option("rounds", in: arguments) ?? "1") ?? 1
    for _ in 0..<rounds {
        do {
            let token = try await client.accessToken(minTTL: .seconds(3600))
            print("token \(Nonce.hash(token).prefix(16))")
        } catch let error as LatchkeyError {
            print("error \(error.code)")
            return 1
        } catch {
            print("error unexpected")
            return 1
        }
    }
    return 0
}

func benchProbe(_ arguments: [String]) async -> Int32 {
    let iterations = Int(option("iterations", in: arguments) ?? "200000") ?? 200_000
    let rounds = Int(option("rounds", in: arguments) ?? "5") ?? 5
    let store = InMemoryCredentialStore()
    let user = Account.User(
        id: "bench", email: nil, emailVerified: false, isPrivateEmail: false, givenName: nil, familyName: nil, createdAt: Date())
    // A session as a sign-in stores it; a fresh token is never sent anywhere, so none is needed.
    let session = Session(
        accessToken: String(repeating: "a", count: 600), refreshToken: "r", expiresAt: Date().addingTimeInterval(3600),
        sessionID: "s", user: user)
    do { try store.save(StoredSession(session: session)) } catch { fail("the in-memory store refused") }
    let client = LatchkeyClient(configuration: LatchkeyConfiguration(baseURL: URL(string: "http://127.0.0.1:9")!, store: store))
    var request = URLRequest(url: URL(string: "http://127.0.0.1:9/v1/me")!)
    func measure(_ name: String, _ body: () async throws -> Void) async -> Double {
        var perCall: [Double] = []
        for _ in 0..<rounds {
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<iterations {
                do { try await body() } catch { fail("\(name) failed: \(error)") }
            }
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            perCall.append(seconds / Double(iterations))
            print("\(name) \(String(format: "%.1f", Double(iterations) / seconds))")
        }
        perCall.sort()
        return perCall[perCall.count / 2] * 1e6
    }
    // The parts: the SDK's own decision (actor hop, clock, expiry check), then setting the
    // header on Foundation's URLRequest, then both as an app calls them.
    let token = await measure("sdk.access_token_fresh") { _ = try await client.accessToken() }
    let header = await measure("foundation.set_authorization") { request.setValue("Bearer " + session.accessToken, forHTTPHeaderField: "Authorization") }
    let authorize = await measure("sdk.authorize_fresh_token") { try await client.authorize(&request) }
    print("sdk.access_token_fresh_us \(String(format: "%.3f", token))")
    print("foundation.set_authorization_us \(String(format: "%.3f", header))")
    print("sdk.authorize_fresh_token_us \(String(format: "%.3f", authorize))")
    return request.value(forHTTPHeaderField: "Authorization") == "Bearer " + session.accessToken ? 0 : 1
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "refresh": exit(await refreshProbe(arguments))
case "bench": exit(await benchProbe(arguments))
default: fail("usage: latchkey-sdk-probe refresh|bench [options]")
}
