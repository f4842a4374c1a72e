/// A strict reader and writer for the few DER structures this module handles (ITU-T X.690 §10).
///
/// Only definite, minimally encoded lengths and single-byte tags are accepted, so one value has
/// exactly one encoding and a parse followed by a re-encode gives back the same bytes. Readers
/// return nil for anything malformed; callers turn that into the right ``CryptoError``. All
/// arithmetic is on lengths capped at four bytes, and every index is checked before use, so
/// hostile input can only make a reader return nil.
package enum DER {
    /// The tags used here (X.690 §8.1.2; context-specific tags from RFC 5915 and RFC 5958).
    enum Tag {
        static let integer: UInt8 = 0x02
        static let bitString: UInt8 = 0x03
        static let octetString: UInt8 = 0x04
        static let null: UInt8 = 0x05
        static let objectIdentifier: UInt8 = 0x06
        static let sequence: UInt8 = 0x30
        /// `[0]` and `[1]`, constructed (EXPLICIT tagging, or IMPLICIT of a constructed type).
        static let context0: UInt8 = 0xA0
        static let context1: UInt8 = 0xA1
        /// `[1]`, primitive: OneAsymmetricKey's IMPLICIT BIT STRING public key (RFC 5958 §2).
        static let contextPrimitive1: UInt8 = 0x81
    }

    /// One tag-length-value element.
    package struct Element {
        package var tag: UInt8
        package var content: ArraySlice<UInt8>
    }

    /// Reads the element at the front of `input` and drops it from `input`.
    ///
    /// - Returns: The element, or nil (leaving `input` unspecified) when it is malformed.
    package static func read(_ input: inout ArraySlice<UInt8>) -> Element? {
        var index = input.startIndex
        guard index < input.endIndex else { return nil }
        let tag = input[index]
        // High tag numbers (low five bits all set) take more bytes; nothing here uses them.
        guard tag & 0x1F != 0x1F else { return nil }
        index += 1
        guard index < input.endIndex else { return nil }
        let first = input[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            // 0x80 is BER's indefinite length; more than four length bytes is never needed here.
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4, input.endIndex - index >= count else { return nil }
            // Minimal: no leading zero byte, and the short form when it fits.
            guard input[index] != 0 else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(input[index])
                index += 1
            }
            guard length >= 0x80 else { return nil }
        }
        guard input.endIndex - index >= length else { return nil }
        let content = input[index..<(index + length)]
        input = input[(index + length)...]
        return Element(tag: tag, content: content)
    }

    /// Parses `bytes` as exactly one element with the given tag and nothing after it.
    ///
    /// - Returns: The element's content, or nil.
    static func single(_ bytes: ArraySlice<UInt8>, tag: UInt8) -> ArraySlice<UInt8>? {
        var rest = bytes
        guard let element = read(&rest), element.tag == tag, rest.isEmpty else { return nil }
        return element.content
    }

    /// Splits the content of a constructed element into its children.
    ///
    /// - Returns: The children in order, or nil if any is malformed.
    static func children(_ content: ArraySlice<UInt8>) -> [Element]? {
        var rest = content
        var result: [Element] = []
        while !rest.isEmpty {
            guard let element = read(&rest) else { return nil }
            result.append(element)
        }
        return result
    }

    /// The magnitude of a non-negative INTEGER, without the sign byte.
    ///
    /// - Returns: The big-endian magnitude (empty for zero), or nil when the element is not an
    ///   INTEGER, is negative, or is not minimally encoded.
    static func unsignedMagnitude(_ element: Element) -> ArraySlice<UInt8>? {
        guard element.tag == Tag.integer, let first = element.content.first else { return nil }
        guard first & 0x80 == 0 else { return nil }
        if element.content.count > 1 {
            let second = element.content[element.content.startIndex + 1]
            // A leading zero is only allowed (and then required) before a byte with the high bit.
            guard first != 0 || second & 0x80 != 0 else { return nil }
        }
        return first == 0 ? element.content.dropFirst() : element.content
    }

    /// The content of a BIT STRING with no unused bits.
    static func bitStringBytes(_ element: Element) -> ArraySlice<UInt8>? {
        guard element.tag == Tag.bitString, element.content.first == 0 else { return nil }
        return element.content.dropFirst()
    }

    // MARK: Writing

    /// One element with the given tag and content.
    package static func encode(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var result: [UInt8] = [tag]
        result.reserveCapacity(content.count + 6)
        let count = content.count
        if count < 0x80 {
            result.append(UInt8(count))
        } else {
            var lengthBytes: [UInt8] = []
            var remaining = count
            while remaining > 0 {
                lengthBytes.insert(UInt8(truncatingIfNeeded: remaining), at: 0)
                remaining >>= 8
            }
            result.append(0x80 | UInt8(lengthBytes.count))
            result += lengthBytes
        }
        result += content
        return result
    }

    /// A SEQUENCE of already encoded elements.
    static func sequence(of elements: [[UInt8]]) -> [UInt8] {
        encode(Tag.sequence, elements.flatMap { $0 })
    }

    /// A non-negative INTEGER from a big-endian magnitude (leading zeros allowed).
    static func unsignedInteger(_ magnitude: some Collection<UInt8>) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.first.map({ $0 & 0x80 != 0 }) ?? true {
            bytes.insert(0, at: 0)
        }
        return encode(Tag.integer, bytes)
    }

    /// A small non-negative INTEGER.
    static func smallInteger(_ value: UInt8) -> [UInt8] {
        unsignedInteger([value])
    }

    /// A BIT STRING with no unused bits.
    static func bitString(wrapping bytes: [UInt8]) -> [UInt8] {
        encode(Tag.bitString, [0] + bytes)
    }
}

/// Object identifiers used by the key formats, as their DER contents.
enum OID {
    /// 1.2.840.10045.2.1 id-ecPublicKey (RFC 5480 §2.1.1).
    static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    /// 1.2.840.10045.3.1.7 secp256r1 / prime256v1 / P-256 (RFC 5480 §2.1.1.1).
    static let secp256r1: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    /// 1.2.840.113549.1.1.1 rsaEncryption (RFC 8017 Appendix C).
    static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]

    static func encoded(_ oid: [UInt8]) -> [UInt8] {
        DER.encode(DER.Tag.objectIdentifier, oid)
    }
}
