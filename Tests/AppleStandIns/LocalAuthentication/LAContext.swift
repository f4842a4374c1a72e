// Stand-in (Linux only, never shipped): LAContext, the evaluation context for one authentication.

public import Foundation
public import Security

// mirrors: LocalAuthentication/LAContext.h | localauthentication/lacontext | not Sendable, as Apple's
@available(iOS 8.0, macOS 10.10, watchOS 3.0, *)
open class LAContext: NSObject {
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/lacontext/init()
    public override init() { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAContext.h | localauthentication/lacontext/evaluateaccesscontrol(_:operation:localizedreason:reply:) | the async form of the reply-block method
    @available(iOS 9.0, macOS 10.11, watchOS 3.0, *)
    open func evaluateAccessControl(
        _ accessControl: SecAccessControl, operation: LAAccessControlOperation, localizedReason: String
    ) async throws -> Bool {
        fatalError("stand-in")
    }

    // mirrors: LocalAuthentication/LAContext.h | localauthentication/lacontext/interactionnotallowed
    @available(iOS 11.0, macOS 10.13, watchOS 4.0, *)
    open var interactionNotAllowed: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // mirrors: LocalAuthentication/LAContext.h | localauthentication/lacontext/invalidate()
    @available(iOS 9.0, macOS 10.11, watchOS 3.0, *)
    open func invalidate() { fatalError("stand-in") }
}

// mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation
@available(iOS 9.0, macOS 10.11, watchOS 3.0, *)
public enum LAAccessControlOperation: Int, @unchecked Sendable {
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation/createitem
    case createItem = 0
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation/useitem
    case useItem = 1
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation/createkey
    case createKey = 2
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation/usekeysign
    case useKeySign = 3
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation/usekeydecrypt
    case useKeyDecrypt = 4
    // mirrors: LocalAuthentication/LAContext.h | localauthentication/laaccesscontroloperation/usekeykeyexchange
    case useKeyKeyExchange = 5
}
