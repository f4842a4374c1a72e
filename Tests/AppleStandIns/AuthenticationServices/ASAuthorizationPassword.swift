// Stand-in (Linux only, never shipped): saved passwords offered through the authorization sheet.

public import Foundation

// mirrors: AuthenticationServices/ASAuthorizationPasswordProvider.h | authenticationservices/asauthorizationpasswordprovider
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationPasswordProvider: NSObject, ASAuthorizationProvider {
    // mirrors: AuthenticationServices/ASAuthorizationPasswordProvider.h | authenticationservices/asauthorizationpasswordprovider/init()
    public override init() { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationPasswordProvider.h | authenticationservices/asauthorizationpasswordprovider/createrequest()
    open func createRequest() -> ASAuthorizationPasswordRequest { fatalError("stand-in") }
}

// mirrors: AuthenticationServices/ASAuthorizationPasswordRequest.h | authenticationservices/asauthorizationpasswordrequest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationPasswordRequest: ASAuthorizationRequest {}

// mirrors: AuthenticationServices/ASPasswordCredential.h | authenticationservices/aspasswordcredential | not Sendable, as Apple's
@available(iOS 12.0, macOS 10.15, tvOS 15.0, watchOS 6.0, *)
open class ASPasswordCredential: NSObject, ASAuthorizationCredential {
    // mirrors: AuthenticationServices/ASPasswordCredential.h | authenticationservices/aspasswordcredential/init(user:password:)
    public init(user: String, password: String) { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASPasswordCredential.h | authenticationservices/aspasswordcredential/user
    open var user: String { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASPasswordCredential.h | authenticationservices/aspasswordcredential/password
    open var password: String { fatalError("stand-in") }
}
