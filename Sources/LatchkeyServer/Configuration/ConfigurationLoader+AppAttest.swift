import FoundationEssentials
import LatchkeyCrypto

extension ConfigurationLoader {
    /// The endpoints `app_attest.enforce` may name.
    static let appCheckEndpoints = ["signup", "sign_in", "token"]

    /// What is wrong with the App Attest settings, each problem naming its setting.
    static func appAttestProblems(_ settings: Configuration.AppAttestSettings) -> [String] {
        var problems: [String] = []
        for appID in settings.appIDs where !isAppID(appID) {
            problems.append("app_attest.app_ids: \(appID) is not an app id such as ABCDE12345.com.example.app (team id, a dot, bundle id)")
        }
        if !["production", "development"].contains(settings.environment) {
            problems.append("app_attest.environment: must be production or development")
        }
        for endpoint in settings.enforce where !appCheckEndpoints.contains(endpoint) {
            problems.append("app_attest.enforce: \(endpoint) is not one of signup, sign_in, token")
        }
        if Set(settings.enforce).count != settings.enforce.count {
            problems.append("app_attest.enforce: names an endpoint twice")
        }
        if !["enforce", "log"].contains(settings.enforceMode) {
            problems.append("app_attest.enforce_mode: must be enforce or log")
        }
        if !settings.enforce.isEmpty, settings.appIDs.isEmpty {
            problems.append("app_attest.enforce: needs app_attest.app_ids, the apps whose keys may earn app check tokens")
        }
        return problems
    }

    /// Reads `app_attest.root_ca_file` into ``Configuration/AppAttestSettings/rootCertificates``,
    /// once, at load.
    ///
    /// - Returns: A problem naming the setting when the file cannot be read or holds no
    ///   certificate.
    static func readAppAttestRoot(_ settings: inout Configuration.AppAttestSettings) -> [String] {
        settings.rootCertificates = []
        guard let file = settings.rootCAFile else { return [] }
        guard let data = FileManager.default.contents(atPath: file) else {
            return ["app_attest.root_ca_file: \(file) cannot be read"]
        }
        do {
            let certificates = try X509Certificate.certificates(pemRepresentation: String(decoding: data, as: UTF8.self))
            settings.rootCertificates = certificates.map { Configuration.TrustedRootCertificate($0, file: file) }
            return []
        } catch {
            return ["app_attest.root_ca_file: \(file) is not a PEM file of certificates (-----BEGIN CERTIFICATE-----)"]
        }
    }
}
