// Portable on purpose: turning what Apple's credential carries into what the server wants is
// logic a Linux test reaches; the glue only copies the fields out of
// `ASAuthorizationAppleIDCredential`.
import Foundation

/// The fields of an `ASAuthorizationAppleIDCredential`, copied out of Apple's (non-`Sendable`)
/// object so that they can cross from the delegate callback to the awaiting caller.
struct AppleIDCredentialFields: Sendable, Hashable {
    var user: String
    var identityToken: Data?
    var authorizationCode: Data? = nil
    var fullName: PersonNameComponents? = nil
    var email: String? = nil
}

extension AppleCredential {
    /// What the server wants from Apple's credential: the identity token and the authorization
    /// code as UTF-8 text, the raw nonce whose hash was in the request, and the name and email
    /// when Apple shared them (the first authorization only; an all-empty name is no name).
    ///
    /// - Throws: ``LatchkeyError`` (``LatchkeyError/Code/invalidResponse``) when Apple returned
    ///   no identity token, or one that is not UTF-8.
    init(_ fields: AppleIDCredentialFields, rawNonce: String) throws {
        guard let tokenData = fields.identityToken, let token = String(data: tokenData, encoding: .utf8), !token.isEmpty else {
            throw LatchkeyError(.invalidResponse, "Sign in with Apple returned no identity token")
        }
        let code = fields.authorizationCode.flatMap { String(data: $0, encoding: .utf8) }
        var name: PersonName?
        if let components = fields.fullName {
            let given = components.givenName.flatMap { $0.isEmpty ? nil : $0 }
            let family = components.familyName.flatMap { $0.isEmpty ? nil : $0 }
            if given != nil || family != nil { name = PersonName(givenName: given, familyName: family) }
        }
        let email = fields.email.flatMap { $0.isEmpty ? nil : $0 }
        self.init(user: fields.user, identityToken: token, authorizationCode: code, rawNonce: rawNonce, name: name, email: email)
    }
}
