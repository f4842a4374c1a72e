import FoundationEssentials
import LatchkeyBasics
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyServer

/// `latchkey jwt decode|verify`: look inside a token, or check it against a key set.
enum JWTCommands {
    static let decode = Command(
        path: ["jwt", "decode"], summary: "Print a JWT's header and claims without verifying anything.",
        arguments: ["TOKEN"], details: "TOKEN may be - to read it from standard input."
    ) { arguments in
        let token = try readToken(arguments[argument: "TOKEN"])
        do {
            let contents = try Insecure.unverifiedContents(of: token)
            print("header (unverified): " + JSONValue.object(contents.header).serializedString)
            print("claims (unverified): " + contents.claims.serializedString)
            return 0
        } catch {
            printError("latchkey: cannot decode: \(error)")
            return 1
        }
    }

    static let verify = Command(
        path: ["jwt", "verify"], summary: "Verify a JWT against a JWK Set and print its claims.",
        arguments: ["TOKEN"],
        options: [
            Option(name: "jwks", valueName: "FILE|URL", help: "the trusted JWK Set", isRequired: true),
            Option(name: "iss", valueName: "ISSUER", help: "required iss"),
            Option(name: "aud", valueName: "AUDIENCE", help: "accepted aud (comma-separated)"),
            Option(name: "alg", valueName: "LIST", help: "allowed algorithms (default ES256,RS256,PS256)"),
            Option(name: "leeway", valueName: "SECONDS", help: "clock slack for exp/nbf/iat (default 60)"),
        ],
        details: """
            Exits 0 and prints the claims when every check passes; otherwise prints the failed
            check and exits 1. A URL must be https, or http on a loopback address. Keys in the set
            that cannot be used (weak RSA, another curve, malformed) are skipped with a warning
            each; a token naming one fails with the reason.
            TOKEN may be - to read it from standard input.
            """
    ) { arguments in
        let source = arguments[option: "jwks"] ?? ""
        let algorithms = try (arguments[option: "alg"] ?? "ES256,RS256,PS256").split(separator: ",").map { name in
            let algorithm = JWSAlgorithm(rawValue: name.trimmingWhitespace().uppercased())
            guard JWSAlgorithm.supported.contains(algorithm), algorithm != .hs256 else {
                throw UsageError(message: "--alg: \(name) is not one of ES256, RS256, PS256")
            }
            return algorithm
        }
        guard let leeway = TimeInterval(arguments[option: "leeway"] ?? "60"), leeway >= 0 else {
            throw UsageError(message: "--leeway must be a number of seconds")
        }
        let token = try readToken(arguments[argument: "TOKEN"])
        let keys: JWSKeySet
        do {
            let jwks = try JWKSet(parsing: try await load(source))
            keys = try JWSKeySet(jwks: jwks, defaultAlgorithm: algorithms.count == 1 ? algorithms[0] : nil)
        } catch {
            printError("latchkey: cannot use the key set: \(error)")
            return 1
        }
        for skipped in keys.skipped {
            printError("latchkey: warning: skipped key \(skipped.keyID.map { "kid \($0.prefix(64))" } ?? "without kid"): \(skipped)")
        }
        let policy = JWTValidationPolicy(
            issuer: arguments[option: "iss"],
            audiences: arguments[option: "aud"].map { Set($0.split(separator: ",").map(String.init)) },
            algorithms: Set(algorithms), leeway: leeway, type: .any)
        do {
            let verified = try JWTVerifier(keys: keys, policy: policy).verify(token)
            print(JSONValue.object(verified.claims.members).serializedString)
            return 0
        } catch {
            printError("verification failed: \(error)")
            return 1
        }
    }

    /// The token argument, or standard input for `-`.
    private static func readToken(_ argument: String) throws -> String {
        guard argument == "-" else { return argument }
        return String(String(decoding: StandardStreams.readInput(), as: UTF8.self).trimmingWhitespace())
    }

    /// The largest key set read from a file or URL.
    private static let maxKeySetBytes = 1 << 20

    /// Reads a key set from a file, or fetches it from an https (or loopback http) URL.
    private static func load(_ source: String) async throws -> [UInt8] {
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            let data = try Data(contentsOf: URL(fileURLWithPath: source))
            guard data.count <= maxKeySetBytes else { throw CLIError("the key set file is larger than 1 MiB") }
            return Array(data)
        }
        guard scheme == "https" || Configuration.isLoopback(url.host ?? "") else { throw CLIError("a key set URL must be https (http only on loopback)") }
        let response: OutboundResponse
        do {
            response = try await EventHTTPClient(maxResponseBytes: maxKeySetBytes).send(
                OutboundRequest(url: url, headers: ["Accept": "application/json"], timeout: .seconds(10)))
        } catch let error as HTTPClientError where error.code == .responseTooLarge {
            throw CLIError("the key set is larger than 1 MiB")
        }
        guard response.status == 200 else { throw CLIError("the key set URL answered \(response.status)") }
        return response.body
    }
}

/// A failure the CLI reports in one line.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
