private import CLatchkeyUnistring
import Glibc

extension String {
    /// The text in Unicode Normalization Form KC (compatibility decomposition, then canonical
    /// composition), by GNU libunistring: how passwords and usernames are compared (docs/security.md
    /// S12), so that "é" typed as one character or as "e" plus an accent, and full-width
    /// letters, are the same text.
    package var nfkc: String {
        var text = self
        return text.withUTF8 { bytes in
            guard !bytes.isEmpty else { return "" }
            var length = 0
            // With no result buffer the function allocates one; only a failed allocation
            // returns nil, as a Swift string is always valid UTF-8.
            guard let normalized = u8_normalize(latchkey_uninorm_nfkc(), bytes.baseAddress, bytes.count, nil, &length) else {
                fatalError("NFKC normalisation: out of memory")
            }
            defer { free(normalized) }
            return String(decoding: UnsafeBufferPointer(start: normalized, count: length), as: UTF8.self)
        }
    }
}
