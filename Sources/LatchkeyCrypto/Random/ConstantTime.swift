internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// Comparisons whose running time does not depend on where the inputs differ.
package enum ConstantTime {
    /// Compares two byte strings with `CRYPTO_memcmp`.
    ///
    /// Only the contents are protected: strings of different lengths return false at once, so
    /// use this where the length is public (MACs, hashes, tokens of a fixed size).
    ///
    /// - Parameters:
    ///   - a: One byte string.
    ///   - b: The other.
    /// - Returns: Whether they have the same length and the same bytes.
    package static func equals(_ a: some ContiguousBytes, _ b: some ContiguousBytes) -> Bool {
        a.withUnsafeBytes { first in
            b.withUnsafeBytes { second in
                guard first.count == second.count else { return false }
                guard first.count > 0 else { return true }
                return CRYPTO_memcmp(first.baseAddress, second.baseAddress, first.count) == 0
            }
        }
    }
}
