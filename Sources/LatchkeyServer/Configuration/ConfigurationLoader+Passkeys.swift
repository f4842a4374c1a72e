import FoundationEssentials
import LatchkeyCrypto

extension ConfigurationLoader {
    /// What is wrong with the passkey settings, each problem naming its setting.
    ///
    /// The RP ID must be a domain (WebAuthn has no RP ID for an IP address) that is equal to, or a
    /// dot-suffix of, the host of every web origin; otherwise no browser would run a ceremony
    /// for it and the server must not start with it.
    static func passkeyProblems(_ configuration: Configuration) -> [String] {
        let passkeys = configuration.passkeys
        var problems: [String] = []
        if !["required", "preferred"].contains(passkeys.userVerification) {
            problems.append("passkeys.user_verification: must be required or preferred")
        }
        switch passkeys.attestation {
        case "none":
            if !passkeys.attestationRoots.isEmpty {
                problems.append("passkeys.attestation_roots: applies only with passkeys.attestation direct")
            }
        case "direct":
            if passkeys.attestationRoots.isEmpty {
                problems.append(
                    "passkeys.attestation_roots: direct attestation needs the PEM files of the root certificates to trust "
                        + "(Apple's WebAuthn root, your authenticators' vendors' roots)")
            }
        default:
            problems.append("passkeys.attestation: must be none or direct")
        }
        if let name = passkeys.rpName,
            name.isEmpty || name.utf8.count > 100 || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        {
            problems.append("passkeys.rp_name: must be 1 to 100 bytes on one line")
        }
        var webHosts: [String] = []
        for origin in passkeys.origins {
            if origin.hasPrefix("android:apk-key-hash:"), origin.count > "android:apk-key-hash:".count { continue }
            guard let host = Configuration.host(ofOrigin: origin), !origin.hasSuffix("/"),
                let scheme = origin.split(separator: ":").first.map({ $0.lowercased() })
            else {
                problems.append("passkeys.origins: \(origin) is not an origin such as https://auth.example.com (no path) or android:apk-key-hash:…")
                continue
            }
            guard scheme == "https" || (scheme == "http" && host == "localhost") else {
                problems.append("passkeys.origins: \(origin) must be https (http only on localhost)")
                continue
            }
            webHosts.append(host)
        }
        guard passkeys.enabled else { return problems }
        if let rpID = passkeys.rpID {
            if rpID.isEmpty || rpID.contains(where: { "/:@ ".contains($0) }) || rpID.hasPrefix(".") || rpID.hasSuffix(".") {
                return problems + ["passkeys.rp_id: \(rpID) is not a domain such as example.com"]
            }
            if Configuration.isIPAddress(rpID) {
                return problems + ["passkeys.rp_id: \(rpID) is an IP address; an RP ID must be a domain such as example.com"]
            }
        }
        let publicOrigin = configuration.publicURL.flatMap { Configuration.origin(of: $0) }
        if passkeys.origins.isEmpty, let publicOrigin, let host = Configuration.host(ofOrigin: publicOrigin) {
            webHosts = [host]
        }
        let derived = passkeys.rpID == nil
        guard let rpID = (passkeys.rpID ?? publicOrigin.flatMap { Configuration.host(ofOrigin: $0) })?.lowercased() else { return problems }
        // A public URL on an address leaves passkeys off (see Configuration.relyingParty), unless
        // passkeys.origins name hosts that the address cannot be a suffix of.
        if derived, Configuration.isIPAddress(rpID), passkeys.origins.isEmpty { return problems }
        for host in webHosts where !(host == rpID || host.hasSuffix("." + rpID)) {
            problems.append(
                "passkeys.rp_id: \(rpID)\(derived ? " (the public URL's host)" : "") is not the host of the origin \(host), nor a suffix of it after a dot; "
                    + "set passkeys.rp_id to a domain every origin in passkeys.origins is under")
        }
        return problems
    }
}

extension ConfigurationLoader {
    /// Reads the certificates of `passkeys.attestation_roots` into
    /// ``Configuration/Passkeys/attestationRootCertificates``, once, at load: a registration
    /// never reads a file.
    ///
    /// - Returns: A problem naming the setting for each file that cannot be read, holds no PEM
    ///   `CERTIFICATE` block, or holds one that is not a certificate.
    static func readAttestationRoots(_ passkeys: inout Configuration.Passkeys) -> [String] {
        var problems: [String] = []
        passkeys.attestationRootCertificates = []
        for file in passkeys.attestationRoots {
            guard let data = FileManager.default.contents(atPath: file) else {
                problems.append("passkeys.attestation_roots: \(file) cannot be read")
                continue
            }
            do {
                let certificates = try X509Certificate.certificates(pemRepresentation: String(decoding: data, as: UTF8.self))
                passkeys.attestationRootCertificates += certificates.map { Configuration.TrustedRootCertificate($0, file: file) }
            } catch {
                problems.append("passkeys.attestation_roots: \(file) is not a PEM file of certificates (-----BEGIN CERTIFICATE-----)")
            }
        }
        return problems
    }
}
