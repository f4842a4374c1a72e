// Stand-in (Linux only, never shipped): DCAppAttestService, App Attest's keys in the Secure
// Enclave, attested by Apple and used to sign assertions.

public import Foundation

// mirrors: DeviceCheck/DCAppAttestService.h | devicecheck/dcappattestservice | not Sendable, as Apple's
@available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, *)
open class DCAppAttestService: NSObject {
    // mirrors: DeviceCheck/DCAppAttestService.h | devicecheck/dcappattestservice/shared
    open class var shared: DCAppAttestService { fatalError("stand-in") }

    // mirrors: DeviceCheck/DCAppAttestService.h | devicecheck/dcappattestservice/issupported
    open var isSupported: Bool { fatalError("stand-in") }

    // mirrors: DeviceCheck/DCAppAttestService.h | devicecheck/dcappattestservice/generatekey(completionhandler:) | the async form
    open func generateKey() async throws -> String { fatalError("stand-in") }

    // mirrors: DeviceCheck/DCAppAttestService.h | devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:) | the async form
    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { fatalError("stand-in") }

    // mirrors: DeviceCheck/DCAppAttestService.h | devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:) | the async form
    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data { fatalError("stand-in") }
}
