import LatchkeyCrypto
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

@Suite("COSE key cache")
struct COSEKeyCacheTests {
    @Test("a cached key verifies as a freshly parsed one; a refused key is refused every time and never kept; a full cache starts again")
    func cache() throws {
        let cache = COSEKeyCache(capacity: 2)
        let authenticator = SoftwareAuthenticator.es256()
        let bytes = CBOREncoder.encode(authenticator.coseKey)
        let message: [UInt8] = Array("signed".utf8)
        let signature = try authenticator.sign(message)
        #expect(try cache.key(for: bytes).isValidSignature(signature, for: message))
        #expect(try cache.key(for: bytes).isValidSignature(signature, for: message), "from the cache")
        #expect(try !cache.key(for: bytes).isValidSignature(signature, for: message + [0]))
        #expect(throws: WebAuthnError.self) { try cache.key(for: [0xA0]) }
        #expect(throws: WebAuthnError.self) { try cache.key(for: [0xA0]) }
        // Two more keys fill it and start it again; every key still verifies.
        let others = [SoftwareAuthenticator.es256(), SoftwareAuthenticator.es256()]
        for other in others {
            let otherSignature = try other.sign(message)
            #expect(try cache.key(for: CBOREncoder.encode(other.coseKey)).isValidSignature(otherSignature, for: message))
        }
        #expect(try cache.key(for: bytes).isValidSignature(signature, for: message))
    }
}
