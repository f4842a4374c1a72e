import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite("Argon2id")
struct Argon2idTests {
    /// Small parameters so the tests stay fast; the known answers use the real ones.
    static let cheap = Argon2id.Parameters(memoryKiB: 64, iterations: 1, parallelism: 1)

    // RFC 9106 §5.3.
    @Test("RFC 9106 §5.3 test vector")
    func rfc9106() throws {
        let tag = try Argon2id.derive(
            password: [UInt8](repeating: 0x01, count: 32), salt: [UInt8](repeating: 0x02, count: 16),
            secret: [UInt8](repeating: 0x03, count: 8), associatedData: [UInt8](repeating: 0x04, count: 12),
            parameters: Argon2id.Parameters(memoryKiB: 32, iterations: 3, parallelism: 4), outputByteCount: 32)
        #expect(tag.hex == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
    }

    // `echo -n password | argon2 somesalt16bytes! -id -t 2 -k 19456 -p 1 -e` (argon2 CLI 20190702).
    @Test("matches the reference argon2 tool at OWASP's minimum")
    func referenceTool() throws {
        let expected = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQxNmJ5dGVzIQ$tPXA8KRaMxUDqoVFOkz5qceiysamiMSLxBrcC5sAtmo"
        #expect(try Argon2id.hash(password: Array("password".utf8), salt: Array("somesalt16bytes!".utf8)) == expected)
        #expect(try Argon2id.verify(password: Array("password".utf8), phcString: expected))
        #expect(try !Argon2id.verify(password: Array("Password".utf8), phcString: expected))
        #expect(try Argon2id.parameters(ofPHCString: expected) == .owaspMinimum)
        // A 16-byte hash and two lanes, from the same tool.
        let short = "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww"
        #expect(try Argon2id.verify(password: Array("password".utf8), phcString: short))
        #expect(try Argon2id.parameters(ofPHCString: short) == Argon2id.Parameters(memoryKiB: 64, iterations: 1, parallelism: 2))
    }

    @Test("hash, verify, random salts, parameters")
    func roundTrip() throws {
        let password = Array("correct horse battery staple".utf8)
        let phc = try Argon2id.hash(password: password, parameters: Self.cheap)
        #expect(phc.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        #expect(try Argon2id.verify(password: password, phcString: phc))
        #expect(try Argon2id.verify(password: Data(password), phcString: phc))
        #expect(try !Argon2id.verify(password: password + [0], phcString: phc))
        #expect(try !Argon2id.verify(password: [UInt8](), phcString: phc))
        #expect(try Argon2id.hash(password: password, parameters: Self.cheap) != phc)
        #expect(try Argon2id.parameters(ofPHCString: phc) == Self.cheap)
        let empty = try Argon2id.hash(password: [UInt8](), parameters: Self.cheap)
        #expect(try Argon2id.verify(password: [UInt8](), phcString: empty))
    }

    @Test("malformed PHC strings throw", arguments: [
        "",
        "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ",
        "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$UAwy+vIxxqhbiDV74TbpbGTNDGkT92MIOb6UCi5Kbc4",
        "$argon2id$m=64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=16$m=64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$t=1,m=64,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=064,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=+64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=4294967296,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=0,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=0$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=15,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1025,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=2,keyid=abc$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ=$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHR$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=2$c2FsdA$oii5QrwwRha/6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww$",
        "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha_6pH09qSIww",
        "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ$oii",
        " $argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ$oii5QrwwRha/6pH09qSIww",
    ])
    func malformed(phc: String) {
        #expect(throws: CryptoError.malformedInput()) { try Argon2id.parameters(ofPHCString: phc) }
        #expect(throws: CryptoError.malformedInput()) { try Argon2id.verify(password: [UInt8](), phcString: phc) }
    }

    @Test("out-of-range parameters, salts and output lengths are refused")
    func parameterChecks() throws {
        let password = Array("pw".utf8)
        #expect(throws: CryptoError.invalidParameter()) {
            try Argon2id.hash(password: password, parameters: .init(memoryKiB: 7, iterations: 1, parallelism: 1))
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try Argon2id.hash(password: password, parameters: .init(memoryKiB: 64, iterations: 0, parallelism: 1))
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try Argon2id.hash(password: password, parameters: .init(memoryKiB: 64, iterations: 1, parallelism: 65))
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try Argon2id.hash(password: password, parameters: Self.cheap, salt: [UInt8](repeating: 1, count: 7))
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try Argon2id.derive(password: password, salt: [UInt8](repeating: 1, count: 16), parameters: Self.cheap, outputByteCount: 3)
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try Argon2id.derive(password: password, salt: [UInt8](repeating: 1, count: 7), parameters: Self.cheap)
        }
    }

    @Test("S13: an unmatchable PHC string has the given parameters, a fresh salt each time, and no password verifies")
    func s13Unmatchable() throws {
        let first = Argon2id.unmatchablePHCString(parameters: Self.cheap)
        let second = Argon2id.unmatchablePHCString(parameters: Self.cheap)
        #expect(first != second)
        #expect(try Argon2id.parameters(ofPHCString: first) == Self.cheap)
        #expect(try !Argon2id.verify(password: Array("".utf8), phcString: first))
        #expect(try !Argon2id.verify(password: Array("password".utf8), phcString: first))
    }

    @Test("hashing many times on one thread reuses its memory and stays correct")
    func memoryReuse() throws {
        let reference = try Argon2id.derive(password: Array("pw".utf8), salt: Array("saltsalt".utf8), parameters: Self.cheap)
        for _ in 0..<20 {
            #expect(try Argon2id.derive(password: Array("pw".utf8), salt: Array("saltsalt".utf8), parameters: Self.cheap) == reference)
        }
        let larger = Argon2id.Parameters(memoryKiB: Self.cheap.memoryKiB * 4, iterations: 1, parallelism: 1)
        let grown = try Argon2id.derive(password: Array("pw".utf8), salt: Array("saltsalt".utf8), parameters: larger)
        #expect(grown != reference)
        #expect(try Argon2id.derive(password: Array("pw".utf8), salt: Array("saltsalt".utf8), parameters: Self.cheap) == reference)
    }
}
