// latchkey-bench: operations per second of Latchkey's cryptographic hot paths.
//
//   latchkey-bench [--json] [--seconds S] [--repeats N] [--only NAME]
//   latchkey-bench seed-sessions CONFIG COUNT [KEYFILE]  (sessions for the HTTP benchmarks, DPoP-bound with KEYFILE)
//   latchkey-bench seed-accounts CONFIG COUNT     (accounts with names, factors and sessions, for the admin listing)
//   latchkey-bench dpop-proofs KEYFILE METHOD URL COUNT [ACCESS_TOKEN]  (DPoP proofs, one per line)
//   latchkey-bench apple-tokens DIR COUNT         (Apple keys and identity tokens for sign-ins)
//   latchkey-bench apple-codes URL COUNT          (sandbox authorizations, for code exchange)
//   latchkey-bench seed-oauth CONFIG DIR KIND N   (authorization codes for /oauth/token)
//   latchkey-bench seed-device CONFIG N           (pending device codes, for polling /oauth/token)
//   latchkey-bench passkey-sign-ins URL ORIGIN DIR N  (passkeys, and answered sign-in flows)
//   latchkey-bench provider-sign-ins URL CLIENT_ID N C  (sign-ins through upstream `bench`, timed)
//   latchkey-bench sandbox-tokens ISSUER SECRET_FILE N C  (the sandbox upstream's token endpoint, timed)
//
// Each benchmark runs for S seconds (default 2), N times (default 3); the median rate is
// printed as `name ops_per_second` lines, or one JSON object with --json. scripts/bench reads
// the line form.

import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyServer
import LatchkeyWebAuthn

struct Options {
    var json = false
    var seconds = 2.0
    var repeats = 3
    var only: String?

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--json": json = true
            case "--seconds":
                guard let value = iterator.next().flatMap(Double.init) else { Self.usage() }
                seconds = value
            case "--repeats":
                guard let value = iterator.next().flatMap(Int.init) else { Self.usage() }
                repeats = value
            case "--only":
                guard let value = iterator.next() else { Self.usage() }
                only = value
            default: Self.usage()
            }
        }
        if seconds <= 0 || repeats < 1 { Self.usage() }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(Data("usage: latchkey-bench [--json] [--seconds S] [--repeats N] [--only NAME]\n".utf8))
        exit(2)
    }
}

