// Stand-in (Linux only, never shipped): an authorization, its credential, and the requests and
// providers it comes from.

public import Foundation

// mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization | not Sendable, as Apple's
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorization: NSObject {
    // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/provider
    open var provider: any ASAuthorizationProvider { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/credential
    open var credential: any ASAuthorizationCredential { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/scope
    public struct Scope: RawRepresentable, Hashable, Sendable {
        // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/scope/init(rawvalue:)
        public init(rawValue: String) { self.rawValue = rawValue }
        // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/scope/rawvalue
        public let rawValue: String
        // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/scope/fullname
        public static var fullName: ASAuthorization.Scope { fatalError("stand-in") }
        // mirrors: AuthenticationServices/ASAuthorization.h | authenticationservices/asauthorization/scope/email
        public static var email: ASAuthorization.Scope { fatalError("stand-in") }
    }
}

// mirrors: AuthenticationServices/ASAuthorizationCredential.h | authenticationservices/asauthorizationcredential | Apple's also refines NSCopying and NSSecureCoding, which the glue does not use
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
public protocol ASAuthorizationCredential: NSObjectProtocol {}

// mirrors: AuthenticationServices/ASAuthorizationProvider.h | authenticationservices/asauthorizationprovider
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
public protocol ASAuthorizationProvider: NSObjectProtocol {}

// mirrors: AuthenticationServices/ASAuthorizationRequest.h | authenticationservices/asauthorizationrequest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationRequest: NSObject {
    // mirrors: AuthenticationServices/ASAuthorizationRequest.h | authenticationservices/asauthorizationrequest/provider
    open var provider: any ASAuthorizationProvider { fatalError("stand-in") }
}

// mirrors: AuthenticationServices/ASAuthorizationOpenIDRequest.h | authenticationservices/asauthorizationopenidrequest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationOpenIDRequest: ASAuthorizationRequest {
    // mirrors: AuthenticationServices/ASAuthorizationOpenIDRequest.h | authenticationservices/asauthorizationopenidrequest/requestedscopes
    open var requestedScopes: [ASAuthorization.Scope]? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationOpenIDRequest.h | authenticationservices/asauthorizationopenidrequest/state
    open var state: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationOpenIDRequest.h | authenticationservices/asauthorizationopenidrequest/nonce
    open var nonce: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}
