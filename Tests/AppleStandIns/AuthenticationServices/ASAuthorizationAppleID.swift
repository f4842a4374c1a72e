// Stand-in (Linux only, never shipped): Sign in with Apple's provider, request and credential.

public import Foundation

// mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider | not Sendable, as Apple's
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationAppleIDProvider: NSObject, ASAuthorizationProvider {
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/init()
    public override init() { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/createrequest()
    open func createRequest() -> ASAuthorizationAppleIDRequest { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/getcredentialstate(foruserid:completion:) | the async form
    open func credentialState(forUserID userID: String) async throws -> ASAuthorizationAppleIDProvider.CredentialState {
        fatalError("stand-in")
    }

    // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/credentialrevokednotification | Apple's is a `class let`; a read-only class property stands in
    open class var credentialRevokedNotification: NSNotification.Name { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/credentialstate
    public enum CredentialState: Int, @unchecked Sendable {
        // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/credentialstate/revoked
        case revoked = 0
        // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/credentialstate/authorized
        case authorized = 1
        // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/credentialstate/notfound
        case notFound = 2
        // mirrors: AuthenticationServices/ASAuthorizationAppleIDProvider.h | authenticationservices/asauthorizationappleidprovider/credentialstate/transferred
        case transferred = 3
    }
}

// mirrors: AuthenticationServices/ASAuthorizationAppleIDRequest.h | authenticationservices/asauthorizationappleidrequest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationAppleIDRequest: ASAuthorizationOpenIDRequest {
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDRequest.h | authenticationservices/asauthorizationappleidrequest/user
    open var user: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

// mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential | not Sendable, as Apple's
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationAppleIDCredential: NSObject, ASAuthorizationCredential {
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/user
    open var user: String { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/state
    open var state: String? { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/authorizedscopes
    open var authorizedScopes: [ASAuthorization.Scope] { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/authorizationcode
    open var authorizationCode: Data? { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/identitytoken
    open var identityToken: Data? { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/email
    open var email: String? { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationAppleIDCredential.h | authenticationservices/asauthorizationappleidcredential/fullname
    open var fullName: PersonNameComponents? { fatalError("stand-in") }
}
