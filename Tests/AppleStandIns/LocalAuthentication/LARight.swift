// Stand-in (Linux only, never shipped): LARight, a set of authentication requirements that gates
// a part of an app, and the requirement types it is built from.

public import Foundation

// mirrors: LocalAuthentication/LARight.h | localauthentication/laright | not Sendable, as Apple's
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LARight: NSObject {
    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/init()
    public override init() { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/init(requirement:)
    public init(requirement: LAAuthenticationRequirement) { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/state-swift.property
    open var state: LARight.State { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/tag
    open var tag: Int {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/authorize(localizedreason:completion:) | the async form
    open func authorize(localizedReason: String) async throws { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/checkcanauthorize(completion:) | the async form
    open func checkCanAuthorize() async throws { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/deauthorize(completion:) | the async form
    open func deauthorize() async { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/state-swift.enum
    public enum State: Int, @unchecked Sendable {
        // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/state-swift.enum/unknown
        case unknown = 0
        // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/state-swift.enum/authorizing
        case authorizing = 1
        // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/state-swift.enum/authorized
        case authorized = 2
        // mirrors: LocalAuthentication/LARight.h | localauthentication/laright/state-swift.enum/notauthorized
        case notAuthorized = 3
    }
}

// mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/laauthenticationrequirement
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LAAuthenticationRequirement: NSObject {
    // mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/laauthenticationrequirement/default
    open class var `default`: LAAuthenticationRequirement { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/laauthenticationrequirement/biometry
    open class var biometry: LAAuthenticationRequirement { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/laauthenticationrequirement/biometrycurrentset
    open class var biometryCurrentSet: LAAuthenticationRequirement { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/laauthenticationrequirement/biometry(fallback:)
    open class func biometry(fallback: LABiometryFallbackRequirement) -> Self {
        fatalError("stand-in")
    }
}

// mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/labiometryfallbackrequirement
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LABiometryFallbackRequirement: NSObject {
    // mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/labiometryfallbackrequirement/default
    open class var `default`: LABiometryFallbackRequirement { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAAuthenticationRequirement.h | localauthentication/labiometryfallbackrequirement/devicepasscode
    open class var devicePasscode: LABiometryFallbackRequirement { fatalError("stand-in") }
}
