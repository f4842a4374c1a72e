import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// The `state` of a sign-in at an upstream, and what derives from it (S38).
///
/// `state` carries the expiry, the provider and the authorization request, with an HMAC over
/// them and over a random *binding* the browser holds in a `__Host-` cookie (`SameSite=Lax`: the
/// upstream's redirect back is a top-level GET, which carries it). A state from another browser,
/// for another provider, or whose request was changed fails the MAC: nobody can land their own
/// upstream sign-in in someone else's browser (login CSRF). The PKCE verifier and the OIDC
/// nonce are HMACs of the state under the same key: only this server can compute them, and
/// nothing about a pending sign-in is stored until its callback spends the state.
struct ProviderState: Sendable {
    /// How long the browser may stay at the upstream.
    static let lifetime: TimeInterval = 600

    private let key: [UInt8]

    init(masterKey: MasterKey) {
        key = masterKey.derivedKey(label: "latchkey provider state v1")
    }

    /// A new state for `provider` carrying `request`, and the binding for its cookie.
    func make(provider: String, request: String, now: Date) -> (state: String, binding: String) {
        let binding = Identifiers.secret()
        let expires = Int(now.addingTimeInterval(Self.lifetime).timeIntervalSince1970)
        let body = "\(expires).\(provider).\(Base64URL.encode(Array(request.utf8)))"
        return (body + "." + Base64URL.encode(mac("state", binding + "\u{0}" + body)), binding)
    }

    /// A state that held: what the callback needs.
    struct Resumed: Sendable, Hashable {
        var provider: String
        /// The authorization request ``make(provider:request:now:)`` was given.
        var request: String
        /// The id the state is spent under: SHA-256 of it, hex.
        var id: String
        var expiresAt: Date
        /// The PKCE `code_verifier` whose S256 went to the upstream.
        var verifier: String
        /// The OpenID `nonce` that went to the upstream.
        var nonce: String
    }

    /// Checks a returned state against the browser's binding cookie.
    ///
    /// - Throws: ``ProviderSignInFailure`` `state_unknown`, `state_other_browser` or `state_expired`.
    func resume(_ state: String, provider: String, binding: String?, now: Date) throws(ProviderSignInFailure) -> Resumed {
        let parts = state.split(separator: ".", omittingEmptySubsequences: false)
        guard state.utf8.count <= 8192, parts.count == 4, let expires = Int(parts[0]), let payload = Base64URL.decode(String(parts[2])),
            let presented = Base64URL.decode(String(parts[3]))
        else { throw ProviderSignInFailure(.stateUnknown, "the state is not one this server made") }
        guard let binding, !binding.isEmpty else {
            throw ProviderSignInFailure(.stateOtherBrowser, "the browser did not bring the sign-in's cookie")
        }
        let body = parts[0...2].joined(separator: ".")
        guard ConstantTime.equals(mac("state", binding + "\u{0}" + body), presented) else {
            throw ProviderSignInFailure(.stateOtherBrowser, "the state was made for another browser, provider or request")
        }
        guard parts[1] == provider else { throw ProviderSignInFailure(.stateUnknown, "the state was made for another provider") }
        let nowSeconds = Int(now.timeIntervalSince1970)
        guard nowSeconds < expires, expires <= nowSeconds + Int(Self.lifetime) + 60 else {
            throw ProviderSignInFailure(.stateExpired, "the sign-in took longer than \(Int(Self.lifetime / 60)) minutes")
        }
        return Resumed(
            provider: provider, request: String(decoding: payload, as: UTF8.self), id: HashFunction.sha256.hexDigest(Array(state.utf8)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)), verifier: Base64URL.encode(mac("verifier", state)),
            nonce: Base64URL.encode(mac("nonce", state)))
    }

    /// The PKCE challenge and nonce of a state, for the redirect to the upstream.
    func challenge(for state: String) -> (codeChallenge: String, nonce: String) {
        let verifier = Base64URL.encode(mac("verifier", state))
        return (Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8))), Base64URL.encode(mac("nonce", state)))
    }

    private func mac(_ purpose: String, _ text: String) -> [UInt8] {
        HMAC.authenticationCode(for: Array("latchkey provider \(purpose) v1\u{0}\(text)".utf8), key: key)
    }
}

/// An upstream identity waiting to be linked to an account that already has its email, until
/// the user signs in to that account (S39): sealed with AES-GCM under the master key in a
/// `__Host-` cookie of this browser, so it can be neither read nor forged nor moved to another
/// browser, and it lasts ten minutes.
struct PendingLink: Sendable, Hashable {
    static let lifetime: TimeInterval = 600
    private static let context = "latchkey provider pending link v1"

    var provider: String
    var profile: UpstreamProfile
    var createdAt: Date

    /// The cookie's value.
    func sealed(_ masterKey: MasterKey) throws -> String {
        var members: [String: JSONValue] = [
            "provider": .string(provider), "subject": .string(profile.subject), "issuer": .string(profile.issuer),
            "email_verified": .bool(profile.emailVerified), "created": .number(createdAt.timeIntervalSince1970.rounded(.down)),
        ]
        if let email = profile.email { members["email"] = .string(email) }
        return Base64URL.encode(try masterKey.seal(JSONValue.object(members).serialized, context: Self.context))
    }

    /// The link a cookie holds, if it is genuine and not expired.
    init?(sealed: String, masterKey: MasterKey, now: Date) {
        guard sealed.utf8.count <= 4096, let bytes = Base64URL.decode(sealed), let plain = try? masterKey.unseal(bytes, context: Self.context),
            let json = try? JSONValue(parsing: plain), let provider = json["provider"]?.stringValue, let subject = json["subject"]?.stringValue,
            let issuer = json["issuer"]?.stringValue, let created = json["created"]?.numberValue
        else { return nil }
        let createdAt = Date(timeIntervalSince1970: created)
        guard now.timeIntervalSince(createdAt) < Self.lifetime, createdAt <= now.addingTimeInterval(60) else { return nil }
        self.provider = provider
        self.profile = UpstreamProfile(
            issuer: issuer, subject: subject, email: json["email"]?.stringValue, emailVerified: json["email_verified"]?.boolValue == true)
        self.createdAt = createdAt
    }

    init(provider: String, profile: UpstreamProfile, createdAt: Date) {
        self.provider = provider
        self.profile = profile
        self.createdAt = createdAt
    }
}
