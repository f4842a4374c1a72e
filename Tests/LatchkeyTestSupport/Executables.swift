package import Foundation

/// The products SwiftPM built beside the test bundle, for tests that run them as a user would.
package enum Executables {
    /// The `latchkey` executable.
    package static let latchkey: URL = product("latchkey")

    /// A product of this package, found in the build folder that holds the test bundle.
    package static func product(_ name: String) -> URL {
        var directory = Bundle.main.bundleURL
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }
}
