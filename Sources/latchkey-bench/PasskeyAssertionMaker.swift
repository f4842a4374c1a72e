import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyWebAuthn

/// `latchkey-bench passkey-sign-ins URL ORIGIN DIR COUNT`: plays a software ES256 authenticator
/// for the passkey sign-in benchmark, over HTTP against the running server at URL, as a browser
/// at ORIGIN would.
///
/// The first call for a DIR signs up ``accounts`` accounts with a passkey each
/// (`/v1/auth/passkey/signup/options`, then `/v1/auth/passkey/signup` with attestation `none`)
/// and keeps their keys in DIR/passkeys.txt. Each call then asks for COUNT discoverable sign-in
/// flows (`POST /v1/auth/passkey/options {}`), answers each with an assertion of the accounts'
/// passkeys in turn, and prints one `POST /v1/auth/passkey` body per line, so that the timed
/// run verifies assertions and makes sessions and does nothing else.
enum PasskeyAssertionMaker {
    /// As many accounts as the Apple sign-in benchmark signs in.
    static let accounts = 64

    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 4, let base = URL(string: arguments[0]), let count = Int(arguments[3]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench passkey-sign-ins URL ORIGIN DIR COUNT\n".utf8))
            return 2
        }
        let origin = arguments[1]
        let store = URL(filePath: arguments[2]).appendingPathComponent("passkeys.txt")
        let client = EventHTTPClient()
        do {
            let authenticators: [Authenticator]
            if let text = try? String(contentsOf: store, encoding: .utf8) {
                authenticators = try text.split(separator: "\n").map { try Authenticator(line: String($0)) }
            } else {
                authenticators = try await signUp(accounts, base: base, origin: origin, client: client)
                try Data((authenticators.map(\.line).joined(separator: "\n") + "\n").utf8).write(to: store)
            }
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                var bodies = [String]()
                bodies.reserveCapacity(count)
                for index in 0..<count {
                    if index >= 16, let body = try await group.next() { bodies.append(body) }
                    group.addTask {
                        let (flowID, options) = try await post(base, "v1/auth/passkey/options", [:], client: client)
                        guard let challenge = options["challenge"]?.stringValue.flatMap(Base64URL.decode), let rpID = options["rpId"]?.stringValue
                        else { throw BenchError("the sign-in options carry no challenge or rpId") }
                        let credential = try authenticators[index % authenticators.count].assertion(challenge: challenge, rpID: rpID, origin: origin)
                        return JSONValue.object(["flow_id": .string(flowID), "credential": credential]).serializedString
                    }
                }
                for try await body in group { bodies.append(body) }
                return bodies
            }
            FileHandle.standardOutput.write(Data((bodies.joined(separator: "\n") + "\n").utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("passkey-sign-ins: \(error)\n".utf8))
            return 1
        }
    }

    /// COUNT new accounts, each made by signing up with a new passkey.
    static func signUp(_ count: Int, base: URL, origin: String, client: EventHTTPClient) async throws -> [Authenticator] {
        var made = [Authenticator]()
        for _ in 0..<count {
            let (flowID, options) = try await post(base, "v1/auth/passkey/signup/options", [:], client: client)
            guard let challenge = options["challenge"]?.stringValue.flatMap(Base64URL.decode), let rpID = options["rp"]?["id"]?.stringValue,
                let handle = options["user"]?["id"]?.stringValue.flatMap(Base64URL.decode)
            else { throw BenchError("the sign-up options carry no challenge, rp.id or user.id") }
            let authenticator = Authenticator(key: P256.Signing.PrivateKey(), credentialID: SecureRandom.bytes(count: 32), userHandle: handle)
            let body: JSONValue = ["flow_id": .string(flowID), "credential": try authenticator.registration(challenge: challenge, rpID: rpID, origin: origin)]
            let response = try await client.send(
                OutboundRequest(url: base.appendingPathComponent("v1/auth/passkey/signup"), method: .post,
                                headers: ["Content-Type": "application/json"], body: body.serialized))
            guard response.status == 201 else {
                throw BenchError("passkey sign-up answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
            }
            made.append(authenticator)
        }
        return made
    }

    /// POSTs `body` to PATH and returns the answer's `flow_id` and `publicKey`.
    static func post(_ base: URL, _ path: String, _ body: JSONValue, client: EventHTTPClient) async throws -> (String, JSONValue) {
        let response = try await client.send(
            OutboundRequest(url: base.appendingPathComponent(path), method: .post, headers: ["Content-Type": "application/json"], body: body.serialized))
        let json = try JSONValue(parsing: response.body)
        guard response.status == 200, let flowID = json["flow_id"]?.stringValue, let publicKey = json["publicKey"] else {
            throw BenchError("\(path) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return (flowID, publicKey)
    }

    /// A software ES256 passkey: a synced one (BE and BS set), user verification every time,
    /// sign count always zero, as Apple's and Google's passkeys send.
    struct Authenticator: Sendable {
        static let up: UInt8 = 0x01
        static let uv: UInt8 = 0x04
        static let be: UInt8 = 0x08
        static let bs: UInt8 = 0x10
        static let at: UInt8 = 0x40

        let key: P256.Signing.PrivateKey
        let credentialID: [UInt8]
        let userHandle: [UInt8]

        init(key: P256.Signing.PrivateKey, credentialID: [UInt8], userHandle: [UInt8]) {
            self.key = key
            self.credentialID = credentialID
            self.userHandle = userHandle
        }

        /// Reads a line of DIR/passkeys.txt: `credential_id user_handle private_key`, base64url.
        init(line: String) throws {
            let fields = line.split(separator: " ").map { Base64URL.decode($0) }
            guard fields.count == 3, let id = fields[0], let handle = fields[1], let raw = fields[2] else {
                throw BenchError("passkeys.txt is not what passkey-sign-ins wrote; remove it")
            }
            self.init(key: try P256.Signing.PrivateKey(rawRepresentation: raw), credentialID: id, userHandle: handle)
        }

        var line: String { [credentialID, userHandle, key.rawRepresentation].map(Base64URL.encode).joined(separator: " ") }

        /// The COSE key (RFC 9053 §7.1.1) in canonical order: kty EC2, alg ES256, crv P-256, x, y.
        var coseKey: [UInt8] {
            CBOREncoder.encode(
                .map([
                    CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
                    CBORMapEntry(.integer(-2), .bytes(key.publicKey.x)), CBORMapEntry(.integer(-3), .bytes(key.publicKey.y)),
                ]))
        }

        /// `RegistrationResponseJSON` with attestation `none`.
        func registration(challenge: [UInt8], rpID: String, origin: String) throws -> JSONValue {
            let attested = [UInt8](repeating: 0, count: 16) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID + coseKey
            let data = Self.authenticatorData(rpID: rpID, flags: Self.up | Self.uv | Self.be | Self.bs | Self.at) + attested
            let object = CBOREncoder.encode(
                .map([CBORMapEntry(.text("fmt"), .text("none")), CBORMapEntry(.text("attStmt"), .map([])), CBORMapEntry(.text("authData"), .bytes(data))]))
            let id = Base64URL.encode(credentialID)
            return [
                "id": .string(id), "rawId": .string(id), "type": "public-key",
                "response": [
                    "clientDataJSON": .string(Base64URL.encode(Self.clientDataJSON("webauthn.create", challenge: challenge, origin: origin))),
                    "attestationObject": .string(Base64URL.encode(object)), "transports": ["hybrid", "internal"],
                ],
            ]
        }

        /// `AuthenticationResponseJSON`: the signature over authenticatorData ‖ SHA-256(clientDataJSON).
        func assertion(challenge: [UInt8], rpID: String, origin: String) throws -> JSONValue {
            let clientData = Self.clientDataJSON("webauthn.get", challenge: challenge, origin: origin)
            let data = Self.authenticatorData(rpID: rpID, flags: Self.up | Self.uv | Self.be | Self.bs)
            let signature = try key.signature(for: data + HashFunction.sha256.hash(clientData)).derRepresentation
            let id = Base64URL.encode(credentialID)
            return [
                "id": .string(id), "rawId": .string(id), "type": "public-key",
                "response": [
                    "clientDataJSON": .string(Base64URL.encode(clientData)), "authenticatorData": .string(Base64URL.encode(data)),
                    "signature": .string(Base64URL.encode(signature)), "userHandle": .string(Base64URL.encode(userHandle)),
                ],
            ]
        }

        static func clientDataJSON(_ type: String, challenge: [UInt8], origin: String) -> [UInt8] {
            Array("{\"type\":\"\(type)\",\"challenge\":\"\(Base64URL.encode(challenge))\",\"origin\":\"\(origin)\",\"crossOrigin\":false}".utf8)
        }

        /// SHA-256(rpId) ‖ flags ‖ sign count 0.
        static func authenticatorData(rpID: String, flags: UInt8) -> [UInt8] {
            HashFunction.sha256.hash(Array(rpID.utf8)) + [flags, 0, 0, 0, 0]
        }
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
