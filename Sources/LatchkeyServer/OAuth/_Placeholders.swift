// PLACEHOLDER: the helpers' interfaces, deleted when their branches merge.
package import FoundationEssentials
import LatchkeyStore
import LatchkeyJOSE

package struct BrowserSession: Sendable, Hashable {
    package var id: String
    package var userID: String
    package var amr: [String]
    package var authTime: Date
    package var createdAt: Date
    package var expiresAt: Date
}
package enum IDTokenAlgorithm: String, Sendable { case rs256 = "RS256", es256 = "ES256" }
package struct IDTokenClaims: Sendable, Hashable {
    package var issuer: String, subject: String, audience: String, authorizedParty: String
    package var issuedAt: Date, expiresAt: Date, authTime: Date
    package var nonce: String?, amr: [String], sessionID: String?
    package var accessToken: String?
}
extension SigningKeyRing {
    package func signIDToken(_ claims: IDTokenClaims, algorithm: IDTokenAlgorithm) async throws -> String { fatalError() }
}
package struct BrowserSessionService: Sendable {
    init(database: any SQLDatabase, clock: @escaping @Sendable () -> Date, lifetime: TimeInterval = 86_400) {}
    package func current(token: String) async throws -> BrowserSession? { fatalError() }
    func start(userID: String, amr: [String], context: RequestContext, now: Date, on connection: any SQLConnection) throws -> (BrowserSession, String) { fatalError() }
}
