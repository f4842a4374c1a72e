import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import Testing

/// A remembered token skips only the parse and the signature; everything else is checked again.
@Suite("Verified-token cache")
struct VerifiedJWTCacheTests {
    typealias Fixture = JWTValidationTests

    static func verifier(_ cache: VerifiedJWTCache, policy: JWTValidationPolicy = Fixture.policy) -> JWTVerifier {
        JWTVerifier(keys: Fixture.keys, policy: policy, cache: cache)
    }

    /// The fixture's policy with one rule changed.
    static func policy(_ change: (inout JWTValidationPolicy) -> Void) -> JWTValidationPolicy {
        var policy = Fixture.policy
        change(&policy)
        return policy
    }

    @Test("S4: a remembered token is still refused once expired, for another audience or issuer, against the caller's clock")
    func s4ClaimsCheckedOnEveryHit() throws {
        let cache = VerifiedJWTCache()
        let token = try Fixture.token()
        #expect(try Self.verifier(cache).verify(token, now: Fixture.now).claims.subject == "user-1")
        #expect(cache.count == 1)
        #expect(try Self.verifier(cache).verify(token, now: Fixture.now).claims.subject == "user-1")
        #expect(throws: JOSEError(.expired, "")) { try Self.verifier(cache).verify(token, now: Fixture.now.addingTimeInterval(960)) }
        let otherAudience = Self.policy { $0.audiences = ["admin"] }
        #expect(throws: JOSEError(.wrongAudience, "")) { try Self.verifier(cache, policy: otherAudience).verify(token, now: Fixture.now) }
        let otherIssuer = Self.policy { $0.issuer = "https://other.example" }
        #expect(throws: JOSEError(.wrongIssuer, "")) { try Self.verifier(cache, policy: otherIssuer).verify(token, now: Fixture.now) }
    }

    @Test("S1, S5: a remembered token is refused where its algorithm is off the list or its typ is not the one expected")
    func s1s5AlgorithmAndTypeCheckedOnEveryHit() throws {
        let cache = VerifiedJWTCache()
        let token = try Fixture.token()
        _ = try Self.verifier(cache).verify(token, now: Fixture.now)
        let rsaOnly = Self.policy { $0.algorithms = [.rs256] }
        #expect(throws: JOSEError(.algorithmNotAllowed, "")) { try Self.verifier(cache, policy: rsaOnly).verify(token, now: Fixture.now) }
        let idTokens = Self.policy { $0.type = .absentOrJWT }
        #expect(throws: JOSEError(.wrongType, "")) { try Self.verifier(cache, policy: idTokens).verify(token, now: Fixture.now) }
    }

    @Test("S1: a token one byte off a remembered one is checked in full and fails; a token that fails is not remembered")
    func s1NearMissIsVerified() throws {
        let cache = VerifiedJWTCache()
        let token = try Fixture.token()
        _ = try Self.verifier(cache).verify(token, now: Fixture.now)
        // The first character of the signature changed: same header and claims, another signature.
        let cut = token.index(after: token.lastIndex(of: ".")!)
        let forged = token[..<cut] + (token[cut] == "A" ? "B" : "A") + token[token.index(after: cut)...]
        #expect(throws: JOSEError(.invalidSignature, "")) { try Self.verifier(cache).verify(forged, now: Fixture.now) }
        let foreign = try Fixture.token(signer: .es256(P256.Signing.PrivateKey(), keyID: "ec-1"))
        #expect(throws: JOSEError(.invalidSignature, "")) { try Self.verifier(cache).verify(foreign, now: Fixture.now) }
        #expect(cache.count == 1)
    }

    @Test("a full cache empties and fills again")
    func fullCacheEmpties() throws {
        let cache = VerifiedJWTCache(capacity: 2)
        for subject in ["a", "b", "c"] {
            _ = try Self.verifier(cache).verify(try Fixture.token { $0.subject = subject }, now: Fixture.now)
        }
        #expect(cache.count == 1)
    }
}
