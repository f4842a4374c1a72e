import Foundation

/// A fresh directory under the system's temporary directory, `latchkey-<label>-<UUID>`, removed by
/// ``remove()``.
public struct TemporaryDirectory: Sendable {
    /// Where it is.
    public let url: URL

    /// Creates the directory.
    ///
    /// - Parameter label: What it is for, in its name, so a leftover one says which test made it.
    public init(_ label: String = "tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Its path.
    public var path: String { url.path }

    /// The path of `name` inside it.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Removes it and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
