// Stand-in (Linux only, never shipped): passkeys on the device's passkey manager: the provider,
// its registration and assertion requests, the credentials they return, and the constants they use.

public import Foundation

// mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialuserverificationpreference | an NSString typed enum, imported as a RawRepresentable struct
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
public struct ASAuthorizationPublicKeyCredentialUserVerificationPreference: RawRepresentable, Hashable, Sendable {
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialuserverificationpreference/init(rawvalue:)
    public init(rawValue: String) { self.rawValue = rawValue }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialuserverificationpreference/rawvalue
    public let rawValue: String
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialuserverificationpreference/required
    public static var required: ASAuthorizationPublicKeyCredentialUserVerificationPreference { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialuserverificationpreference/preferred
    public static var preferred: ASAuthorizationPublicKeyCredentialUserVerificationPreference { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialuserverificationpreference/discouraged
    public static var discouraged: ASAuthorizationPublicKeyCredentialUserVerificationPreference { fatalError("stand-in") }
}

// mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialattachment | an NS_ENUM, which Swift imports as a non-frozen enum (hence the glue's @unknown default)
@available(iOS 16.6, macOS 13.5, tvOS 16.6, *)
@available(watchOS, unavailable)
public enum ASAuthorizationPublicKeyCredentialAttachment: Int, @unchecked Sendable {
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialattachment/platform
    case platform = 0
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialConstants.h | authenticationservices/asauthorizationpublickeycredentialattachment/crossplatform
    case crossPlatform = 1
}

// mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialDescriptor.h | authenticationservices/asauthorizationplatformpublickeycredentialdescriptor | Sendable, as Apple's page lists it
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
open class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject, @unchecked Sendable {
    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialDescriptor.h | authenticationservices/asauthorizationplatformpublickeycredentialdescriptor/init(credentialid:)
    public init(credentialID: Data) { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialDescriptor.h | authenticationservices/asauthorizationpublickeycredentialdescriptor/credentialid | declared by the descriptor protocol, which the class adopts
    open var credentialID: Data {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

// mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialProvider.h | authenticationservices/asauthorizationplatformpublickeycredentialprovider | not Sendable, as Apple's
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
open class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject, ASAuthorizationProvider {
    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialProvider.h | authenticationservices/asauthorizationplatformpublickeycredentialprovider/init(relyingpartyidentifier:)
    public init(relyingPartyIdentifier: String) { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialProvider.h | authenticationservices/asauthorizationplatformpublickeycredentialprovider/relyingpartyidentifier
    open var relyingPartyIdentifier: String { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialProvider.h | authenticationservices/asauthorizationplatformpublickeycredentialprovider/createcredentialregistrationrequest(challenge:name:userid:)
    open func createCredentialRegistrationRequest(challenge: Data, name: String, userID: Data) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        fatalError("stand-in")
    }

    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialProvider.h | authenticationservices/asauthorizationplatformpublickeycredentialprovider/createcredentialregistrationrequest(challenge:name:userid:requeststyle:) | the iOS 18 SDK header
    @available(iOS 18.0, macOS 15.0, visionOS 2.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    open func createCredentialRegistrationRequest(
        challenge: Data, name: String, userID: Data, requestStyle: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.RequestStyle
    ) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        fatalError("stand-in")
    }

    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialProvider.h | authenticationservices/asauthorizationplatformpublickeycredentialprovider/createcredentialassertionrequest(challenge:)
    open func createCredentialAssertionRequest(challenge: Data) -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest { fatalError("stand-in") }
}

// mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest | not Sendable, as Apple's
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
open class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest {
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationpublickeycredentialregistrationrequest/relyingpartyidentifier | declared by the registration-request protocol, which the class adopts (as the next five)
    open var relyingPartyIdentifier: String { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationpublickeycredentialregistrationrequest/userid
    open var userID: Data {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationpublickeycredentialregistrationrequest/name
    open var name: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationpublickeycredentialregistrationrequest/displayname
    open var displayName: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationpublickeycredentialregistrationrequest/challenge
    open var challenge: Data {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationpublickeycredentialregistrationrequest/userverificationpreference
    open var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASAuthorizationWebBrowserPlatformPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest/excludedcredentials | from the web-browser protocol the class adopts in a category of the iOS 17.4 SDK; nullable there; unavailable on visionOS, so the glue wraps it in #if !os(visionOS)
    @available(iOS 17.4, macOS 13.5, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    open var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor]? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest/requeststyle-swift.property
    @available(iOS 18.0, macOS 15.0, visionOS 2.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    open var requestStyle: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.RequestStyle {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest/requeststyle-swift.enum | an NS_ENUM with NS_SWIFT_NAME into the class
    @available(iOS 18.0, macOS 15.0, visionOS 2.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public enum RequestStyle: Int, @unchecked Sendable {
        // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest/requeststyle-swift.enum/standard
        case standard = 0
        // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest/requeststyle-swift.enum/conditional | shortly after a password sign-in; the passkey manager may decline with an error and no UI
        case conditional = 1
    }
}

// mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialAssertionRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialassertionrequest | not Sendable, as Apple's
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
open class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest {
    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialAssertionRequest.h | authenticationservices/asauthorizationplatformpublickeycredentialassertionrequest/allowedcredentials | non-null; empty allows any of the relying party's passkeys
    open var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialAssertionRequest.h | authenticationservices/asauthorizationpublickeycredentialassertionrequest/challenge | declared by the assertion-request protocol, which the class adopts (as the next two)
    open var challenge: Data {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialAssertionRequest.h | authenticationservices/asauthorizationpublickeycredentialassertionrequest/relyingpartyidentifier
    open var relyingPartyIdentifier: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialAssertionRequest.h | authenticationservices/asauthorizationpublickeycredentialassertionrequest/userverificationpreference
    open var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

// mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistration.h | authenticationservices/asauthorizationplatformpublickeycredentialregistration | not Sendable, as Apple's
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
open class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASAuthorizationCredential {
    // mirrors: AuthenticationServices/ASPublicKeyCredential.h | authenticationservices/aspublickeycredential/rawclientdatajson | declared by ASPublicKeyCredential, which the class adopts (as credentialID)
    open var rawClientDataJSON: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASPublicKeyCredential.h | authenticationservices/aspublickeycredential/credentialid
    open var credentialID: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialRegistration.h | authenticationservices/asauthorizationpublickeycredentialregistration/rawattestationobject | nullable, as Apple's
    open var rawAttestationObject: Data? { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialRegistration.h | authenticationservices/asauthorizationplatformpublickeycredentialregistration/attachment
    @available(iOS 16.6, macOS 13.5, tvOS 16.6, *)
    open var attachment: ASAuthorizationPublicKeyCredentialAttachment { fatalError("stand-in") }
}

// mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialAssertion.h | authenticationservices/asauthorizationplatformpublickeycredentialassertion | not Sendable, as Apple's
@available(iOS 15.0, macOS 12.0, tvOS 16.0, *)
@available(watchOS, unavailable)
open class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASAuthorizationCredential {
    // mirrors: AuthenticationServices/ASPublicKeyCredential.h | authenticationservices/aspublickeycredential/rawclientdatajson | declared by ASPublicKeyCredential, which the class adopts (as credentialID)
    open var rawClientDataJSON: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASPublicKeyCredential.h | authenticationservices/aspublickeycredential/credentialid
    open var credentialID: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialAssertion.h | authenticationservices/asauthorizationpublickeycredentialassertion/rawauthenticatordata | declared by the assertion protocol, which the class adopts (as userID and signature)
    open var rawAuthenticatorData: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialAssertion.h | authenticationservices/asauthorizationpublickeycredentialassertion/userid | the user handle given at registration
    open var userID: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPublicKeyCredentialAssertion.h | authenticationservices/asauthorizationpublickeycredentialassertion/signature
    open var signature: Data { fatalError("stand-in") }
    // mirrors: AuthenticationServices/ASAuthorizationPlatformPublicKeyCredentialAssertion.h | authenticationservices/asauthorizationplatformpublickeycredentialassertion/attachment
    @available(iOS 16.6, macOS 13.5, tvOS 16.6, *)
    open var attachment: ASAuthorizationPublicKeyCredentialAttachment { fatalError("stand-in") }
}
