// Stand-in (Linux only, never shipped): asymmetric keys (the Secure Enclave device key).

public import Foundation

// mirrors: Security/SecKey.h | security/seckeyalgorithm | not Sendable here (its raw value is a CF string; the stricter reading)
public struct SecKeyAlgorithm: RawRepresentable, Hashable {
    // mirrors: Security/SecKey.h | security/seckeyalgorithm/init(rawvalue:)
    public init(rawValue: CFString) { self.rawValue = rawValue }
    // mirrors: Security/SecKey.h | security/seckeyalgorithm/rawvalue
    public let rawValue: CFString
    // mirrors: Security/SecKey.h | security/seckeyalgorithm/ecdsasignaturemessagex962sha256
    @available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, *)
    public static var ecdsaSignatureMessageX962SHA256: SecKeyAlgorithm { fatalError("stand-in") }
}

// mirrors: Security/SecKey.h | security/seckeycreaterandomkey(_:_:)
@available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, *)
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    fatalError("stand-in")
}

// mirrors: Security/SecKey.h | security/seckeycopypublickey(_:)
@available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, *)
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? { fatalError("stand-in") }

// mirrors: Security/SecKey.h | security/seckeycopyexternalrepresentation(_:_:)
@available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, *)
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    fatalError("stand-in")
}

// mirrors: Security/SecKey.h | security/seckeycreatesignature(_:_:_:_:)
@available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, *)
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    fatalError("stand-in")
}

// mirrors: Security/SecKey.h | security/seckeygettypeid()
public func SecKeyGetTypeID() -> CFTypeID { fatalError("stand-in") }
