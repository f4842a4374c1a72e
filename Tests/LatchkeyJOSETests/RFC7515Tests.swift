import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import Testing

/// RFC 7515 Appendix A: the signatures are checked over the exact bytes received, whose payload
/// contains CRLF line breaks that any re-encoding would lose.
@Suite("RFC 7515 appendix A")
struct RFC7515Tests {
    static let payload = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    @Test("A.2: RS256 verifies with the example RSA key")
    func a2() throws {
        let jwk = JWK(
            keyType: "RSA",
            modulus: Base64URL.decode(
                "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
            ),
            exponent: Base64URL.decode("AQAB"), algorithm: .rs256)
        let token = "eyJhbGciOiJSUzI1NiJ9.\(Self.payload).cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
        let keys = try JWSKeySet([try JWSVerificationKey(jwk: jwk)])
        let jws = try JWS(compact: token)
        try jws.verify(with: keys, algorithms: [.rs256])
        #expect(jws.payload == Array("{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}".utf8))
        #expect(throws: JOSEError(.invalidSignature, "")) {
            try JWS(compact: token.replacingOccurrences(of: "cC4h", with: "cC4i")).verify(with: keys, algorithms: [.rs256])
        }
    }

    @Test("A.3: ES256 verifies with the example P-256 key")
    func a3() throws {
        let jwk = try JWK(parsing: Array(#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#.utf8))
        let token = "eyJhbGciOiJFUzI1NiJ9.\(Self.payload).DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        let keys = try JWSKeySet([try JWSVerificationKey(jwk: jwk)])
        try JWS(compact: token).verify(with: keys, algorithms: [.es256])
        // The same claims re-encoded without CRLF no longer match the signature.
        let reencoded = Base64URL.encode(Array(#"{"iss":"joe","exp":1300819380,"http://example.com/is_root":true}"#.utf8))
        #expect(throws: JOSEError(.invalidSignature, "")) {
            try JWS(compact: token.replacingOccurrences(of: Self.payload, with: reencoded)).verify(with: keys, algorithms: [.es256])
        }
    }

    @Test("A.5 and S1: alg none is refused in any case")
    func a5None() {
        let none = "eyJhbGciOiJub25lIn0.\(Self.payload)."
        #expect(throws: JOSEError(.unsupportedAlgorithm, "")) { try JWS(compact: none) }
        for alg in ["none", "None", "NONE", "nOnE"] {
            let header = Base64URL.encode(Array("{\"alg\":\"\(alg)\"}".utf8))
            #expect(throws: JOSEError(.unsupportedAlgorithm, "")) { try JWS(compact: "\(header).\(Self.payload).") }
        }
    }

    @Test("RFC 7638 §3.1: the example RSA key's thumbprint")
    func thumbprint() throws {
        let jwk = try JWK(parsing: Array(#"{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#.utf8))
        #expect(try jwk.thumbprint() == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }
}
