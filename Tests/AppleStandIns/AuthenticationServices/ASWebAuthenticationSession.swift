// Stand-in (Linux only, never shipped): the system browser session a web sign-in runs in, its
// callback matcher, its presentation protocol and its error domain.

public import Foundation

// mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession | not Sendable, not main-actor, as Apple's
@available(iOS 12.0, macOS 10.15, watchOS 6.2, *)
@available(tvOS, unavailable)
open class ASWebAuthenticationSession: NSObject {
    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/completionhandler | a plain (not @Sendable) block type, as Apple's
    public typealias CompletionHandler = (URL?, (any Error)?) -> Void

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/init(url:callback:completionhandler:)
    @available(iOS 17.4, macOS 14.4, watchOS 10.4, visionOS 1.1, *)
    public init(url URL: URL, callback: ASWebAuthenticationSession.Callback, completionHandler: @escaping ASWebAuthenticationSession.CompletionHandler) {
        fatalError("stand-in")
    }

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/init(url:callbackurlscheme:completionhandler:) | marked to-be-deprecated in favour of the callback initializer, which Swift does not warn about; the only one before iOS 17.4 / macOS 14.4
    public init(url URL: URL, callbackURLScheme: String?, completionHandler: @escaping ASWebAuthenticationSession.CompletionHandler) {
        fatalError("stand-in")
    }

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/presentationcontextprovider | weak, as Apple's: the caller keeps the provider alive
    @available(iOS 13.0, macOS 10.15, *)
    @available(watchOS, unavailable)
    weak open var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/prefersephemeralwebbrowsersession
    @available(iOS 13.0, macOS 10.15, watchOS 6.2, *)
    open var prefersEphemeralWebBrowserSession: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/canstart
    @available(iOS 13.4, macOS 10.15.4, watchOS 6.2, *)
    open var canStart: Bool { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/start() | an Objective-C BOOL result, which Swift lets a caller ignore
    @discardableResult
    open func start() -> Bool { fatalError("stand-in") }

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/cancel()
    open func cancel() { fatalError("stand-in") }
}

@available(iOS 12.0, macOS 10.15, watchOS 6.2, *)
@available(tvOS, unavailable)
extension ASWebAuthenticationSession {
    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/callback | ASWebAuthenticationSessionCallback, Sendable (AS_SWIFT_SENDABLE) as Apple's
    @available(iOS 17.4, macOS 14.4, watchOS 10.4, visionOS 1.1, *)
    open class Callback: NSObject, @unchecked Sendable {
        // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/callback/customscheme(_:)
        open class func customScheme(_ customScheme: String) -> Self { fatalError("stand-in") }

        // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/callback/https(host:path:) | the host must be on a domain associated with the app through webcredentials
        open class func https(host: String, path: String) -> Self { fatalError("stand-in") }

        // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsession/callback/matchesurl(_:)
        open func matchesURL(_ url: URL) -> Bool { fatalError("stand-in") }
    }
}

// mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationpresentationcontextproviding | the header gives it no actor; nonisolated here, the stricter reading for a conformer (a nonisolated witness satisfies either)
@available(iOS 13.0, macOS 10.15, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
public protocol ASWebAuthenticationPresentationContextProviding: NSObjectProtocol {
    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationpresentationcontextproviding/presentationanchor(for:)
    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor
}

// mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsessionerror | Apple's is also CustomNSError; an Error struct is what the glue's `as? ASWebAuthenticationSessionError` needs
@available(iOS 12.0, macOS 10.15, watchOS 6.2, *)
@available(tvOS, unavailable)
public struct ASWebAuthenticationSessionError: Error, Hashable, Sendable {
    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsessionerror/code-swift.property
    public let code: Code

    // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsessionerror/code
    public enum Code: Int, @unchecked Sendable {
        // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsessionerror/code/canceledlogin
        case canceledLogin = 1
        // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsessionerror/code/presentationcontextnotprovided
        @available(iOS 13.0, macOS 10.15, *)
        case presentationContextNotProvided = 2
        // mirrors: AuthenticationServices/ASWebAuthenticationSession.h | authenticationservices/aswebauthenticationsessionerror/code/presentationcontextinvalid
        @available(iOS 13.0, macOS 10.15, *)
        case presentationContextInvalid = 3
    }
}
