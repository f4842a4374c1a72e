import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// DPoP proofs (RFC 9449) for the HTTP benchmarks, which wrk cannot sign:
///
///   latchkey-bench dpop-proofs KEYFILE METHOD URL COUNT [ACCESS_TOKEN]
///
/// prints COUNT proofs by the P-256 key in KEYFILE (32 raw bytes, made on first use), one per
/// line, each with a new `jti` and the current `iat`, and `ath` for ACCESS_TOKEN when given. They
/// stay good for the server's 60 s window. `seed-sessions CONFIG COUNT KEYFILE` binds the
/// sessions it makes to the same key.
enum DPoPProofMaker {
    static func run(_ arguments: [String]) -> Int32 {
        guard (4...5).contains(arguments.count), let count = Int(arguments[3]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench dpop-proofs KEYFILE METHOD URL COUNT [ACCESS_TOKEN]\n".utf8))
            return 2
        }
        do {
            let signer = JWSSigner.es256(try key(arguments[0]))
            let header: [String: JSONValue] = ["typ": "dpop+jwt", "jwk": try signer.publicJWK.json]
            let ath = arguments.count == 5 ? Base64URL.encode(HashFunction.sha256.hash(Array(arguments[4].utf8))) : nil
            let iat = JSONValue.number(Date().timeIntervalSince1970.rounded(.down))
            var lines = ""
            lines.reserveCapacity(count * 600)
            for _ in 0..<count {
                var claims: [String: JSONValue] = [
                    "jti": .string(Base64URL.encode(SecureRandom.bytes(count: 16))), "htm": .string(arguments[1]), "htu": .string(arguments[2]),
                    "iat": iat,
                ]
                if let ath { claims["ath"] = .string(ath) }
                lines += try JWS.sign(payload: JSONValue.object(claims).serialized, header: header, signer: signer) + "\n"
            }
            FileHandle.standardOutput.write(Data(lines.utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("dpop-proofs: \(error)\n".utf8))
            return 1
        }
    }

    /// The key in `file`, made and saved there when the file does not exist yet.
    static func key(_ file: String) throws -> P256.Signing.PrivateKey {
        if let raw = FileManager.default.contents(atPath: file) { return try P256.Signing.PrivateKey(rawRepresentation: Array(raw)) }
        let key = P256.Signing.PrivateKey()
        try Data(key.rawRepresentation).write(to: URL(fileURLWithPath: file))
        return key
    }

    /// The RFC 7638 thumbprint of the key in `file`: what a session bound to it stores.
    static func thumbprint(_ file: String) throws -> String {
        try JWK(try key(file).publicKey, keyID: nil).thumbprint()
    }
}
