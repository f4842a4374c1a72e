import LatchkeyWire

/// The accounts and passwords domain's values in their wire form.

extension WireIdentity {
    init(_ identity: AccountIdentity) {
        self.init(provider: identity.provider, email: identity.email, username: identity.username, createdAt: WireTimestamp(identity.createdAt))
    }
}

extension WireAccount {
    init(_ profile: AccountProfile) {
        self.init(
            user: WireUser(profile.user), username: profile.username, identities: profile.identities.map(WireIdentity.init),
            factors: profile.factors.map(WireFactor.init))
    }
}
