import Foundation
import LatchkeyStore
import Testing

@testable import LatchkeyServer

/// The contract of the Apple domain's repositories (`identities`, `apple_identity_tokens`,
/// `apple_notifications`), run on every engine. Concurrent cases run
/// each contender in its own transaction from one stale read, so they prove the compare-and-set,
/// not a single writer.
@Suite("Repository contract: Apple identities, replay")
struct AppleRepositoryContractTests {
    static let issuer = "https://appleid.apple.com"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A user and an Apple identity of theirs, committed.
    static func identity(on database: any SQLDatabase, subject: String = "001.apple", token: [UInt8]? = nil) async throws -> Identity {
        let users = UserRepository(database: database)
        let identities = IdentityRepository()
        return try await database.write { connection throws in
            let user = try users.create(email: "ada@privaterelay.appleid.com", now: start, on: connection)
            let identity = Identity(
                id: Identifiers.make("idn"), userID: user.id, provider: "apple", issuer: issuer, subject: subject, email: user.email,
                emailVerified: true, isPrivateEmail: true, realUserStatus: 2, createdAt: start)
            #expect(try identities.insert(identity, on: connection))
            if let token {
                #expect(try identities.storeAppleRefreshToken(id: identity.id, sealed: token, clientID: "com.example.app", at: start, on: connection))
            }
            return try #require(try identities.find(id: identity.id, on: connection))
        }
    }

    /// Runs `contenders` transactions at once and counts those whose body returned true.
    static func winners(
        _ contenders: Int, on database: any SQLDatabase, _ body: @escaping @Sendable (Int, any SQLConnection) throws -> Bool
    ) async throws -> Int {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<contenders {
                group.addTask { try await database.write { try body(index, $0) } }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    // MARK: identities

    @Test("identities: create, find by subject and by id, list by user; a second identity with the same subject is not inserted", arguments: ContractEngine.allCases)
    func identityCreateFind(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let identities = IdentityRepository()
            let created = try await Self.identity(on: database)
            #expect(created.subject == "001.apple" && created.realUserStatus == 2 && created.emailVerified && created.revokedAt == nil)
            try await database.write { connection throws in
                #expect(try identities.find(provider: "apple", issuer: Self.issuer, subject: "001.apple", on: connection) == created)
                #expect(try identities.find(provider: "apple", issuer: "https://other.example", subject: "001.apple", on: connection) == nil)
                #expect(try identities.list(userID: created.userID, on: connection) == [created])
                var twin = created
                twin.id = Identifiers.make("idn")
                #expect(try identities.insert(twin, on: connection) == false, "UNIQUE (provider, issuer, subject)")
                #expect(try identities.find(id: twin.id, on: connection) == nil)
            }
        }
    }

    @Test("identities: of N concurrent first sign-ins of one Apple subject exactly one inserts the identity", arguments: ContractEngine.allCases)
    func identityConcurrentInsert(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let users = UserRepository(database: database)
            let identities = IdentityRepository()
            let inserted = try await Self.winners(8, on: database) { _, connection in
                let user = try users.create(email: nil, now: Self.start, on: connection)
                return try identities.insert(
                    Identity(
                        id: Identifiers.make("idn"), userID: user.id, provider: "apple", issuer: Self.issuer, subject: "001.same", email: nil,
                        emailVerified: false, isPrivateEmail: false, realUserStatus: nil, createdAt: Self.start),
                    on: connection)
            }
            #expect(inserted == 1)
        }
    }

