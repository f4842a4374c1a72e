import LatchkeyServer
import Testing

@Suite("Passkey configuration")
struct PasskeyConfigurationTests {
    static func problems(_ environment: [String: String]) -> String? {
        do {
            _ = try ConfigurationLoader.load(file: nil, environment: environment)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("defaults: on, the public URL's host; its origin and https:// + the RP ID (an iOS app's); the product name, required UV, none, 300 s")
    func defaults() throws {
        let configuration = try ConfigurationLoader.load(
            file: nil, environment: ["LATCHKEY_PUBLIC_URL": "https://auth.example.com/base", "LATCHKEY_EMAIL_PRODUCT_NAME": "Example"])
        #expect(configuration.passkeys.enabled)
        #expect(configuration.passkeys.userVerification == "required")
        #expect(configuration.passkeys.attestation == "none")
        #expect(configuration.passkeys.timeout == 300)
        let party = try #require(configuration.relyingParty(publicURL: configuration.publicURL ?? ""))
        #expect(party == Configuration.RelyingParty(id: "auth.example.com", name: "Example", origins: ["https://auth.example.com"]))
        // A development server: the browser on this machine, and an app with webcredentials:localhost.
        #expect(Configuration().relyingParty(publicURL: "http://localhost:8080")?.origins == ["http://localhost:8080", "https://localhost"])
        #expect(Configuration().relyingParty(publicURL: "http://localhost:8080")?.name == "Latchkey")
    }

    @Test("a public URL on an IP address leaves passkeys off instead of stopping the server; disabled is off")
    func addressPublicURL() throws {
        let configuration = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_PUBLIC_URL": "http://127.0.0.1:8080"])
        #expect(configuration.relyingParty(publicURL: "http://127.0.0.1:8080") == nil)
        #expect(Configuration().relyingParty(publicURL: "http://[::1]:8080") == nil)
        var off = Configuration()
        off.passkeys.enabled = false
        #expect(off.relyingParty(publicURL: "https://auth.example.com") == nil)
    }

    @Test("an explicit RP ID over several origins under it is accepted, Android hashes too")
    func registrableSuffix() throws {
        let configuration = try ConfigurationLoader.load(
            file: nil,
            environment: [
                "LATCHKEY_PUBLIC_URL": "https://auth.example.com", "LATCHKEY_PASSKEYS_RP_ID": "example.com",
                "LATCHKEY_PASSKEYS_ORIGINS": "https://auth.example.com, https://example.com:8443, android:apk-key-hash:abc",
                "LATCHKEY_PASSKEYS_USER_VERIFICATION": "preferred", "LATCHKEY_PASSKEYS_TIMEOUT": "120",
            ])
        let party = try #require(configuration.relyingParty(publicURL: "https://auth.example.com"))
        #expect(party.id == "example.com")
        #expect(party.origins == ["https://auth.example.com", "https://example.com:8443", "android:apk-key-hash:abc"])
        #expect(configuration.passkeys.userVerification == "preferred")
        #expect(configuration.passkeys.timeout == 120)
    }

    @Test("S34: an RP ID that is not a registrable suffix of every origin's host stops start-up, naming passkeys.rp_id")
    func notSuffix() {
        let mismatch = Self.problems([
            "LATCHKEY_PUBLIC_URL": "https://auth.example.com", "LATCHKEY_PASSKEYS_RP_ID": "example.com",
            "LATCHKEY_PASSKEYS_ORIGINS": "https://auth.example.com,https://badexample.com",
        ])
        #expect(mismatch?.contains("passkeys.rp_id: example.com is not the host of the origin badexample.com") == true)
        let derived = Self.problems(["LATCHKEY_PUBLIC_URL": "https://auth.example.com", "LATCHKEY_PASSKEYS_ORIGINS": "https://example.com"])
        #expect(derived?.contains("passkeys.rp_id: auth.example.com (the public URL's host)") == true)
        let deeper = Self.problems(["LATCHKEY_PUBLIC_URL": "https://example.com", "LATCHKEY_PASSKEYS_RP_ID": "auth.example.com"])
        #expect(deeper?.contains("passkeys.rp_id:") == true)
    }

    @Test("S34: an IP address as RP ID, bad origins, values out of their sets and direct attestation without roots are each named")
    func badValues() {
        #expect(Self.problems(["LATCHKEY_PASSKEYS_RP_ID": "192.0.2.1"])?.contains("passkeys.rp_id: 192.0.2.1 is an IP address") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_RP_ID": "https://example.com"])?.contains("passkeys.rp_id:") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ORIGINS": "http://example.com"])?.contains("passkeys.origins: http://example.com must be https") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ORIGINS": "https://example.com/path"])?.contains("passkeys.origins:") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_USER_VERIFICATION": "discouraged"])?.contains("passkeys.user_verification:") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ATTESTATION": "indirect"])?.contains("passkeys.attestation: must be none or direct") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ATTESTATION": "direct"])?.contains("passkeys.attestation_roots: direct attestation needs") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_TIMEOUT": "5"])?.contains("LATCHKEY_PASSKEYS_TIMEOUT: must be between 30 and 3600") == true)
        #expect(Self.problems(["LATCHKEY_PASSKEYS_RP_NAME": "Bad\u{7}Name"])?.contains("passkeys.rp_name:") == true)
        // Off, the RP ID is not checked against the origins.
        #expect(Self.problems(["LATCHKEY_PUBLIC_URL": "https://auth.example.com", "LATCHKEY_PASSKEYS_ENABLED": "false", "LATCHKEY_PASSKEYS_RP_ID": "other.com"]) == nil)
    }
}
