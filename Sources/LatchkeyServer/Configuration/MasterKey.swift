import FoundationEssentials
import Glibc
import LatchkeyBasics
import LatchkeyCrypto

/// The key that seals secrets at rest (signing keys, Apple refresh tokens, TOTP secrets).
///
/// It lives in a file, never in the database (docs/security.md S10). The file holds 32 random bytes,
/// raw or base64 (`openssl rand -base64 32 > master.key`), and must not be readable by other
/// users. Secrets are sealed with AES-256-GCM under a key derived from it with HKDF, and each
/// sealed value is bound to its context (the table and row it belongs to) as associated data,
/// so a sealed value copied into another row does not open.
package struct MasterKey: Sendable {
    private let sealingKey: [UInt8]
    /// The 32 bytes of the file, kept to derive keys for other purposes (``derivedKey(label:)``).
    private let bytes: [UInt8]

    /// Creates a master key from its 32 bytes.
    package init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw CryptoError.invalidParameter("a master key is 32 bytes") }
        self.bytes = bytes
        sealingKey = try HKDF.deriveKey(
            inputKeyMaterial: bytes, salt: [UInt8](), info: Array("latchkey sealing key v1".utf8), outputByteCount: 32)
    }

    /// A 32-byte key for one purpose, derived with HKDF-SHA256 under `label` as its info, so
    /// that keys of different labels are independent of each other and of the sealing key.
    ///
    /// - Parameter label: What the key is for, e.g. `latchkey csrf key v1`; never reused.
    package func derivedKey(label: String) -> [UInt8] {
        do {
            return try HKDF.deriveKey(inputKeyMaterial: bytes, salt: [UInt8](), info: Array(label.utf8), outputByteCount: 32)
        } catch {
            // Only an out-of-range length or a failing allocation inside OpenSSL can stop it.
            fatalError("HKDF of a 32-byte key failed: \(error)")
        }
    }

    /// Reads the key file, or in development mode creates it (mode 0600) when it is missing.
    ///
    /// - Returns: The key and whether the file was created now.
    /// - Throws: ``ConfigurationError`` naming `master_key_file`.
    package static func load(path: String, createIfMissing: Bool) throws(ConfigurationError) -> (key: MasterKey, created: Bool) {
        func problem(_ text: String) -> ConfigurationError { ConfigurationError(problems: ["master_key_file: \(text)"]) }
        let manager = FileManager.default
        var created = false
        if !manager.fileExists(atPath: path) {
            guard createIfMissing else { throw problem("\(path) does not exist; create one with: \(creationCommand(path: path))") }
            do {
                try create(path: path)
                created = true
            } catch {
                throw problem("\(path) cannot be created (\(error))")
            }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw problem("\(path) cannot be read") }
        guard status.st_mode & 0o077 == 0 else { throw problem("\(path) is readable by other users; run chmod 600 \(path)") }
        guard let contents = manager.contents(atPath: path) else { throw problem("\(path) cannot be read") }
        let bytes: [UInt8]
        if contents.count == 32 {
            bytes = Array(contents)
        } else if let decoded = Data(base64Encoded: String(String(decoding: contents, as: UTF8.self).trimmingWhitespace())),
            decoded.count == 32
        {
            bytes = Array(decoded)
        } else {
            throw problem("\(path) must hold 32 random bytes, raw or base64")
        }
        do {
            return (try MasterKey(bytes: bytes), created)
        } catch {
            throw problem("\(path) does not hold a usable key")
        }
    }

    /// A shell command that creates the key file at `path` as the server wants it: 32 random
    /// bytes in base64, mode 0600 from the start (the umask, in a subshell so it does not stay
    /// set), its directory created if missing. It works when pasted into a POSIX shell.
    package static func creationCommand(path: String) -> String {
        // The path as given, relative or not: the command runs where the server does.
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        let makeDirectory = directory.isEmpty || directory == "." ? "" : "mkdir -p \(shellQuoted(directory)) && "
        return "(umask 077 && \(makeDirectory)head -c 32 /dev/urandom | base64 > \(shellQuoted(path)))"
    }

    /// `text` as one shell word: as is when it holds only safe characters, else in single quotes.
    private static func shellQuoted(_ text: String) -> String {
        let safe = text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+:@%,".contains($0)) }
        return safe ? text : "'" + text.replacing("'", with: "'\\''") + "'"
    }

    /// Writes 32 fresh random bytes as base64, creating the file with mode 0600 so that no other
    /// user can read it even for a moment.
    private static func create(path: String) throws {
        let directory = URL(filePath: path).deletingLastPathComponent().path(percentEncoded: false)
        if !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw SystemError() }
        defer { close(descriptor) }
        let text = Array((Data(SecureRandom.bytes(count: 32)).base64EncodedString() + "\n").utf8)
        guard text.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == text.count, fsync(descriptor) == 0 else {
            throw SystemError()
        }
    }

    /// The failed system call's `errno`, as text.
    private struct SystemError: Error, CustomStringConvertible {
        let description = String(cString: strerror(errno))
    }

    /// Seals a secret for storage.
    ///
    /// - Parameters:
    ///   - plaintext: The secret.
    ///   - context: Where it will be stored, e.g. `signing_keys/<kid>`; needed again to open it.
    /// - Returns: nonce ‖ ciphertext ‖ tag.
    package func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8] {
        try AESGCM.seal(plaintext, key: sealingKey, authenticating: Array(context.utf8)).combined
    }

    /// Opens a sealed secret.
    ///
    /// - Throws: ``LatchkeyCrypto/CryptoError`` when the value was not sealed by this key for
    ///   this context.
    package func unseal(_ sealed: [UInt8], context: String) throws -> [UInt8] {
        try AESGCM.open(try AESGCM.SealedBox(combined: sealed), key: sealingKey, authenticating: Array(context.utf8))
    }
}
