import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey demo` against a development server with passkeys on: after the seeds' stories, the
/// passkey chapter registers a passkey with the software passkey manager, signs out and signs in
/// with it. (AppleCLITests runs the demo against the default development server, which has no RP
/// ID, and checks that the chapter stays out of the numbered steps there.)
@Suite("latchkey demo: the passkey chapter")
struct PasskeyDemoTests {
    @Test("latchkey demo on a server with an RP ID registers a passkey, signs out and signs in with it, no username typed (steps 19 to 21)")
    func passkeyChapter() async throws {
        try await PasskeyFlowTests.with { server in
            let result = try await Subprocess.runDetached(
                Executables.latchkey, ["demo", "--url", server.baseURL.absoluteString], directory: server.directory.url)
            #expect(result.status == 0, "\(result.output)\(result.error)")
            for step in 19...21 { #expect(result.output.contains("\n\(step). "), "step \(step)") }
            #expect(!result.output.contains("\n22. "))
            #expect(result.output.contains("\"Grace's iPhone\": ES256, none attestation, user verified, synced"), "\(result.output)")
            #expect(result.output.contains("with amr swk, user, mfa: the passkey is both factors"), "\(result.output)")
            #expect(result.output.contains("1 passkey, last used just now"), "\(result.output)")
            #expect(!result.output.contains("no RP ID"))
            #expect(!result.output.contains("✗"))
        }
    }
}
