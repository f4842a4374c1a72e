import Foundation
import LatchkeyJSON

/// Where the client's DPoP key comes from (RFC 9449): with one configured, every request the
/// client sends carries a proof signed by it, and the server binds the session's tokens to it, so
/// a copied refresh or access token is worth nothing on another device.
///
/// The key is any ``DeviceKey``: a P-256 key that signs ECDSA with SHA-256. On a device,
/// ``secureEnclave`` keeps it in the Secure Enclave, non-extractable and this-device-only; on
/// Linux and in tests a software key stands behind the same protocol.
public struct DPoPKeySource: Sendable {
    let resolve: @Sendable () async throws -> any DeviceKey

    /// A key the app holds itself (a software key on Linux, a test double).
    public static func key(_ key: any DeviceKey) -> DPoPKeySource {
        DPoPKeySource { key }
    }

    #if canImport(Security) && canImport(LocalAuthentication) && !os(tvOS) && !os(watchOS)
    /// A Secure Enclave key under the tag `latchkey.dpop`, made on first use: usable only on this
    /// device, with no prompt (a proof goes with every request).
    public static var secureEnclave: DPoPKeySource { secureEnclave(tag: "latchkey.dpop") }

    /// A Secure Enclave key under `tag`, made on first use.
    public static func secureEnclave(tag: String) -> DPoPKeySource {
        DPoPKeySource {
            let existing = SecureEnclaveDeviceKey(tag: tag, localizedReason: "")
            if (try? await existing.publicKeyX963()) != nil { return existing }
            return try SecureEnclaveDeviceKey.create(tag: tag, accessControl: [], localizedReason: "")
        }
    }
    #endif
}

/// Makes the DPoP proofs of one client: the key's public JWK, read once, and the last server
/// nonce (RFC 9449 §8), kept for the proofs after it.
actor DPoPProver {
    private let source: DPoPKeySource
    private var key: (key: any DeviceKey, jwk: JSONValue)?
    private var nonce: String?

    init(_ source: DPoPKeySource) {
        self.source = source
    }

    /// Remembers the nonce a server answer gave.
    func remember(nonce: String) {
        self.nonce = nonce
    }

    /// A proof for `method url`, with `ath` for `accessToken` when the request carries one.
    func proof(method: String, url: URL, accessToken: String?) async throws -> String {
        let (key, jwk) = try await resolved()
        var claims: [String: JSONValue] = [
            "jti": .string(Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: 0...255) }))),
            "htm": .string(method), "htu": .string(Self.htu(url)),
            "iat": .number(Date().timeIntervalSince1970.rounded(.down)),
        ]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(Data(SHA256.hash(Array(accessToken.utf8))))) }
        if let nonce { claims["nonce"] = .string(nonce) }
        let header: JSONValue = ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk]
        let signingInput = Base64URL.encode(Data(header.serialized)) + "." + Base64URL.encode(Data(JSONValue.object(claims).serialized))
        let signature = try Self.rawSignature(fromDER: try await key.sign(Data(signingInput.utf8)))
        return signingInput + "." + Base64URL.encode(signature)
    }

    private func resolved() async throws -> (any DeviceKey, JSONValue) {
        if let key { return key }
        let resolved = try await source.resolve()
        let point = try await resolved.publicKeyX963()
        guard point.count == 65, point.first == 4 else { throw LatchkeyError(.storage, "the DPoP key is not a P-256 key") }
        let jwk: JSONValue = [
            "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point.dropFirst().prefix(32))),
            "y": .string(Base64URL.encode(point.suffix(32))),
        ]
        key = (resolved, jwk)
        return (resolved, jwk)
    }

    /// The URL without query and fragment, as `htu` names it.
    static func htu(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        return components?.string ?? url.absoluteString
    }

    /// The JWS form of an ECDSA P-256 signature, `r ‖ s` of 32 bytes each, from the DER
    /// `SEQUENCE { INTEGER r, INTEGER s }` a Secure Enclave key gives.
    static func rawSignature(fromDER der: Data) throws -> Data {
        let bytes = [UInt8](der)
        var index = 0
        func next() throws -> UInt8 {
            guard index < bytes.count else { throw LatchkeyError(.storage, "the DPoP key gave a malformed signature") }
            defer { index += 1 }
            return bytes[index]
        }
        func length() throws -> Int {
            let first = try next()
            guard first & 0x80 != 0 else { return Int(first) }
            guard first == 0x81 else { throw LatchkeyError(.storage, "the DPoP key gave a malformed signature") }
            return Int(try next())
        }
        func integer() throws -> [UInt8] {
            guard try next() == 0x02 else { throw LatchkeyError(.storage, "the DPoP key gave a malformed signature") }
            let count = try length()
            guard count >= 1, count <= 33, index + count <= bytes.count else { throw LatchkeyError(.storage, "the DPoP key gave a malformed signature") }
            var value = Array(bytes[index..<(index + count)])
            index += count
            while value.count > 32, value.first == 0 { value.removeFirst() }
            guard value.count <= 32 else { throw LatchkeyError(.storage, "the DPoP key gave a malformed signature") }
            return [UInt8](repeating: 0, count: 32 - value.count) + value
        }
        guard try next() == 0x30 else { throw LatchkeyError(.storage, "the DPoP key gave a malformed signature") }
        _ = try length()
        return Data(try integer() + integer())
    }
}
