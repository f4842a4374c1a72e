package import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyJOSE
package import LatchkeyStore
import Synchronization

/// The server's signing keys: ES256 (access tokens, and ID tokens for clients that ask for it)
/// and RS256 (ID tokens by default). Generated here, sealed at rest under the master key,
/// published in the JWKS before first use and until every token they signed has expired
/// (docs/security.md S10). Each algorithm has its own active key and rotates on its own.
///
/// The `signing_keys` table is the truth, so several processes on one database agree: the
/// active key is the one with the latest `activates_at` that has passed. Each process keeps a
/// snapshot and reloads it when the database announces a key change (``followChanges(_:)``:
/// `NOTIFY` on PostgreSQL, `PRAGMA data_version` on SQLite, so within about a second), every
/// ``reloadInterval`` as a safety net, and whenever a key's activation or expiry passes. The
/// active key of an algorithm is the one of that algorithm with the latest `activates_at` that
/// has passed. `latchkey keys rotate` adds a key that activates after a delay longer than the
/// JWKS cache lifetime, so clients see the new key before any token carries it.
package final class SigningKeyRing: Sendable {
    /// One row of `signing_keys`, public part only.
    package struct Key: Sendable, Hashable {
        package var id: String
        package var publicJWK: JWK
        package var createdAt: Date
        package var activatesAt: Date
        /// When it stops signing (a later key activated); `nil` while it is the newest.
        package var retiresAt: Date?
        /// When it leaves the JWKS: its retirement plus the longest life of a token it signed.
        package var expiresAt: Date?

        /// What it signs with: its JWK's `alg` (`ES256` or `RS256`).
        package var algorithm: JWSAlgorithm { publicJWK.algorithm ?? .es256 }

        /// `pending`, `active`, `retired` (still published) or `expired`, at `now`.
        package func state(at now: Date) -> String {
            if now < activatesAt { return "pending" }
            if let expiresAt, now >= expiresAt { return "expired" }
            if let retiresAt, now >= retiresAt { return "retired" }
            return "active"
        }
    }

    /// The algorithms the ring keeps an active key of.
    package static let algorithms: [JWSAlgorithm] = [.es256, .rs256]

    /// Where new RS256 keys come from.
    package typealias RSAKeys = @Sendable () throws -> RSA.Signing.PrivateKey

    /// A fresh RSA 2048 key each time: what the server uses. Generating one takes a few hundred
    /// milliseconds of CPU, so tests that start hundreds of servers hand out keys made once.
    package static let generatedRSAKeys: RSAKeys = { try RSA.Signing.PrivateKey(keySize: 2048) }

    struct Snapshot: Sendable {
        var keys: [Key]
        /// The private keys of the pending and active keys, by id.
        var privateKeys: [String: JWSSigner]
        /// The active key of each algorithm that has one, at ``loadedAt``.
        var signers: [JWSAlgorithm: JWSSigner]
        /// The published public keys, as `GET /.well-known/jwks.json` shows them.
        var jwks: JWKSet
        /// Changes exactly when ``jwks`` does, so the route layer rebuilds its answer once per
        /// key-set change rather than per request.
        var revision: Int
        var verificationKeys: JWSKeySet
        /// The access tokens ``verificationKeys`` already verified; replaced with them when the
        /// published keys change.
        var verifiedAccessTokens = VerifiedJWTCache()
        var loadedAt: Date
        var nextTransition: Date?
        /// Which reload read it: a reload that started earlier but ends later must not replace it.
        var generation = 0

        /// The ES256 signer of access tokens.
        var signer: JWSSigner? { signers[.es256] }

        /// The key of `algorithm` that signs at `date`, from the keys this snapshot holds (the
        /// latest activation, then the greatest id), without reloading.
        func signer(_ algorithm: JWSAlgorithm, at date: Date) -> JWSSigner? {
            keys.last { $0.algorithm == algorithm && $0.state(at: date) == "active" }.flatMap { privateKeys[$0.id] }
        }
    }

    /// How long caches may keep the JWKS (`Cache-Control: max-age`).
    package static let jwksMaxAge = 300
    /// How often a process re-reads the key table even when it heard of no change: the safety
    /// net under ``followChanges(_:)``.
    static let reloadInterval: TimeInterval = 30

    private let database: any SQLDatabase
    private let repository = SigningKeyRepository()
    private let masterKey: MasterKey
    private let rsaKeys: RSAKeys
    /// How long after retirement a key stays published: the access-token lifetime plus leeway.
    private let tokenLifetime: TimeInterval
    private let snapshot: Mutex<Snapshot>
    /// The snapshot's ``Snapshot/revision``, readable without the lock by the JWKS route.
    private let revision = Atomic<Int>(0)
    /// Reloads started, for ``Snapshot/generation``.
    private let reloads = Atomic<Int>(0)

    private init(database: any SQLDatabase, masterKey: MasterKey, rsaKeys: @escaping RSAKeys, tokenLifetime: TimeInterval, snapshot: Snapshot) {
        self.database = database
        self.masterKey = masterKey
        self.rsaKeys = rsaKeys
        self.tokenLifetime = tokenLifetime
        self.snapshot = Mutex(snapshot)
    }

    /// Loads the keys, first creating, for each of ``algorithms``, one that is active at once when
    /// none of that algorithm is.
    ///
    /// Two processes starting at once on an empty table may each create one; that is harmless:
    /// both are published, every process picks the same signer (the latest activation, then the
    /// greatest id) and the next rotation of that algorithm retires both.
    ///
    /// - Parameter rsaKeys: Makes the RS256 keys; ``generatedRSAKeys`` but in tests.
    package static func open(
        database: any SQLDatabase, masterKey: MasterKey, accessTokenTTL: Int, now: Date, rsaKeys: @escaping RSAKeys = generatedRSAKeys
    ) async throws -> SigningKeyRing {
        let lifetime = TimeInterval(accessTokenTTL) + 60
        let repository = SigningKeyRepository()
        try await database.write { connection in
            for algorithm in Self.algorithms where try !repository.hasActiveKey(algorithm, at: now, on: connection) {
                _ = try Self.insertKey(algorithm, activatesAt: now, now: now, masterKey: masterKey, rsaKeys: rsaKeys, on: connection)
            }
        }
        let snapshot = try await load(database: database, masterKey: masterKey, now: now, known: [:])
        return SigningKeyRing(database: database, masterKey: masterKey, rsaKeys: rsaKeys, tokenLifetime: lifetime, snapshot: snapshot)
    }

    /// Adds a key of `algorithm` that starts signing at `now + activationDelay`; the current
    /// newest key of that algorithm retires then and stays published for one token lifetime more.
    /// Keys of the other algorithm are untouched.
    ///
    /// Audited `key.rotated` (`kid`, `algorithm`) in the same transaction.
    ///
    /// - Parameter context: Who asked: the CLI, or an admin of the admin API (`actor`).
    /// - Throws: ``AuthError/Code/conflict`` when a concurrent rotation retired the newest key
    ///   first; nothing is written and the caller may rotate again.
    @discardableResult
    package func rotate(
        _ algorithm: JWSAlgorithm = .es256, activationDelay: TimeInterval, now: Date, context: RequestContext = RequestContext()
    ) async throws -> Key {
        precondition(Self.algorithms.contains(algorithm), "SigningKeyRing: no \(algorithm) keys")
        let lifetime = tokenLifetime
        let masterKey = masterKey
        let rsaKeys = rsaKeys
        let repository = repository
        let audit = AuditLog(database: database)
        let id = try await database.write { connection in
            let activatesAt = now.addingTimeInterval(activationDelay)
            guard try repository.retireUnretired(algorithm, at: activatesAt, expiresAt: activatesAt.addingTimeInterval(lifetime), on: connection) > 0 else {
                throw AuthError.conflict("another key rotation retired the newest key at the same time; rotate again if a new key is still wanted")
            }
            let id = try Self.insertKey(algorithm, activatesAt: activatesAt, now: now, masterKey: masterKey, rsaKeys: rsaKeys, on: connection)
            try audit.record(
                context.entry(.keyRotated, .success, userID: nil, now: now, details: ["kid": id, "algorithm": algorithm.rawValue]), on: connection)
            return id
        }
        try await reload(now: now)
        return cached.keys.first { $0.id == id }!
    }

    /// Makes a key (P-256 for ES256, RSA 2048 for RS256), seals its private part under the master
    /// key and stores it.
    ///
    /// - Returns: Its id (`kid`).
    private static func insertKey(
        _ algorithm: JWSAlgorithm, activatesAt: Date, now: Date, masterKey: MasterKey, rsaKeys: RSAKeys, on connection: any SQLConnection
    ) throws -> String {
        let id = Base64URL.encode(SecureRandom.bytes(count: 12))
        let publicJWK: JWK
        let privateKey: [UInt8]
        if algorithm == .rs256 {
            let key = try rsaKeys()
            publicJWK = JWK(key.publicKey, algorithm: .rs256, keyID: id)
            privateKey = Array(key.pemRepresentation.utf8)
        } else {
            let key = P256.Signing.PrivateKey()
            publicJWK = JWK(key.publicKey, keyID: id)
            privateKey = key.rawRepresentation
        }
        let stored = Key(id: id, publicJWK: publicJWK, createdAt: now, activatesAt: activatesAt)
        try SigningKeyRepository().insert(
            stored, sealedPrivateKey: try masterKey.seal(privateKey, context: "signing_keys/\(id)"), on: connection)
        return id
    }

    /// Opens the sealed private key of a row: the raw P-256 scalar for ES256, PEM for RS256.
    private static func signer(_ row: SigningKeyRepository.StoredKey, masterKey: MasterKey) throws -> JWSSigner {
        let id = row.key.id
        let raw = try masterKey.unseal(row.sealedPrivateKey, context: "signing_keys/\(id)")
        switch row.algorithm {
        case .rs256: return .rs256(try RSA.Signing.PrivateKey(pemRepresentation: String(decoding: raw, as: UTF8.self)), keyID: id)
        case .es256: return .es256(try P256.Signing.PrivateKey(rawRepresentation: raw), keyID: id)
        default: throw UnknownSigningKeyAlgorithm(algorithm: row.algorithm.rawValue)
        }
    }

    /// Reads the key table; `known` holds signers already opened, by key id, so a reload does not
    /// unseal and check an RSA key again.
    private static func load(database: any SQLDatabase, masterKey: MasterKey, now: Date, known: [String: JWSSigner]) async throws -> Snapshot {
        let rows = try await database.read { connection in
            try SigningKeyRepository().all(on: connection)
        }
        var keys = [Key]()
        var privateKeys = [String: JWSSigner]()
        var signers = [JWSAlgorithm: JWSSigner]()
        var transitions = [Date]()
        for row in rows {
            let key = row.key
            let id = key.id
            transitions += [key.activatesAt, key.retiresAt, key.expiresAt].compactMap { $0 }.filter { $0 > now }
            let state = key.state(at: now)
            if state == "expired" { continue }
            keys.append(key)
            // Rows come oldest activation first, so the last active one of an algorithm wins.
            if state == "active" || state == "pending" {
                let signer = try known[id] ?? signer(row, masterKey: masterKey)
                privateKeys[id] = signer
                if state == "active" { signers[row.algorithm] = signer }
            }
        }
        let published = JWKSet(keys: keys.map(\.publicJWK))
        return Snapshot(
            keys: keys, privateKeys: privateKeys, signers: signers, jwks: published, revision: 0,
            verificationKeys: try JWSKeySet(jwks: published), loadedAt: now, nextTransition: transitions.min())
    }

    /// The published key set and its ``Snapshot/revision``.
    var publishedKeySet: (revision: Int, keys: JWKSet) { snapshot.withLock { ($0.revision, $0.jwks) } }

    /// The revision of the published key set, read without taking the snapshot's lock: every
    /// JWKS request asks, and the answer changes only when the published keys do.
    var publishedRevision: Int { revision.load(ordering: .acquiring) }

    /// The published key set when its revision is no longer `revision`; `nil` (and no copy) when
    /// it still is, which is every request between key changes.
    func publishedKeySet(ifChangedSince revision: Int) -> (revision: Int, keys: JWKSet)? {
        snapshot.withLock { $0.revision == revision ? nil : ($0.revision, $0.jwks) }
    }

    /// Re-reads the key table; the revision moves on only when the published keys changed.
    /// Reloads that overlap (a change announced while a periodic one runs) keep what the one
    /// that started last read.
    package func reload(now: Date) async throws {
        let generation = reloads.add(1, ordering: .relaxed).newValue
        var fresh = try await Self.load(database: database, masterKey: masterKey, now: now, known: cached.privateKeys)
        fresh.generation = generation
        snapshot.withLock { current in
            guard generation > current.generation else { return }
            if fresh.jwks == current.jwks {
                fresh.revision = current.revision
                fresh.verificationKeys = current.verificationKeys
                fresh.verifiedAccessTokens = current.verifiedAccessTokens
            } else {
                fresh.revision = current.revision + 1
            }
            current = fresh
            revision.store(fresh.revision, ordering: .releasing)
        }
    }

    /// Calls `reload` whenever another process (or this one) may have changed the key table,
    /// until the subscription is cancelled; the caller reloads (``reload(now:)``) and logs a
    /// failure.
    ///
    /// - Parameter reload: Runs off the caller's thread, once per announced batch of changes.
    /// - Returns: The subscription.
    package func followChanges(_ reload: @escaping @Sendable () -> Void) -> SQLChangeSubscription {
        database.subscribe(to: SigningKeyRepository.changeChannel, reload)
    }

    /// The snapshot, reloading it first when it is stale.
    func current(now: Date) async throws -> Snapshot {
        let (stale, value) = snapshot.withLock { snapshot in
            let due = now.timeIntervalSince(snapshot.loadedAt) >= Self.reloadInterval || (snapshot.nextTransition.map { now >= $0 } ?? false)
            return (due, snapshot)
        }
        guard stale else { return value }
        try await reload(now: now)
        return snapshot.withLock { $0 }
    }

    /// The snapshot as it is, without reloading: for synchronous readers and for a caller that
    /// has just reloaded.
    var cached: Snapshot { snapshot.withLock { $0 } }

    /// The longest a token signed by a key may live and still verify until it expires: a
    /// retired key stays published that long (the access-token lifetime).
    package var longestTokenLifetime: TimeInterval { tokenLifetime - 60 }

    /// The published keys (pending, active, retired), oldest first.
    package var publishedKeys: [Key] { cached.keys }

    /// Every key ever made, for `latchkey keys list`.
    package func allKeys() async throws -> [Key] {
        let repository = repository
        return try await database.read { connection in
            try repository.all(on: connection).map(\.key)
        }
    }
}

/// A `signing_keys` row names an algorithm this server does not sign with.
struct UnknownSigningKeyAlgorithm: Error, CustomStringConvertible {
    var algorithm: String
    var description: String { "signing_keys holds a key for \(algorithm), which this server does not sign with" }
}
