public import Foundation
import LatchkeyWire

/// One of the account's passkeys, as ``LatchkeyClient/passkeys()`` lists them.
public struct Passkey: Sendable, Hashable, Identifiable {
    /// The server's id of the passkey, for ``LatchkeyClient/renamePasskey(_:to:)`` and
    /// ``LatchkeyClient/removePasskey(_:)``.
    public var id: String
    /// What the user calls it.
    public var name: String
    /// When it was registered.
    public var createdAt: Date
    /// When it last signed in, `nil` if never.
    public var lastUsedAt: Date?
    /// Whether it is synced (iCloud Keychain, a password manager), as last seen.
    public var isBackedUp: Bool
    /// How the client said it reaches the authenticator.
    public var transports: [String]
    /// The authenticator model, a UUID string (all zeros for Apple's passkeys).
    public var aaguid: String

    init(_ wire: WirePasskey) {
        id = wire.id
        name = wire.name
        createdAt = Date(wire.createdAt)
        lastUsedAt = wire.lastUsedAt.map(Date.init)
        isBackedUp = wire.backedUp
        transports = wire.transports
        aaguid = wire.aaguid
    }
}
