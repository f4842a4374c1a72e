import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// The `state` of a sign-in at an upstream, and what derives from it (S38): a
/// ``BrowserBoundState`` carrying the provider and the authorization request, bound to a
/// `__Host-` cookie (`SameSite=Lax`: the upstream's redirect back is a top-level GET, which
/// carries it). The PKCE verifier and the OIDC nonce derive from the state: only this server can
/// compute them, and nothing about a pending sign-in is stored until its callback spends the state.
struct ProviderState: Sendable {
    /// How long the browser may stay at the upstream.
    static let lifetime: TimeInterval = 600

    private let states: BrowserBoundState

    init(masterKey: MasterKey) {
        states = BrowserBoundState(name: "provider", keyLabel: "latchkey provider state v1", lifetime: Self.lifetime, masterKey: masterKey)
    }

    /// A new state for `provider` carrying `request`, the binding for its cookie, and the PKCE
    /// challenge and nonce for the redirect to the upstream.
    func make(provider: String, request: String, now: Date) -> (state: String, binding: String, codeChallenge: String, nonce: String) {
        let (state, binding) = states.make(provider + "\u{0}" + request, now: now)
        let verifier = states.derived("verifier", from: state)
        return (state, binding, Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8))), states.derived("nonce", from: state))
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
    /// - Throws: ``ProviderSignInFailure`` `state_unknown` (not ours, or another provider's),
    ///   `state_other_browser` or `state_expired`.
    func resume(_ state: String, provider: String, binding: String?, now: Date) throws(ProviderSignInFailure) -> Resumed {
        let opened: (payload: String, expiresAt: Date)
        do {
            opened = try states.open(state, binding: binding, now: now)
        } catch {
            throw switch error {
            case .malformed: ProviderSignInFailure(.stateUnknown, "the state is not one this server made")
            case .unbound: ProviderSignInFailure(.stateOtherBrowser, "the browser did not bring the sign-in's cookie")
            case .mismatched: ProviderSignInFailure(.stateOtherBrowser, "the state was made for another browser, provider or request")
            case .expired: ProviderSignInFailure(.stateExpired, "the sign-in took longer than \(Int(Self.lifetime / 60)) minutes")
            }
        }
        let parts = opened.payload.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == provider else { throw ProviderSignInFailure(.stateUnknown, "the state was made for another provider") }
        return Resumed(
            provider: provider, request: String(parts[1]), id: HashFunction.sha256.hexDigest(Array(state.utf8)), expiresAt: opened.expiresAt,
            verifier: states.derived("verifier", from: state), nonce: states.derived("nonce", from: state))
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
