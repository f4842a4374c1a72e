package import Foundation
import Testing

/// Files under a test target's `Fixtures/`, copied into its bundle as a resource folder.
///
/// Each test target declares `let fixtures = Fixtures(bundle: .module)` once. Test vectors
/// (Wycheproof) are not fixtures of one target: they are stored once, in ``Vectors``.
package struct Fixtures: Sendable {
    let bundle: Bundle
    let folder: String

    /// The files of `folder`, a resource folder of `bundle`.
    package init(bundle: Bundle, folder: String = "Fixtures") {
        self.bundle = bundle
        self.folder = folder
    }

    /// The URL of fixture `name`.
    package func url(_ name: String) throws -> URL {
        try #require(
            bundle.url(forResource: name, withExtension: nil, subdirectory: folder), "missing fixture \(folder)/\(name)")
    }

    /// The bytes of fixture `name`.
    package func data(_ name: String) throws -> Data {
        try Data(contentsOf: url(name))
    }

    /// The text of fixture `name`.
    package func text(_ name: String) throws -> String {
        String(decoding: try data(name), as: UTF8.self)
    }
}

/// The published test vectors every test target shares, stored once in
/// `Tests/LatchkeyTestSupport/Vectors/` (its `SOURCE.md` names each file's upstream and commit).
package enum Vectors {
    private static let files = Fixtures(bundle: .module, folder: "Vectors")

    /// The URL of vector file `name`, for example `ecdsa_secp256r1_sha256_test.json`.
    package static func url(named name: String) throws -> URL {
        try files.url(name)
    }

    /// The bytes of vector file `name`.
    package static func data(named name: String) throws -> Data {
        try files.data(name)
    }
}

extension Array where Element == UInt8 {
    /// Bytes from hexadecimal text; traps on bad input, which only ever comes from test sources.
    package init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd-length hex")
        self = stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16)!
        }
    }

    /// Lower-case hexadecimal text.
    package var hex: String {
        map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
