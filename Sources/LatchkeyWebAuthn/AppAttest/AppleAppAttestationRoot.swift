package import LatchkeyCrypto

extension AppAttest {
    /// Apple App Attestation Root CA, the trust anchor of every App Attest attestation: a public
    /// certificate Apple publishes at
    /// https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem
    /// (P-384, valid 2020-03-18 to 2045-03-15). The server uses it unless
    /// `app_attest.root_ca_file` names another root (tests).
    package static let appleRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----
        """

    /// SHA-256 of the root's DER, lower-case hex; a test recomputes it from ``appleRootPEM``.
    package static let appleRootSHA256 = "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932"

    /// ``appleRootPEM`` parsed.
    package static func appleRoot() -> X509Certificate {
        do {
            return try X509Certificate.certificates(pemRepresentation: appleRootPEM)[0]
        } catch {
            // The literal above is fixed and checked by a test; failing to parse it is a build defect.
            fatalError("the Apple App Attestation Root CA does not parse: \(error)")
        }
    }
}
