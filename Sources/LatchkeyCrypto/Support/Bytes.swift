internal import FoundationEssentials

extension ContiguousBytes {
    /// Calls `body` with the bytes, never with a nil base address.
    ///
    /// Several OpenSSL calls read a NULL pointer as "absent" even with a zero length (an
    /// `OSSL_PARAM` octet string, an HMAC key), while an empty Swift array has no storage.
    func withNonNullBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes { buffer in
            if buffer.baseAddress != nil { return try body(buffer) }
            var placeholder: UInt8 = 0
            return try Swift.withUnsafeBytes(of: &placeholder) { one in
                try body(UnsafeRawBufferPointer(start: one.baseAddress, count: 0))
            }
        }
    }

    /// The bytes as an array.
    var byteArray: [UInt8] {
        if let array = self as? [UInt8] { return array }
        return withUnsafeBytes { Array($0) }
    }
}

extension UnsafeRawBufferPointer {
    /// The start address typed as bytes; only call on buffers from `withNonNullBytes`.
    var bytePointer: UnsafePointer<UInt8> {
        baseAddress!.assumingMemoryBound(to: UInt8.self)
    }

    /// The start address typed as bytes, nil for an empty buffer.
    var bytePointerOrNil: UnsafePointer<UInt8>? {
        baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
