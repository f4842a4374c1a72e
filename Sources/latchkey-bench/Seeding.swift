import Foundation
import LatchkeyServer

/// What every seeding command shares: open the configured deployment as the server would, make
/// the rows, close it, and print what the benchmark needs.
enum Seeding {
    /// Runs `seed` on the application of `configurationFile` and prints its text.
    ///
    /// - Returns: The exit status: 0, or 1 after one line on standard error.
    static func run(_ command: String, configurationFile: String, _ seed: (LatchkeyApplication) async throws -> String) async -> Int32 {
        do {
            let configuration = try ConfigurationLoader.load(file: configurationFile)
            let application = try await LatchkeyApplication.open(configuration: configuration, accessLog: false)
            application.adoptPublicURL()
            let text: String
            do {
                text = try await seed(application)
            } catch {
                await application.shutdown()
                throw error
            }
            await application.shutdown()
            FileHandle.standardOutput.write(Data(text.utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("\(command): \(error)\n".utf8))
            return 1
        }
    }
}
