import LatchkeyFuzzChecks

/// libFuzzer's entry point for the cbor target; the check lives in Fuzz/Checks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { FuzzTarget.cbor.fuzz(data, size) }
