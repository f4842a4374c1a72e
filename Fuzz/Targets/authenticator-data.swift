import LatchkeyFuzzChecks

/// libFuzzer's entry point for the authenticator-data target; the check lives in Fuzz/Checks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { FuzzTarget.authenticatorData.fuzz(data, size) }
