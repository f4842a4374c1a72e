// Stand-in (Linux only, never shipped): LocalAuthentication's error domain, as Swift imports an
// NS_ERROR_ENUM: a struct whose `code` is an enum of the domain's codes.

// mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct | Apple's is also CustomNSError; an Error struct is what the glue's `as? LAError` needs
public struct LAError: Error, Hashable, Sendable {
    // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code
    public let code: Code

    // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum | the common cases; deprecated Touch ID names and companion/watch cases are left out, as the glue never names them
    public enum Code: Int, @unchecked Sendable {
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/authenticationfailed
        case authenticationFailed = -1
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/usercancel
        case userCancel = -2
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/userfallback
        case userFallback = -3
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/systemcancel
        case systemCancel = -4
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/passcodenotset
        case passcodeNotSet = -5
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/biometrynotavailable
        @available(iOS 11.0, macOS 10.13, watchOS 4.0, *)
        case biometryNotAvailable = -6
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/biometrynotenrolled
        @available(iOS 11.0, macOS 10.13, watchOS 4.0, *)
        case biometryNotEnrolled = -7
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/biometrylockout
        @available(iOS 11.0, macOS 10.13, watchOS 4.0, *)
        case biometryLockout = -8
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/appcancel
        case appCancel = -9
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/invalidcontext
        case invalidContext = -10
        // mirrors: LocalAuthentication/LAError.h | localauthentication/laerror-swift.struct/code-swift.enum/notinteractive
        case notInteractive = -1004
    }
}
