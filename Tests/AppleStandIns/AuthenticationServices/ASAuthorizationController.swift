// Stand-in (Linux only, never shipped): the controller that performs authorization requests, its
// delegate and presentation protocols, and its error domain.

public import Foundation

// mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller | not Sendable, not main-actor, as Apple's
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
open class ASAuthorizationController: NSObject {
    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/init(authorizationrequests:)
    public init(authorizationRequests: [ASAuthorizationRequest]) { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/authorizationrequests
    open var authorizationRequests: [ASAuthorizationRequest] { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/delegate | weak, as Apple's: the caller keeps the delegate alive
    weak open var delegate: (any ASAuthorizationControllerDelegate)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/presentationcontextprovider | weak, as Apple's
    @available(watchOS, unavailable)
    weak open var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/performrequests()
    open func performRequests() { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/performrequests(options:)
    @available(iOS 16.0, macOS 13.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    open func performRequests(options: ASAuthorizationController.RequestOptions) { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/performautofillassistedrequests() | passkey AutoFill in the QuickType bar; iOS (and Mac Catalyst, visionOS) only
    @available(iOS 16.0, *)
    @available(macOS, unavailable)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    open func performAutoFillAssistedRequests() { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/cancel()
    @available(iOS 16.0, macOS 13.0, tvOS 18.0, *)
    @available(watchOS, unavailable)
    open func cancel() { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/requestoptions
    @available(iOS 16.0, macOS 13.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public struct RequestOptions: OptionSet, Sendable {
        // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/requestoptions/init(rawvalue:)
        public init(rawValue: UInt) { self.rawValue = rawValue }
        // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/requestoptions/rawvalue
        public let rawValue: UInt
        // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontroller/requestoptions/preferimmediatelyavailablecredentials
        public static var preferImmediatelyAvailableCredentials: ASAuthorizationController.RequestOptions { fatalError("stand-in") }
    }
}

// mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontrollerdelegate | main-actor (NS_SWIFT_UI_ACTOR), as Apple's; its two methods are optional there and required here, so that a misspelt label fails to compile instead of never being called
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
@MainActor
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontrollerdelegate/authorizationcontroller(controller:didcompletewithauthorization:)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontrollerdelegate/authorizationcontroller(controller:didcompletewitherror:)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

// mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontrollerpresentationcontextproviding | main-actor (NS_SWIFT_UI_ACTOR), as Apple's
@available(iOS 13.0, macOS 10.15, tvOS 13.0, *)
@available(watchOS, unavailable)
@MainActor
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    // mirrors: AuthenticationServices/ASAuthorizationController.h | authenticationservices/asauthorizationcontrollerpresentationcontextproviding/presentationanchor(for:)
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}

// mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror | Apple's is also CustomNSError; an Error struct is what the glue's `as? ASAuthorizationError` needs
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
public struct ASAuthorizationError: Error, Hashable, Sendable {
    // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code-swift.property
    public let code: Code

    // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code | the cases up to matchedExcludedCredential; the later ones (credential import and export, and those of newer SDKs) are left out, as the glue never names them
    public enum Code: Int, @unchecked Sendable {
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/unknown
        case unknown = 1000
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/canceled
        case canceled = 1001
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/invalidresponse
        case invalidResponse = 1002
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/nothandled
        case notHandled = 1003
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/failed
        case failed = 1004
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/notinteractive
        @available(iOS 15.0, macOS 12.0, *)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        case notInteractive = 1005
        // mirrors: AuthenticationServices/ASAuthorizationError.h | authenticationservices/asauthorizationerror/code/matchedexcludedcredential | a registration whose excludedCredentials the passkey manager holds
        @available(iOS 18.0, macOS 15.0, visionOS 2.0, *)
        case matchedExcludedCredential = 1006
    }
}
