import LatchkeyErrors

/// Why bytes are not CBOR that ``CBORDecoder`` accepts.
///
/// The verifier reports every one of these as ``WebAuthnError/Code-swift.struct/malformed``;
/// the codes tell tests and fuzz checks which rule an input broke.
package struct CBORError: CodedError {
    /// The rule an input broke; new codes may be added.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The input ends inside an item, or a length or count exceeds what is left.
        package static let truncated = Code(rawValue: "truncated")
        /// An integer, length or count is not in its shortest form (RFC 8949 §4.2.1).
        package static let nonMinimalEncoding = Code(rawValue: "nonMinimalEncoding")
        /// An indefinite length (additional information 31).
        package static let indefiniteLength = Code(rawValue: "indefiniteLength")
        /// Reserved additional information (28–30), a tag, a float, or a simple value other
        /// than false, true and null.
        package static let unsupportedItem = Code(rawValue: "unsupportedItem")
        /// Arrays and maps nest deeper than ``CBORDecoder/Limits/maximumDepth``.
        package static let tooDeep = Code(rawValue: "tooDeep")
        /// More items than ``CBORDecoder/Limits/maximumItems``.
        package static let tooManyItems = Code(rawValue: "tooManyItems")
        /// A map has the same key twice.
        package static let duplicateKey = Code(rawValue: "duplicateKey")
        /// A map key is neither an integer nor a text string.
        package static let unsupportedKey = Code(rawValue: "unsupportedKey")
        /// A text string is not valid UTF-8.
        package static let invalidUTF8 = Code(rawValue: "invalidUTF8")
        /// Bytes follow the item where the caller asked for exactly one.
        package static let trailingBytes = Code(rawValue: "trailingBytes")
    }

    /// The rule broken.
    package var code: Code
    /// Where, in words; never the input's bytes.
    package var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The rule broken.
    ///   - message: Where, in words.
    package init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }
}
