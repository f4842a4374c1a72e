public import Foundation
import LatchkeyWire

/// The signed-in account as `GET /v1/me` describes it.
public struct Account: Sendable, Hashable {
    /// A user as the server shows it.
    public struct User: Sendable, Hashable, Codable {
        /// The server's user id (`sub` of the access token).
        public var id: String
        /// `nil` when unknown; for Sign in with Apple perhaps a private relay address.
        public var email: String?
        /// Whether the provider vouched for ``email``.
        public var emailVerified: Bool
        /// Whether ``email`` is an Apple private relay address.
        public var isPrivateEmail: Bool
        /// The given name, as Apple shared it once or the user set it.
        public var givenName: String?
        /// The family name.
        public var familyName: String?
        /// When the account was created.
        public var createdAt: Date

        /// A user with these fields.
        public init(
            id: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool, givenName: String?, familyName: String?,
            createdAt: Date
        ) {
            self.id = id
            self.email = email
            self.emailVerified = emailVerified
            self.isPrivateEmail = isPrivateEmail
            self.givenName = givenName
            self.familyName = familyName
            self.createdAt = createdAt
        }

        init(_ wire: WireUser) {
            self.init(
                id: wire.id, email: wire.email, emailVerified: wire.emailVerified, isPrivateEmail: wire.isPrivateEmail,
                givenName: wire.givenName, familyName: wire.familyName, createdAt: Date(wire.createdAt))
        }
    }

    /// One way the user signs in.
    public struct Identity: Sendable, Hashable {
        /// `apple`, `password`, or the id of one of the server's upstream providers (`google`,
        /// `github`, `sandbox` in development mode, …); a string, so a provider added later
        /// arrives intact. ``LatchkeyClient/unlink(_:)`` takes it.
        public var provider: String
        /// The email the provider gave, if any.
        public var email: String?
        /// The username, for the `password` identity.
        public var username: String?
        /// When the identity was linked.
        public var createdAt: Date

        /// An identity with these fields.
        public init(provider: String, email: String?, username: String?, createdAt: Date) {
            self.provider = provider
            self.email = email
            self.username = username
            self.createdAt = createdAt
        }
    }

    /// The user.
    public var user: User
    /// The password username, `nil` for an account without a password.
    public var username: String?
    /// How the user can sign in.
    public var identities: [Identity]
    /// The second factors the user has.
    public var factors: [SecondFactor]

    /// An account with these fields.
    public init(user: User, username: String?, identities: [Identity], factors: [SecondFactor]) {
        self.user = user
        self.username = username
        self.identities = identities
        self.factors = factors
    }

    init(_ wire: WireAccount) {
        self.init(
            user: User(wire.user), username: wire.username,
            identities: wire.identities.map {
                Identity(provider: $0.provider, email: $0.email, username: $0.username, createdAt: Date($0.createdAt))
            },
            factors: wire.factors.compactMap(SecondFactor.init))
    }
}

/// A second factor a user can prove, in an ``MFAChallenge`` and in ``Account/factors``.
public enum SecondFactor: Sendable, Hashable {
    /// A device key (Secure Enclave or a persisted right) with its server id and label.
    case deviceKey(id: String, label: String)
    /// A confirmed TOTP authenticator.
    case totp
    /// Unused recovery codes remain.
    case recoveryCode
    /// One of the account's passkeys: prove it with ``SecondFactorProof/passkey(_:)``.
    case passkey

    /// The factor, or `nil` for a kind this SDK cannot prove (one the server added later), so
    /// an app's `switch` over the cases it knows stays exhaustive.
    init?(_ wire: WireFactor) {
        switch wire.type {
        case .deviceKey: self = .deviceKey(id: wire.id ?? "", label: wire.label ?? "")
        case .totp: self = .totp
        case .recoveryCode: self = .recoveryCode
        case .passkey: self = .passkey
        default: return nil
        }
    }
}

/// One of the user's sessions, as `sessions()` lists them.
public struct SessionInfo: Sendable, Hashable, Identifiable {
    /// The session id.
    public var id: String
    /// When it began.
    public var createdAt: Date
    /// When its refresh token was last used.
    public var lastUsedAt: Date
    /// When it ends if unused.
    public var expiresAt: Date
    /// How the user authenticated (RFC 8176): `apple`, `pwd`, `hwk`, `otp`, `rc`, `mfa`.
    public var amr: [String]
    /// The `User-Agent` that created it.
    public var userAgent: String?
    /// The address that created it.
    public var ip: String?
    /// Whether it is this client's session.
    public var isCurrent: Bool

    init(_ wire: WireSessionInfo) {
        id = wire.id
        createdAt = Date(wire.createdAt)
        lastUsedAt = Date(wire.lastUsedAt)
        expiresAt = Date(wire.expiresAt)
        amr = wire.amr
        userAgent = wire.userAgent
        ip = wire.ip
        isCurrent = wire.current
    }
}

/// A registered device key, as `registerDeviceKey(_:label:)` returns it.
public struct DeviceInfo: Sendable, Hashable, Identifiable {
    /// The server's id of the key; ``SecondFactorProof/deviceKey(id:key:)`` and step-up use it.
    public var id: String
    /// The label the user gave.
    public var label: String
    /// When it was registered.
    public var createdAt: Date
    /// When it last signed a challenge, `nil` if never.
    public var lastUsedAt: Date?

    init(_ wire: WireDevice) {
        id = wire.id
        label = wire.label
        createdAt = Date(wire.createdAt)
        lastUsedAt = wire.lastUsedAt.map(Date.init)
    }
}

extension Date {
    init(_ timestamp: WireTimestamp) {
        self.init(timeIntervalSince1970: TimeInterval(timestamp.secondsSince1970))
    }
}