    @Test("identities: a transfer id is recorded by subject or user, and of N concurrent take-overs exactly one links it", arguments: ContractEngine.allCases)
    func identityTransferLink(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let identities = IdentityRepository()
            let created = try await Self.identity(on: database)
            try await database.write { connection throws in
                #expect(try identities.recordTransfer("t.1", provider: "apple", issuer: Self.issuer, subject: "001.apple", on: connection) == 1)
                #expect(try identities.recordTransfer("t.2", provider: "apple", issuer: Self.issuer, userID: "usr_nobody", on: connection) == 0)
                #expect(try identities.recordTransfer("t.1", provider: "apple", issuer: Self.issuer, userID: created.userID, on: connection) == 1)
                #expect(try identities.find(provider: "apple", issuer: Self.issuer, transferSubject: "t.1", on: connection)?.id == created.id)
            }
            let linked = try await Self.winners(8, on: database) { index, connection in
                try identities.takeOver(id: created.id, transferSubject: "t.1", newSubject: "002.new.\(index)", on: connection)
            }
            #expect(linked == 1)
            try await database.read { connection throws in
                let after = try #require(try identities.find(id: created.id, on: connection))
                #expect(after.transferSubject == nil && after.subject.hasPrefix("002.new."))
                #expect(try identities.find(provider: "apple", issuer: Self.issuer, transferSubject: "t.1", on: connection) == nil)
            }
        }
    }

    @Test("S9: identities: revoking forgets the Apple token, a new sign-in restores the identity, email forwarding is set and cleared", arguments: ContractEngine.allCases)
    func identityRevoke(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let identities = IdentityRepository()
            let created = try await Self.identity(on: database, token: [1, 2, 3])
            #expect(created.sealedAppleRefreshToken == [1, 2, 3] && created.appleClientID == "com.example.app")
            let later = Self.start.addingTimeInterval(60)
            try await database.write { connection throws in
                #expect(try identities.revoke(id: created.id, at: later, on: connection))
                #expect(try identities.revoke(id: "idn_nobody", at: later, on: connection) == false)
                let revoked = try #require(try identities.find(id: created.id, on: connection))
                #expect(revoked.revokedAt == later && revoked.sealedAppleRefreshToken == nil)
                #expect(try identities.recordSignIn(
                    id: created.id, email: nil, emailVerified: false, isPrivateEmail: true, realUserStatus: nil, on: connection))
                let restored = try #require(try identities.find(id: created.id, on: connection))
                #expect(restored.revokedAt == nil && restored.email == created.email && restored.realUserStatus == 2 && !restored.emailVerified)
                #expect(try identities.setEmailDisabled(id: created.id, at: later, on: connection))
                #expect(try identities.find(id: created.id, on: connection)?.emailDisabledAt == later)
                #expect(try identities.setEmailDisabled(id: created.id, at: nil, email: "new@privaterelay.appleid.com", on: connection))
                let enabled = try #require(try identities.find(id: created.id, on: connection))
                #expect(enabled.emailDisabledAt == nil && enabled.email == "new@privaterelay.appleid.com")
            }
        }
    }

    @Test("S9: daily validation: of N concurrent claims of one due identity exactly one wins, and only its claim may reschedule or revoke", arguments: ContractEngine.allCases)
    func identityValidationClaim(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let identities = IdentityRepository()
            let created = try await Self.identity(on: database, token: [9])
            let now = Self.start.addingTimeInterval(86_400)
            let due = try await database.read { try identities.dueForValidation(provider: "apple", before: Self.start, limit: 10, on: $0) }
            #expect(due.map(\.id) == [created.id])
            let stale = try #require(due.first?.lastValidatedAt)
            let claims = (0..<8).map { now.addingTimeInterval(TimeInterval($0)) }
            let winners = try await Self.winners(claims.count, on: database) { index, connection in
                try identities.claimValidation(id: created.id, read: stale, until: claims[index], on: connection)
            }
            #expect(winners == 1)
            let claim = try #require(try await database.read { try identities.find(id: created.id, on: $0)?.lastValidatedAt })
            #expect(claims.contains(claim))
            try await database.write { connection throws in
                #expect(try identities.dueForValidation(provider: "apple", before: Self.start, limit: 10, on: connection).isEmpty, "claimed")
                #expect(try identities.rescheduleValidation(id: created.id, claimedUntil: claim.addingTimeInterval(100), to: now, on: connection) == false)
                // A sign-in stores a fresh token meanwhile, even in the very second of the claim:
                // the stale check may not revoke it.
                #expect(try identities.storeAppleRefreshToken(id: created.id, sealed: [10], clientID: "com.example.app", at: claim, on: connection))
                #expect(try identities.revoke(id: created.id, claimedUntil: claim, checkedToken: [9], at: now, on: connection) == false)
                #expect(try identities.find(id: created.id, on: connection)?.revokedAt == nil)
            }
            // A claim that holds revokes, once.
            let next = try await database.write { connection throws in
                let read = try #require(try identities.find(id: created.id, on: connection)?.lastValidatedAt)
                let until = now.addingTimeInterval(7200)
                #expect(try identities.claimValidation(id: created.id, read: read, until: until, on: connection))
                #expect(try identities.revoke(id: created.id, claimedUntil: until, checkedToken: [9], at: now, on: connection) == false, "not the stored token")
                #expect(try identities.revoke(id: created.id, claimedUntil: until.addingTimeInterval(1), checkedToken: [10], at: now, on: connection) == false, "not the claim")
                #expect(try identities.revoke(id: created.id, claimedUntil: until, checkedToken: [10], at: now, on: connection))
                #expect(try identities.revoke(id: created.id, claimedUntil: until, checkedToken: [10], at: now, on: connection) == false, "already revoked")
                return try identities.find(id: created.id, on: connection)
            }
            #expect(next?.revokedAt == now && next?.sealedAppleRefreshToken == nil)
        }
    }

    @Test("identities: a never-validated identity is claimed through last_validated_at IS NULL, once", arguments: ContractEngine.allCases)
    func identityClaimNeverValidated(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let identities = IdentityRepository()
            let created = try await Self.identity(on: database)
            try await database.write { connection throws in
                // A token stored without a validation time, as migrated rows may be.
                #expect(try connection.execute(
                    "UPDATE identities SET apple_refresh_token = ?, apple_client_id = 'com.example.app', last_validated_at = NULL WHERE id = ?",
                    [.blob([1]), .text(created.id)]) == 1)
            }
            let winners = try await Self.winners(4, on: database) { index, connection in
                try identities.claimValidation(id: created.id, read: nil, until: Self.start.addingTimeInterval(TimeInterval(index)), on: connection)
            }
            #expect(winners == 1)
        }
    }

    // MARK: apple_identity_tokens, apple_notifications

    @Test("identity tokens are accepted once: of N concurrent first uses of one replay key exactly one is first", arguments: ContractEngine.allCases)
    func identityTokenReplay(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let replays = AppleReplayRepository()
            let key = Array(repeating: UInt8(0xAB), count: 32)
            #expect(try await database.read { try replays.isIdentityTokenRemembered(key: key, on: $0) } == false)
            let firsts = try await Self.winners(8, on: database) { _, connection in
                try replays.rememberIdentityToken(key: key, until: Self.start.addingTimeInterval(600), on: connection)
            }
            #expect(firsts == 1)
            #expect(try await database.read { try replays.isIdentityTokenRemembered(key: key, on: $0) })
            #expect(try await database.write { try replays.rememberIdentityToken(key: [1], until: Self.start, on: $0) }, "another key is its own")
        }
    }

    @Test("S27: notifications are applied once: of N concurrent first deliveries of one jti exactly one is first", arguments: ContractEngine.allCases)
    func notificationReplay(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let replays = AppleReplayRepository()
            let firsts = try await Self.winners(8, on: database) { _, connection in
                try replays.rememberNotification(jti: "jti-1", receivedAt: Self.start, until: Self.start.addingTimeInterval(600), on: connection)
            }
            #expect(firsts == 1)
            #expect(try await database.write {
                try replays.rememberNotification(jti: "jti-2", receivedAt: Self.start, until: Self.start, on: $0)
            })
        }
    }
}
