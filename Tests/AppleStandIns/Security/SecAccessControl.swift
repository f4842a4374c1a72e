// Stand-in (Linux only, never shipped): access control objects for keychain items and keys.

public import Foundation

// mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/init(rawvalue:)
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/rawvalue
    public let rawValue: CFOptionFlags
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/userpresence
    public static var userPresence: SecAccessControlCreateFlags { fatalError("stand-in") }
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/biometryany
    @available(iOS 11.3, macOS 10.13.4, watchOS 4.3, tvOS 11.3, *)
    public static var biometryAny: SecAccessControlCreateFlags { fatalError("stand-in") }
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/biometrycurrentset
    @available(iOS 11.3, macOS 10.13.4, watchOS 4.3, tvOS 11.3, *)
    public static var biometryCurrentSet: SecAccessControlCreateFlags { fatalError("stand-in") }
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/devicepasscode
    public static var devicePasscode: SecAccessControlCreateFlags { fatalError("stand-in") }
    // mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreateflags/privatekeyusage
    public static var privateKeyUsage: SecAccessControlCreateFlags { fatalError("stand-in") }
}

// mirrors: Security/SecAccessControl.h | security/secaccesscontrolcreatewithflags(_:_:_:_:)
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    fatalError("stand-in")
}

// mirrors: Security/SecAccessControl.h | security/secaccesscontrolgettypeid()
public func SecAccessControlGetTypeID() -> CFTypeID { fatalError("stand-in") }
