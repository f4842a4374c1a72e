public import Foundation

/// What Sign in with Apple hands the app (`ASAuthorizationAppleIDCredential`), for
/// ``LatchkeyClient/signInWithApple(_:)``.
public struct AppleCredential: Sendable {
    /// Apple's stable user id for this team (`sub`); kept for the launch-time credential check.
    public var user: String
    /// Apple's identity token, a compact JWS (the credential's `identityToken` as UTF-8).
    public var identityToken: String
    /// Apple's single-use authorization code, which the server exchanges for Apple's refresh token.
    public var authorizationCode: String?
    /// The raw nonce whose SHA-256 went into the request (``Nonce/make()``).
    public var rawNonce: String
    /// The name Apple shares on the first authorization only; sent once, kept by the server.
    public var name: PersonName?
    /// The email Apple shares on the first authorization only. The server reads the email from the
    /// identity token, never from the app; this is for the app's own display.
    public var email: String?

    /// A credential as Apple gave it.
    public init(
        user: String, identityToken: String, authorizationCode: String?, rawNonce: String, name: PersonName? = nil, email: String? = nil
    ) {
        self.user = user
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.rawNonce = rawNonce
        self.name = name
        self.email = email
    }
}

/// A person's name, as Apple shares it once (`PersonNameComponents`) or a sign-up form asks for it.
public struct PersonName: Sendable, Hashable {
    /// The given (first) name.
    public var givenName: String?
    /// The family (last) name.
    public var familyName: String?

    /// A name; either part may be absent.
    public init(givenName: String? = nil, familyName: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
    }
}

extension PersonName {
    /// The given and family names of `components`, what `ASAuthorizationAppleIDCredential.fullName`
    /// holds; empty parts count as absent.
    public init(_ components: PersonNameComponents) {
        self.init(
            givenName: components.givenName.flatMap { $0.isEmpty ? nil : $0 },
            familyName: components.familyName.flatMap { $0.isEmpty ? nil : $0 })
    }
}
