// PLACEHOLDER: the helpers' interfaces, deleted when their branches merge.
package import FoundationEssentials
import LatchkeyStore
import LatchkeyJOSE

package struct OAuthClient: Sendable, Hashable {
    package enum GrantType: String, Sendable, Hashable, CaseIterable {
        case authorizationCode = "authorization_code", refreshToken = "refresh_token", clientCredentials = "client_credentials"
    }
    package var id: String
    package var name: String
    package var isConfidential: Bool
    package var isFirstParty: Bool
    package var redirectURIs: [String]
    package var postLogoutRedirectURIs: [String]
    package var grantTypes: Set<GrantType>
    package var scopes: Set<String>
    package var idTokenAlgorithm: String
    package var createdAt: Date
    package func acceptsRedirectURI(_ uri: String) -> Bool { fatalError() }
    package func acceptsPostLogoutRedirectURI(_ uri: String) -> Bool { fatalError() }
}
struct ClientRepository {
    func find(id: String, on connection: any SQLConnection) throws -> OAuthClient? { fatalError() }
}
package struct ClientService: Sendable {
    package func client(id: String) async throws -> OAuthClient? { fatalError() }
    package func authenticate(id: String, secret: String?) async throws -> OAuthClient { fatalError() }
}
struct ConsentRepository {
    func scopes(userID: String, clientID: String, on connection: any SQLConnection) throws -> Set<String>? { fatalError() }
    func remember(userID: String, clientID: String, scopes: Set<String>, at: Date, on connection: any SQLConnection) throws { fatalError() }
}
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
extension AuditEvent {
    static let consentGranted = AuditEvent(rawValue: "consent.granted")
}
extension AuthError.Code {
    package static let invalidClient = AuthError.Code(rawValue: "invalid_client")
}
package struct BrowserSessionService: Sendable {
    init(database: any SQLDatabase, clock: @escaping @Sendable () -> Date, lifetime: TimeInterval = 86_400) {}
    package func current(token: String) async throws -> BrowserSession? { fatalError() }
    func start(userID: String, amr: [String], context: RequestContext, now: Date, on connection: any SQLConnection) throws -> (BrowserSession, String) { fatalError() }
}
