import Foundation
@testable import LatchkeyClient
import Testing

/// The app lock's decisions (the Apple glue's `AppLock` only adapts `LARight` to them), with the
/// clock readings passed in. Each step returns whether the lock changed, which `AppLock` turns
/// into a `.locked` or `.unlocked` event.
@Suite("App lock policies")
struct AppLockGateTests {
    let start = ContinuousClock.now

    @Test("Every policy starts locked; unlocking reports one change, locking back one more")
    func launch() {
        for policy in [AppLockPolicy.everyTime, .oncePerLaunch, .afterInactivity(.seconds(300))] {
            var gate = AppLockGate(policy: policy)
            #expect(gate.isLocked)
            let opened = gate.unlocked()
            let openedAgain = gate.unlocked()
            #expect(opened && !openedAgain, "unlocking an open gate is no change")
            #expect(!gate.isLocked)
            let closed = gate.locked()
            let closedAgain = gate.locked()
            #expect(closed && !closedAgain, "locking a closed gate is no change")
            #expect(gate.isLocked)
        }
    }

    @Test("Every time: going to the background locks at once, so the snapshot shows the lock screen")
    func everyTime() {
        var gate = AppLockGate(policy: .everyTime)
        _ = gate.unlocked()
        let lockedAway = gate.enteredBackground(at: start)
        #expect(lockedAway && gate.isLocked)
        let lockedBack = gate.enteredForeground(at: start + .seconds(1))
        #expect(!lockedBack, "already locked: no second change")
        #expect(gate.isLocked)
    }

    @Test("Once per launch: background and foreground, however long, keep it open; sign-out closes it")
    func oncePerLaunch() {
        var gate = AppLockGate(policy: .oncePerLaunch)
        _ = gate.unlocked()
        let lockedAway = gate.enteredBackground(at: start)
        let lockedBack = gate.enteredForeground(at: start + .seconds(86_400))
        #expect(!lockedAway && !lockedBack && !gate.isLocked)
        let signedOut = gate.locked()
        #expect(signedOut && gate.isLocked)
    }

    @Test("After N minutes: away shorter stays open, away as long or longer locks on return")
    func afterInactivity() {
        var gate = AppLockGate(policy: .afterInactivity(.seconds(300)))
        _ = gate.unlocked()
        let lockedAway = gate.enteredBackground(at: start)
        #expect(!lockedAway && gate.backgroundedAt == start)
        let lockedSoon = gate.enteredForeground(at: start + .seconds(299))
        #expect(!lockedSoon && !gate.isLocked && gate.backgroundedAt == nil)

        let later = start + .seconds(1_000)
        _ = gate.enteredBackground(at: later)
        let lockedLate = gate.enteredForeground(at: later + .seconds(300))
        #expect(lockedLate && gate.isLocked)

        // Coming to the foreground without having gone to the background (a launch) changes nothing.
        _ = gate.unlocked()
        let lockedWithoutBackground = gate.enteredForeground(at: later + .seconds(10_000))
        #expect(!lockedWithoutBackground && !gate.isLocked)
    }

    @Test("A lock while in the background forgets the background time")
    func lockWhileAway() {
        var gate = AppLockGate(policy: .afterInactivity(.seconds(60)))
        _ = gate.unlocked()
        _ = gate.enteredBackground(at: start)
        let locked = gate.locked()
        #expect(locked && gate.backgroundedAt == nil)
        _ = gate.unlocked()
        let lockedBack = gate.enteredForeground(at: start + .seconds(120))
        #expect(!lockedBack, "the earlier background period no longer counts")
    }
}

/// What the Sign in with Apple glue sends the server, from the fields it copies out of
/// `ASAuthorizationAppleIDCredential` (Apple hands the token and code over as UTF-8 `Data`, and
/// the name and email only on the first authorization).
@Suite("Apple ID credential to AppleCredential")
struct AppleIDCredentialFieldsTests {
    static let token = "eyJraWQiOiJzYW5kYm94In0.eyJzdWIiOiIwMDEyMzQifQ.c2lnbmF0dXJl"

    @Test("The first authorization: token, code, raw nonce, name and email all go to the server")
    func firstAuthorization() throws {
        var name = PersonNameComponents()
        name.givenName = "Ada"
        name.familyName = "Lovelace"
        let fields = AppleIDCredentialFields(
            user: "001234.abcdef", identityToken: Data(Self.token.utf8), authorizationCode: Data("c0de.1".utf8),
            fullName: name, email: "ada@privaterelay.appleid.com")
        let credential = try AppleCredential(fields, rawNonce: "raw-nonce-1")
        #expect(credential.user == "001234.abcdef")
        #expect(credential.identityToken == Self.token)
        #expect(credential.authorizationCode == "c0de.1")
        #expect(credential.rawNonce == "raw-nonce-1")
        #expect(credential.name == PersonName(givenName: "Ada", familyName: "Lovelace"))
        #expect(credential.email == "ada@privaterelay.appleid.com")
    }

    @Test("Later authorizations: no name, no email, no code; an all-empty name is no name")
    func laterAuthorization() throws {
        let bare = AppleIDCredentialFields(user: "001234.abcdef", identityToken: Data(Self.token.utf8))
        let credential = try AppleCredential(bare, rawNonce: "n")
        #expect(credential.name == nil && credential.email == nil && credential.authorizationCode == nil)

        var empty = PersonNameComponents()
        empty.givenName = ""
        let blank = AppleIDCredentialFields(
            user: "001234.abcdef", identityToken: Data(Self.token.utf8), fullName: empty, email: "")
        let blankCredential = try AppleCredential(blank, rawNonce: "n")
        #expect(blankCredential.name == nil && blankCredential.email == nil)

        var familyOnly = PersonNameComponents()
        familyOnly.familyName = "Lovelace"
        let family = AppleIDCredentialFields(user: "u", identityToken: Data(Self.token.utf8), fullName: familyOnly)
        #expect(try AppleCredential(family, rawNonce: "n").name == PersonName(familyName: "Lovelace"))
    }

    @Test("No identity token, an empty one, or one that is not UTF-8 is an invalid response, never a sign-in")
    func missingToken() {
        for token in [nil, Data(), Data([0xFF, 0xFE, 0x00])] {
            let fields = AppleIDCredentialFields(user: "u", identityToken: token)
            #expect(throws: LatchkeyError(.invalidResponse, "")) { try AppleCredential(fields, rawNonce: "n") }
        }
    }
}
