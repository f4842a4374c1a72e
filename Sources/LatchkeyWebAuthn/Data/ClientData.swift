internal import LatchkeyCrypto
internal import LatchkeyJSON

/// The client data (WebAuthn §5.8.1), parsed from the exact `clientDataJSON` bytes the client
/// sent; the signature covers SHA-256 of those bytes, never a re-serialisation.
///
/// The JSON parser is LatchkeyJSON's strict one (duplicate names, UTF-8, depth). Members other
/// than those below (`tokenBinding`, which Level 3 dropped, and any future ones) are ignored,
/// as §5.8.1 asks of relying parties.
package struct ClientData: Sendable {
    /// The longest `clientDataJSON` accepted; real ones are a few hundred bytes.
    package static let maximumByteCount = 16 * 1024

    /// `webauthn.create` or `webauthn.get` (or anything else, which the checks refuse).
    package let type: String
    /// The challenge, decoded from base64url.
    package let challenge: [UInt8]
    /// The caller's origin as the client saw it.
    package let origin: String
    /// Whether the ceremony ran in a cross-origin frame; absent means false.
    package let crossOrigin: Bool
    /// The top-level origin, present when the ceremony ran in a frame.
    package let topOrigin: String?
    /// SHA-256 of the JSON bytes.
    package let hash: [UInt8]

    /// Parses `clientDataJSON`.
    ///
    /// - Parameter bytes: The JSON bytes as received.
    /// - Throws: ``WebAuthnError/Code-swift.struct/malformed`` when the bytes are not a JSON
    ///   object with string `type`, `challenge` (unpadded base64url) and `origin`, boolean
    ///   `crossOrigin` and string `topOrigin` when present.
    package init(json bytes: some Collection<UInt8>) throws(WebAuthnError) {
        let bytes = Array(bytes)
        guard bytes.count <= Self.maximumByteCount else { throw .malformed("clientDataJSON is longer than 16 KiB") }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw .malformed("clientDataJSON is not JSON")
        }
        guard let object = value.objectValue else { throw .malformed("clientDataJSON is not an object") }
        guard let type = object["type"]?.stringValue else { throw .malformed("clientDataJSON has no string type") }
        guard let challengeText = object["challenge"]?.stringValue else {
            throw .malformed("clientDataJSON has no string challenge")
        }
        guard let challenge = Base64.decode(Array(challengeText.utf8), alphabet: .urlSafe, padded: false) else {
            throw .malformed("the challenge is not unpadded base64url")
        }
        guard let origin = object["origin"]?.stringValue else { throw .malformed("clientDataJSON has no string origin") }
        var crossOrigin = false
        if let member = object["crossOrigin"] {
            guard let flag = member.boolValue else { throw .malformed("crossOrigin is not a boolean") }
            crossOrigin = flag
        }
        var topOrigin: String?
        if let member = object["topOrigin"] {
            guard let text = member.stringValue else { throw .malformed("topOrigin is not a string") }
            topOrigin = text
        }
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
        self.hash = HashFunction.sha256.hash(bytes)
    }
}
