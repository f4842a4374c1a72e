// Stand-in (Linux only, never shipped): the keychain item API and its attribute keys. Apple
// imports each `extern const CFStringRef` as a `let` of type CFString; a read-only global stands in.

public import Foundation

// mirrors: Security/SecItem.h | security/secitemadd(_:_:)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("stand-in")
}

// mirrors: Security/SecItem.h | security/secitemcopymatching(_:_:)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("stand-in")
}

// mirrors: Security/SecItem.h | security/secitemupdate(_:_:)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    fatalError("stand-in")
}

// mirrors: Security/SecItem.h | security/secitemdelete(_:)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    fatalError("stand-in")
}

// mirrors: Security/SecItem.h | security/ksecclass
public var kSecClass: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecclassgenericpassword
public var kSecClassGenericPassword: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecclasskey
public var kSecClassKey: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrservice
public var kSecAttrService: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccount
public var kSecAttrAccount: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessgroup
public var kSecAttrAccessGroup: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessible
public var kSecAttrAccessible: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessiblewhenunlocked
public var kSecAttrAccessibleWhenUnlocked: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessibleafterfirstunlock
public var kSecAttrAccessibleAfterFirstUnlock: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessiblewhenunlockedthisdeviceonly
public var kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessibleafterfirstunlockthisdeviceonly
public var kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccessiblewhenpasscodesetthisdeviceonly
public var kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattraccesscontrol
public var kSecAttrAccessControl: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrkeytype
public var kSecAttrKeyType: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrkeytypeecsecprimerandom
public var kSecAttrKeyTypeECSECPrimeRandom: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrkeysizeinbits
public var kSecAttrKeySizeInBits: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrtokenid
public var kSecAttrTokenID: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrtokenidsecureenclave
public var kSecAttrTokenIDSecureEnclave: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrapplicationtag
public var kSecAttrApplicationTag: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecattrispermanent
public var kSecAttrIsPermanent: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecprivatekeyattrs
public var kSecPrivateKeyAttrs: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecvaluedata
public var kSecValueData: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecreturndata
public var kSecReturnData: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecreturnref
public var kSecReturnRef: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecreturnattributes
public var kSecReturnAttributes: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecmatchlimit
public var kSecMatchLimit: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecmatchlimitone
public var kSecMatchLimitOne: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecuseauthenticationcontext
@available(iOS 9.0, macOS 10.11, watchOS 2.0, tvOS 9.0, *)
public var kSecUseAuthenticationContext: CFString { fatalError("stand-in") }

// mirrors: Security/SecItem.h | security/ksecusedataprotectionkeychain
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
public var kSecUseDataProtectionKeychain: CFString { fatalError("stand-in") }
