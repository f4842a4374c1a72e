import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// The contract of the five second-factor repositories, on every engine: what each stores and
/// reads back, and that every compare-and-set lets exactly one of several concurrent
/// transactions win, without relying on a single writer.
@Suite("Factor repositories: the contract every engine keeps")
struct FactorRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// How many transactions race for one compare-and-set.
    static let racers = 8

    static func user(_ database: any SQLDatabase, _ email: String = "ada@example.com") async throws -> String {
        try await database.write { try UserRepository(database: database).create(email: email, now: now, on: $0).id }
    }

    /// Runs `attempt` `count` times at once, each in its own write transaction.
    ///
    /// - Returns: How many attempts returned true.
    static func race(_ count: Int = racers, on database: any SQLDatabase, _ attempt: @escaping @Sendable (any SQLConnection) throws -> Bool) async throws -> Int {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<count { group.addTask { try await database.write(attempt) } }
            var wins = 0
            for try await won in group where won { wins += 1 }
            return wins
        }
    }

    static func challenge(userID: String, expiresAt: Date = now.addingTimeInterval(120)) -> Challenge {
        Challenge(
            id: Identifiers.make("chl"), userID: userID, deviceKeyID: nil, purpose: .register, sessionID: nil, mfaTokenHash: nil,
            digest: Array(repeating: 7, count: 32), createdAt: now, expiresAt: expiresAt, usedAt: nil)
    }

    static func totpFactor(userID: String) -> TOTPFactor {
        TOTPFactor(
            id: Identifiers.make("otp"), userID: userID, sealedSecret: [1, 2, 3], confirmedAt: nil, lastUsedStep: nil, createdAt: now)
    }

    static func mfaToken(userID: String, expiresAt: Date = now.addingTimeInterval(MFAToken.lifetime)) -> MFAToken {
        MFAToken(hash: Identifiers.secret().sha256, userID: userID, firstFactor: "pwd", createdAt: now, expiresAt: expiresAt)
    }

    // MARK: Challenges

    @Test("S16: a challenge reads back as stored and is spent once, never after it expired", arguments: ContractEngine.allCases)
    func s16ChallengeBasics(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            let live = Self.challenge(userID: userID)
            let old = Self.challenge(userID: userID, expiresAt: Self.now)
            let repository = ChallengeRepository()
            let (found, first, second, expired, unknown) = try await database.write { connection throws in
                try repository.insert(live, on: connection)
                try repository.insert(old, on: connection)
                return (
                    try repository.find(id: live.id, on: connection), try repository.spend(id: live.id, at: Self.now, on: connection),
                    try repository.spend(id: live.id, at: Self.now, on: connection), try repository.spend(id: old.id, at: Self.now, on: connection),
                    try repository.spend(id: "chl_nope", at: Self.now, on: connection))
            }
            #expect(found?.userID == userID && found?.purpose == .register && found?.digest == live.digest)
            #expect(found?.expiresAt == live.expiresAt && found?.usedAt == nil && found?.sessionID == nil)
            #expect(first && !second, "a challenge is spent once")
            #expect(!expired, "an expired challenge cannot be spent")
            #expect(!unknown)
            let used = try await database.read { try repository.find(id: live.id, on: $0) }
            #expect(used?.usedAt == Self.now)
            #expect(try await database.read { try repository.find(id: "chl_nope", on: $0) } == nil)
        }
    }

    @Test("S16: of concurrent spends of one challenge exactly one wins", arguments: ContractEngine.allCases)
    func s16ConcurrentChallengeSpends(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let challenge = Self.challenge(userID: try await Self.user(database))
            try await database.write { try ChallengeRepository().insert(challenge, on: $0) }
            let wins = try await Self.race(on: database) { try ChallengeRepository().spend(id: challenge.id, at: Self.now, on: $0) }
            #expect(wins == 1)
        }
    }

    // MARK: Device keys

    @Test("S18: device keys are listed oldest first, found only for their user, touched, and deleted once", arguments: ContractEngine.allCases)
    func s18DeviceKeys(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            let otherID = try await Self.user(database, "b@example.com")
            let first = DeviceKey(id: "dev_1", userID: userID, label: "Ada's iPhone", createdAt: Self.now, lastUsedAt: nil)
            let second = DeviceKey(id: "dev_2", userID: userID, label: "Ada's iPad", createdAt: Self.now.addingTimeInterval(1), lastUsedAt: nil)
            let repository = DeviceKeyRepository()
            try await database.write { connection throws in
                try repository.insert(second, publicKey: [2], on: connection)
                try repository.insert(first, publicKey: [1], on: connection)
            }
            await #expect(throws: StoreError.self, "the same key twice for a user") {
                try await database.write { try repository.insert(DeviceKey(id: "dev_3", userID: userID, label: "again", createdAt: Self.now), publicKey: [1], on: $0) }
            }
            try await database.read { connection throws in
                #expect(try repository.list(userID: userID, on: connection) == [first, second])
                #expect(try repository.list(userID: otherID, on: connection).isEmpty)
                #expect(try repository.find(id: "dev_1", userID: userID, on: connection) == first)
                #expect(try repository.find(id: "dev_1", userID: otherID, on: connection) == nil)
                #expect(try repository.publicKey(id: "dev_2", on: connection) == [2])
                #expect(try repository.exists(userID: userID, on: connection) && !(try repository.exists(userID: otherID, on: connection)))
            }
            let later = Self.now.addingTimeInterval(60)
            let (touched, deletedByOther, deleted, deletedAgain, touchedGone) = try await database.write { connection throws in
                (
                    try repository.touch(id: "dev_1", at: later, on: connection), try repository.delete(id: "dev_2", userID: otherID, on: connection),
                    try repository.delete(id: "dev_2", userID: userID, on: connection), try repository.delete(id: "dev_2", userID: userID, on: connection),
                    try repository.touch(id: "dev_2", at: later, on: connection)
                )
            }
            #expect(touched && !touchedGone)
            #expect(!deletedByOther && deleted && !deletedAgain)
            #expect(try await database.read { try repository.list(userID: userID, on: $0) }.map(\.lastUsedAt) == [later])
        }
    }

    @Test("S18: of concurrent deletions of one device key exactly one wins", arguments: ContractEngine.allCases)
    func s18ConcurrentDeviceKeyDeletions(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            try await database.write {
                try DeviceKeyRepository().insert(DeviceKey(id: "dev_1", userID: userID, label: "phone", createdAt: Self.now), publicKey: [1], on: $0)
            }
            let wins = try await Self.race(on: database) { try DeviceKeyRepository().delete(id: "dev_1", userID: userID, on: $0) }
            #expect(wins == 1)
        }
    }

    // MARK: TOTP

    @Test("S19: a TOTP factor is confirmed once, and its last used step only moves forward", arguments: ContractEngine.allCases)
    func s19TOTPBasics(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            let factor = Self.totpFactor(userID: userID)
            let repository = TOTPRepository()
            try await database.write { connection throws in
                try repository.insert(factor, on: connection)
                #expect(try repository.find(userID: userID, on: connection) == factor)
                #expect(!(try repository.isConfirmed(userID: userID, on: connection)))
                #expect(!(try repository.advanceStep(id: factor.id, to: 10, on: connection)), "an unconfirmed factor takes no code")
                #expect(try repository.confirm(id: factor.id, step: 5, at: Self.now, on: connection))
                #expect(!(try repository.confirm(id: factor.id, step: 6, at: Self.now, on: connection)), "confirmed once")
                #expect(try repository.isConfirmed(userID: userID, on: connection))
                #expect(!(try repository.advanceStep(id: factor.id, to: 5, on: connection)), "the confirming step again")
                #expect(!(try repository.advanceStep(id: factor.id, to: 4, on: connection)), "an older step")
                #expect(try repository.advanceStep(id: factor.id, to: 6, on: connection))
                #expect(try repository.find(userID: userID, on: connection)?.lastUsedStep == 6)
                #expect(try repository.find(userID: userID, on: connection)?.confirmedAt == Self.now)
            }
            await #expect(throws: StoreError.self, "one factor per user") {
                try await database.write { try repository.insert(Self.totpFactor(userID: userID), on: $0) }
            }
            try await database.write { connection throws in
                try repository.deleteUnconfirmed(userID: userID, on: connection)
                #expect(try repository.find(userID: userID, on: connection) != nil, "a confirmed factor stays")
                #expect(try repository.delete(userID: userID, on: connection))
                #expect(!(try repository.delete(userID: userID, on: connection)))
                let pending = Self.totpFactor(userID: userID)
                try repository.insert(pending, on: connection)
                try repository.deleteUnconfirmed(userID: userID, on: connection)
                #expect(try repository.find(userID: userID, on: connection) == nil)
            }
        }
    }

    @Test("S19: of concurrent uses of one TOTP step exactly one wins", arguments: ContractEngine.allCases)
    func s19ConcurrentTOTPStep(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let factor = Self.totpFactor(userID: try await Self.user(database))
            try await database.write { connection throws in
                try TOTPRepository().insert(factor, on: connection)
                _ = try TOTPRepository().confirm(id: factor.id, step: 1, at: Self.now, on: connection)
            }
            let wins = try await Self.race(on: database) { try TOTPRepository().advanceStep(id: factor.id, to: 2, on: $0) }
            #expect(wins == 1)
        }
    }

    @Test("S19: of concurrent confirmations of one TOTP set-up exactly one wins", arguments: ContractEngine.allCases)
    func s19ConcurrentTOTPConfirmations(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let factor = Self.totpFactor(userID: try await Self.user(database))
            try await database.write { try TOTPRepository().insert(factor, on: $0) }
            let wins = try await Self.race(on: database) { try TOTPRepository().confirm(id: factor.id, step: 1, at: Self.now, on: $0) }
            #expect(wins == 1)
        }
    }

    // MARK: Recovery codes

    @Test("S7: recovery codes are kept as hashes, each spent once and only by its user", arguments: ContractEngine.allCases)
    func s7RecoveryCodes(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            let otherID = try await Self.user(database, "b@example.com")
            let repository = RecoveryCodeRepository()
            let hashes = ["aaaa", "bbbb", "cccc"].map(RecoveryCodes.hash)
            try await database.write { connection throws in
                for hash in hashes { try repository.insert(codeHash: hash, userID: userID, at: Self.now, on: connection) }
                #expect(try repository.unusedCount(userID: userID, on: connection) == 3)
                #expect(!(try repository.spend(codeHash: hashes[0], userID: otherID, at: Self.now, on: connection)), "another user's code")
                #expect(try repository.spend(codeHash: hashes[0], userID: userID, at: Self.now, on: connection))
                #expect(!(try repository.spend(codeHash: hashes[0], userID: userID, at: Self.now, on: connection)), "spent once")
                #expect(!(try repository.spend(codeHash: RecoveryCodes.hash("dddd"), userID: userID, at: Self.now, on: connection)))
                #expect(try repository.unusedCount(userID: userID, on: connection) == 2)
                try repository.deleteAll(userID: userID, on: connection)
                #expect(try repository.unusedCount(userID: userID, on: connection) == 0)
                #expect(!(try repository.spend(codeHash: hashes[1], userID: userID, at: Self.now, on: connection)))
            }
        }
    }

    @Test("S7: of concurrent spends of one recovery code exactly one wins", arguments: ContractEngine.allCases)
    func s7ConcurrentRecoveryCodeSpends(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            let hash = RecoveryCodes.hash("abcd-efgh")
            try await database.write { try RecoveryCodeRepository().insert(codeHash: hash, userID: userID, at: Self.now, on: $0) }
            let wins = try await Self.race(on: database) { try RecoveryCodeRepository().spend(codeHash: hash, userID: userID, at: Self.now, on: $0) }
            #expect(wins == 1)
        }
    }

    // MARK: MFA tokens

    @Test("S7: an mfa_token reads back, completes once, never after it expired or ended, and its fifth failure ends it", arguments: ContractEngine.allCases)
    func s7MFATokenBasics(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let userID = try await Self.user(database)
            let token = Self.mfaToken(userID: userID)
            let old = Self.mfaToken(userID: userID, expiresAt: Self.now)
            let failing = Self.mfaToken(userID: userID)
            let repository = MFATokenRepository()
            try await database.write { connection throws in
                for mfa in [token, old, failing] { try repository.insert(mfa, on: connection) }
                #expect(try repository.find(hash: token.hash, on: connection) == token)
                #expect(try repository.complete(hash: token.hash, at: Self.now, on: connection))
                #expect(!(try repository.complete(hash: token.hash, at: Self.now, on: connection)), "completed once")
                #expect(try repository.find(hash: token.hash, on: connection)?.ended == .completed)
                #expect(!(try repository.complete(hash: old.hash, at: Self.now, on: connection)), "expired")
                #expect(try repository.recordFailure(hash: token.hash, maximum: 5, at: Self.now, on: connection) == nil, "an ended token counts nothing")

                var outcomes: [MFATokenRepository.Failure?] = []
                for _ in 1...6 { outcomes.append(try repository.recordFailure(hash: failing.hash, maximum: 5, at: Self.now, on: connection)) }
                typealias Failure = MFATokenRepository.Failure
                #expect(outcomes.prefix(4).map { $0?.failures } == [1, 2, 3, 4] && outcomes.prefix(4).allSatisfy { $0?.ended == false })
                #expect(outcomes[4] == Failure(failures: 5, ended: true))
                #expect(outcomes[5] == nil)
                #expect(try repository.find(hash: failing.hash, on: connection)?.ended == .tooManyFailures)
                #expect(!(try repository.complete(hash: failing.hash, at: Self.now, on: connection)), "ended by failures")
            }
        }
    }

    @Test("S7: of concurrent completions of one mfa_token exactly one wins", arguments: ContractEngine.allCases)
    func s7ConcurrentMFATokenCompletions(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let token = Self.mfaToken(userID: try await Self.user(database))
            try await database.write { try MFATokenRepository().insert(token, on: $0) }
            let wins = try await Self.race(on: database) { try MFATokenRepository().complete(hash: token.hash, at: Self.now, on: $0) }
            #expect(wins == 1)
        }
    }

    @Test("S7: concurrent wrong proofs on one mfa_token each count, and exactly one ends it at the limit", arguments: ContractEngine.allCases)
    func s7ConcurrentMFAFailures(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let token = Self.mfaToken(userID: try await Self.user(database))
            try await database.write { try MFATokenRepository().insert(token, on: $0) }
            let outcomes = try await withThrowingTaskGroup(of: MFATokenRepository.Failure?.self) { group in
                for _ in 0..<(MFAToken.maximumFailures + 3) {
                    group.addTask {
                        try await database.write { try MFATokenRepository().recordFailure(hash: token.hash, maximum: MFAToken.maximumFailures, at: Self.now, on: $0) }
                    }
                }
                var outcomes: [MFATokenRepository.Failure?] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            let counted = outcomes.compactMap { $0 }
            #expect(counted.map(\.failures).sorted() == Array(1...MFAToken.maximumFailures), "no failure is lost")
            #expect(counted.filter(\.ended).count == 1)
            #expect(outcomes.count(where: { $0 == nil }) == 3, "after the end nothing counts")
            let stored = try await database.read { try MFATokenRepository().find(hash: token.hash, on: $0) }
            #expect(stored?.failures == MFAToken.maximumFailures && stored?.ended == .tooManyFailures)
        }
    }
}
