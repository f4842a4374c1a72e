package import Foundation

/// A fresh directory under the system's temporary directory, `latchkey-<label>-<UUID>`, removed by
/// ``remove()``.
package struct TemporaryDirectory: Sendable {
    /// Where it is.
    package let url: URL

    /// Creates the directory.
    ///
    /// - Parameter label: What it is for, in its name, so a leftover one says which test made it.
    package init(_ label: String = "tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Its path.
    package var path: String { url.path }

    /// The path of `name` inside it.
    package func file(_ name: String) -> String { path + "/" + name }

    /// Removes it and everything in it.
    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
