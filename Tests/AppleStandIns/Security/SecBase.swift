// Stand-in (Linux only, never shipped): Security's base types and result codes.

public import Foundation

// mirrors: MacTypes.h | kernel/osstatus | Int32, as on Apple platforms
public typealias OSStatus = Int32

// mirrors: Security/SecBase.h | security/seckey | a CF class; not Sendable (the stricter reading)
public final class SecKey {
    private init() { fatalError("stand-in") }
}

// mirrors: Security/SecBase.h | security/secaccesscontrol | a CF class; not Sendable (the stricter reading)
public final class SecAccessControl {
    private init() { fatalError("stand-in") }
}

// mirrors: Security/SecBase.h | security/errsecsuccess
public var errSecSuccess: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecduplicateitem
public var errSecDuplicateItem: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecitemnotfound
public var errSecItemNotFound: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecinteractionnotallowed
public var errSecInteractionNotAllowed: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecmissingentitlement
public var errSecMissingEntitlement: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecusercanceled
public var errSecUserCanceled: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecauthfailed
public var errSecAuthFailed: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/errsecnotavailable
public var errSecNotAvailable: OSStatus { fatalError("stand-in") }

// mirrors: Security/SecBase.h | security/seccopyerrormessagestring(_:_:)
@available(iOS 11.3, macOS 10.3, tvOS 11.3, watchOS 4.3, *)
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    fatalError("stand-in")
}
