public import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A store in one file, readable and writable by its owner only (mode 0600), replaced atomically
/// (a temporary file in the same folder, `fsync`, `rename`), so a reader in another process sees
/// the old session or the new one, never half of one. For Linux, tools and tests; on Apple
/// platforms prefer the Keychain store.
public struct FileCredentialStore: CredentialStore {
    /// The file.
    public let url: URL

    /// A store in the file at `url`; its folder must exist.
    public init(url: URL) {
        self.url = url
    }

    /// Reads the file; `nil` when it does not exist.
    ///
    /// - Throws: ``LatchkeyError/Code/storage`` when it cannot be read or is not a stored session.
    public func load() throws -> StoredSession? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw LatchkeyError(.storage, "the session file cannot be read")
        }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            throw LatchkeyError(.storage, "the session file is not a stored session")
        }
    }

    /// Writes `session` to a temporary file (0600) beside the file, syncs it, and renames it over the file.
    ///
    /// - Throws: ``LatchkeyError/Code/storage`` when any step fails; the old file is then intact.
    public func save(_ session: StoredSession) throws {
        let data: Data
        do {
            data = try JSONEncoder().encode(session)
        } catch {
            throw LatchkeyError(.storage, "the session cannot be encoded")
        }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw LatchkeyError(.storage, "the session file cannot be created (errno \(errno))") }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written, synced, rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw LatchkeyError(.storage, "the session file cannot be written")
        }
    }

    /// Removes the file; a missing file is not an error.
    ///
    /// - Throws: ``LatchkeyError/Code/storage`` when it cannot be removed.
    public func delete() throws {
        if unlink(url.path) != 0 && errno != ENOENT {
            throw LatchkeyError(.storage, "the session file cannot be removed (errno \(errno))")
        }
    }
}
