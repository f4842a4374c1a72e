// Stand-in (Linux only, never shipped): rights kept across launches, each with a private key
// that only an authorized right can use.

public import Foundation
public import Security

// mirrors: LocalAuthentication/LARightStore.h | localauthentication/larightstore | not Sendable, as Apple's
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LARightStore: NSObject {
    // mirrors: LocalAuthentication/LARightStore.h | localauthentication/larightstore/shared
    open class var shared: LARightStore { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARightStore.h | localauthentication/larightstore/right(foridentifier:completion:) | the async form
    open func right(forIdentifier identifier: String) async throws -> LAPersistedRight { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARightStore.h | localauthentication/larightstore/saveright(_:identifier:completion:) | the async form
    open func saveRight(_ right: LARight, identifier: String) async throws -> LAPersistedRight { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LARightStore.h | localauthentication/larightstore/removeright(foridentifier:completion:) | the async form
    open func removeRight(forIdentifier identifier: String) async throws { fatalError("stand-in") }
}

// mirrors: LocalAuthentication/LAPersistedRight.h | localauthentication/lapersistedright
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LAPersistedRight: LARight {
    // mirrors: LocalAuthentication/LAPersistedRight.h | localauthentication/lapersistedright/key
    open var key: LAPrivateKey { fatalError("stand-in") }
}

// mirrors: LocalAuthentication/LAPrivateKey.h | localauthentication/laprivatekey
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LAPrivateKey: NSObject {
    // mirrors: LocalAuthentication/LAPrivateKey.h | localauthentication/laprivatekey/publickey
    open var publicKey: LAPublicKey { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAPrivateKey.h | localauthentication/laprivatekey/sign(_:algorithm:completion:) | the async form
    open func sign(_ data: Data, algorithm: SecKeyAlgorithm) async throws -> Data { fatalError("stand-in") }

    // mirrors: LocalAuthentication/LAPrivateKey.h | localauthentication/laprivatekey/cansign(using:)
    open func canSign(using algorithm: SecKeyAlgorithm) -> Bool { fatalError("stand-in") }
}

// mirrors: LocalAuthentication/LAPublicKey.h | localauthentication/lapublickey
@available(iOS 16.0, macOS 13.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class LAPublicKey: NSObject {
    // mirrors: LocalAuthentication/LAPublicKey.h | localauthentication/lapublickey/exportbytes(completion:) | the async form, which Swift names as a property
    open var bytes: Data {
        get async throws { fatalError("stand-in") }
    }
}
