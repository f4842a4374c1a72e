import Dispatch
import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import Synchronization

/// `latchkey-bench apple-tokens DIR COUNT`: plays Apple for the sign-in benchmark. Writes into
/// DIR a fresh RS256 key set (`apple-keys.json`, served to the server as its `keys_url`), a team
/// key for the configuration (`apple.p8`), and COUNT distinct identity tokens
/// (`apple-tokens.txt`, `token raw_nonce` per line) for 64 users, signed on every core.
enum AppleTokenMinter {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench apple-tokens DIR COUNT\n".utf8))
            return 2
        }
        let directory = URL(fileURLWithPath: arguments[0])
        do {
            let signer = JWSSigner.rs256(try RSA.Signing.PrivateKey(keySize: 2048), keyID: "bench")
            try Data(JWKSet(keys: [try signer.publicJWK]).json.serialized).write(to: directory.appendingPathComponent("apple-keys.json"))
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: directory.appendingPathComponent("apple.p8"))
            let now = Date()
            let lines = Mutex([String](repeating: "", count: count))
            let failed = Atomic(false)
            DispatchQueue.concurrentPerform(iterations: count) { index in
                let raw = Base64URL.encode(SecureRandom.bytes(count: 16))
                var claims = JWTClaims()
                claims.issuer = "https://appleid.apple.com"
                claims.audience = ["com.example.app"]
                claims.subject = "000100.bench\(index % 64).0001"
                claims.issuedAt = now
                claims.expiresAt = now.addingTimeInterval(3600)
                claims["email"] = .string("user\(index % 64)@privaterelay.appleid.com")
                claims["email_verified"] = true
                claims["is_private_email"] = "true"
                claims["nonce"] = .string(HashFunction.sha256.hexDigest(Array(raw.utf8)))
                claims["nonce_supported"] = true
                guard let token = try? signer.sign(claims, type: nil) else {
                    failed.store(true, ordering: .relaxed)
                    return
                }
                lines.withLock { $0[index] = token + " " + raw }
            }
            guard !failed.load(ordering: .relaxed) else { throw CryptoError.library("signing failed") }
            try Data((lines.withLock { $0 }.joined(separator: "\n") + "\n").utf8).write(to: directory.appendingPathComponent("apple-tokens.txt"))
            return 0
        } catch {
            FileHandle.standardError.write(Data("apple-tokens: \(error)\n".utf8))
            return 1
        }
    }
}

/// `latchkey-bench apple-codes URL COUNT`: asks a development server's sandbox Apple for COUNT
/// fresh authorizations (identity token and single-use code) and prints
/// `token raw_nonce code` per line, for the sign-in benchmark with code exchange.
enum AppleCodeCollector {
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 2, let base = URL(string: arguments[0]), let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench apple-codes URL COUNT\n".utf8))
            return 2
        }
        let client = EventHTTPClient()
        let url = base.appendingPathComponent("sandbox/apple/authorize")
        do {
            let lines = try await withThrowingTaskGroup(of: String.self) { group in
                var lines = [String]()
                for index in 0..<count {
                    if index >= 16, let line = try await group.next() { lines.append(line) }
                    group.addTask {
                        let raw = Base64URL.encode(SecureRandom.bytes(count: 16))
                        let nonce = HashFunction.sha256.hexDigest(Array(raw.utf8))
                        let body: JSONValue = ["sub": .string("000200.bench\(index % 64).0002"), "nonce": .string(nonce), "email": "bench@example.com"]
                        let response = try await client.send(
                            OutboundRequest(url: url, method: .post, headers: ["Content-Type": "application/json"], body: body.serialized))
                        let json = try JSONValue(parsing: response.body)
                        guard let token = json["identity_token"]?.stringValue, let code = json["authorization_code"]?.stringValue else {
                            throw CryptoError.library("the sandbox answered \(response.status)")
                        }
                        return "\(token) \(raw) \(code)"
                    }
                }
                for try await line in group { lines.append(line) }
                return lines
            }
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("apple-codes: \(error)\n".utf8))
            return 1
        }
    }
}