/// Runs `operation` until `seconds` have passed and returns operations per second.
func rate(seconds: Double, _ operation: () throws -> Bool) rethrows -> Double {
    let clock = ContinuousClock()
    let limit = Duration.nanoseconds(Int64(seconds * 1e9))
    let start = clock.now
    var count = 0
    var elapsed = Duration.zero
    repeat {
        // Every result is checked, so the work cannot be optimised away.
        guard try operation() else { fatalError("benchmark operation gave a wrong result") }
        count += 1
        elapsed = clock.now - start
    } while elapsed < limit
    let (secondsPart, attoseconds) = elapsed.components
    return Double(count) / (Double(secondsPart) + Double(attoseconds) / 1e18)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

if CommandLine.arguments.dropFirst().first == "seed-sessions" {
    exit(await SessionSeeder.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "seed-accounts" {
    exit(await AccountSeeder.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "dpop-proofs" {
    exit(DPoPProofMaker.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "apple-tokens" {
    exit(AppleTokenMinter.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "seed-oauth" {
    exit(await AuthorizationCodeSeeder.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "seed-device" {
    exit(await DeviceCodeSeeder.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "apple-codes" {
    exit(await AppleCodeCollector.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "passkey-sign-ins" {
    exit(await PasskeyAssertionMaker.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "provider-sign-ins" {
    exit(await ProviderSignIns.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "sandbox-tokens" {
    exit(await ProviderSignIns.runTokens(Array(CommandLine.arguments.dropFirst(2))))
}

let options = Options(arguments: CommandLine.arguments)

// A 32-byte message, the size of a JWS signing input's hash or a challenge.
let message = SecureRandom.bytes(count: 32)
let ecKey = P256.Signing.PrivateKey()
let ecPublicKey = ecKey.publicKey
let ecSignature = try ecKey.signature(for: message)
let rsaKey = try RSA.Signing.PrivateKey(keySize: 2048)
let rsaPublicKey = rsaKey.publicKey
let rsaSignature = try rsaKey.signature(for: message, padding: .pkcs1v1_5)
// A device challenge as the endpoints check it: the stored SHA-256 of 32 random bytes, the
// device's 65-byte X9.63 key as stored, and the DER signature an iOS app sends.
let challengeDigest = HashFunction.sha256.hash(message)
let deviceKey = ecPublicKey.x963Representation
let deviceSignature = ecSignature.derRepresentation
// A passkey sign-in as the server verifies it (WebAuthn §7.2): the client data and authenticator
// data checked, the stored COSE key read into a P-256 key, the assertion signature verified.
let passkey = PasskeyAssertionMaker.Authenticator(key: P256.Signing.PrivateKey(), credentialID: SecureRandom.bytes(count: 32), userHandle: SecureRandom.bytes(count: 64))
let passkeyChallenge = SecureRandom.bytes(count: 32)
let passkeyCeremony = AuthenticationCeremony(
    challenge: passkeyChallenge, origins: ["https://example.com"], rpID: "example.com", userVerification: .required)
let passkeyResponse = try AuthenticationResponse(
    json: try passkey.assertion(challenge: passkeyChallenge, rpID: "example.com", origin: "https://example.com"))
let passkeyCredential = StoredCredential(
    credentialID: passkey.credentialID, publicKey: passkey.coseKey, signCount: 0, userHandle: passkey.userHandle)
// An app check token as `POST /v1/app-attest/assertions` issues one, apart from the database: the
// App Attest assertion verified (ES256 over SHA-256(authData ‖ clientDataHash), the app id, the
// counter) and an ES256 `app-check+jwt` signed.
let appAttestKey = P256.Signing.PrivateKey()
let appAttestAppID = "ABCDE12345.com.example.app"
let appAttestClientDataHash = HashFunction.sha256.hash(message)
let appAttestData = HashFunction.sha256.hash(Array(appAttestAppID.utf8)) + [0x40, 0, 0, 0, 1]
let appAttestAssertion = CBOREncoder.encode(
    .map([
        CBORMapEntry(.text("signature"), .bytes(try appAttestKey.signature(for: HashFunction.sha256.hash(appAttestData + appAttestClientDataHash)).derRepresentation)),
        CBORMapEntry(.text("authenticatorData"), .bytes(appAttestData)),
    ]))
let appCheckSigner = JWSSigner.es256(P256.Signing.PrivateKey(), keyID: "bench")
func issueAppCheckToken() throws -> Bool {
    let counter = try AppAttest.verifyAssertion(
        appAttestAssertion, publicKey: appAttestKey.publicKey.x963Representation, clientDataHash: appAttestClientDataHash, appID: appAttestAppID,
        previousCounter: 0)
    var claims = JWTClaims()
    claims.issuer = "https://auth.example.com"
    claims.subject = appAttestAppID
    claims["key_id"] = .string(Base64URL.encode(HashFunction.sha256.hash(appAttestKey.publicKey.x963Representation)))
    claims.issuedAt = Date()
    claims.expiresAt = Date().addingTimeInterval(3_600)
    let token = try appCheckSigner.sign(claims, type: "app-check+jwt")
    return counter == 1 && !token.isEmpty
}
let password = Array("password".utf8)
let salt = Array("somesalt16bytes!".utf8)

let benchmarks: [(name: String, run: () throws -> Bool)] = [
    ("es256_sign", { try ecKey.signature(for: message).rawRepresentation.count == 64 }),
    ("es256_verify", { ecPublicKey.isValidSignature(ecSignature, for: message) }),
    ("challenge_verify", { DeviceSignature.isValid(deviceSignature, publicKey: deviceKey, digest: challengeDigest) }),
    ("app_check_token_issue", { try issueAppCheckToken() }),
    ("passkey_assertion_verify", { (try? passkeyCeremony.verify(passkeyResponse, credential: passkeyCredential))?.userVerified == true }),
    ("rs256_sign", { try rsaKey.signature(for: message, padding: .pkcs1v1_5).count == 256 }),
    ("rs256_verify", { rsaPublicKey.isValidSignature(rsaSignature, for: message, padding: .pkcs1v1_5) }),
    ("argon2id_owasp", { try Argon2id.hash(password: password, parameters: .owaspMinimum, salt: salt).count > 0 }),
]

var results: [(String, Double)] = []
for benchmark in benchmarks where options.only == nil || options.only == benchmark.name {
    // One untimed pass fills caches and the context pools.
    _ = try benchmark.run()
    let rates = try (0..<options.repeats).map { _ in try rate(seconds: options.seconds, benchmark.run) }
    results.append((benchmark.name, median(rates)))
    if !options.json {
        // Written straight away, unbuffered, so a reader sees progress.
        FileHandle.standardOutput.write(Data("\(benchmark.name) \(String(format: "%.1f", median(rates)))\n".utf8))
    }
}

if options.json {
    let fields = results.map { "\"\($0.0)\": \(String(format: "%.1f", $0.1))" }
    print("{\(fields.joined(separator: ", "))}")
}
