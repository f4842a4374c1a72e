// swift-tools-version:6.1
import PackageDescription

/// The settings every Swift target shares (the products use exactly these; every other target adds
/// `swiftSettingsInPackage`'s release flag): Swift 6 mode, strict concurrency, warnings are errors
/// in CI through `make build` (`-warnings-as-errors` is passed there, not here, so that editing
/// stays pleasant).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // An import is internal unless it says otherwise, so a module's interface shows which
    // modules it exposes; and a member is visible only where its module is imported.
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The settings of every target but the three products: in release builds the optimizer may also
/// inline and specialize `package` declarations across our modules (package CMO; by default it
/// does so only for `public` ones). Without it the move from `public` to `package` cost the
/// HTTP floor 16%. Unsafe flags would stop an app from depending on the package, so the products
/// that apps link (`LatchkeyJSON`, `LatchkeyWire`, `LatchkeyClient`) keep `swiftSettings`.
let swiftSettingsInPackage: [SwiftSetting] = swiftSettings + [
    .unsafeFlags(["-package-cmo", "-allow-non-resilient-access"], .when(configuration: .release)),
]

let package = Package(
    name: "Latchkey",
    // The client SDK's floor; the server targets only ever build on Linux.
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .executable(name: "latchkey", targets: ["latchkey"]),
        // What apps may depend on: the JSON value and the wire models the server speaks (and the
        // client SDK that builds on them). Every other module is ours alone and uses `package`
        // access across modules, so nothing outside can come to depend on it.
        .library(name: "LatchkeyJSON", targets: ["LatchkeyJSON"]),
        .library(name: "LatchkeyWire", targets: ["LatchkeyWire"]),
        .library(name: "LatchkeyClient", targets: ["LatchkeyClient"]),
    ],
    targets: [
        // C libraries from Debian, bridged as system modules.
        .systemLibrary(
            name: "CLatchkeyOpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CLatchkeySQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CLatchkeyEvent", pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]),
        .systemLibrary(
            name: "CLatchkeyArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "CLatchkeyUnistring", providers: [.apt(["libunistring-dev"])]),
        .systemLibrary(name: "CLatchkeyPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // glibc's <malloc.h>: part of libc, nothing to link.
        .systemLibrary(name: "CLatchkeyMalloc"),

        // Swift modules; dependencies point one way: C → Crypto → JOSE → … → executable.
        // JSON sits at the bottom with no dependency, so the wire models and a client SDK can
        // share it without linking any C library.
        .target(name: "LatchkeyJSON", swiftSettings: swiftSettings),
        // The one shape of the package's error structs (`CodedError`): code, message, equality
        // by code. Ours alone; the public JSON and wire modules keep the shape without it.
        .target(name: "LatchkeyErrors", swiftSettings: swiftSettingsInPackage),
        // Small things every layer uses and none owns: trimming white space, starting a detached
        // thread. Here so that the domain does not import HTTP to get them.
        .target(name: "LatchkeyBasics", swiftSettings: swiftSettingsInPackage),
        // Mail: RFC 5322 messages and the SMTP client on libevent and OpenSSL; no HTTP, no storage.
        .target(
            name: "LatchkeyMail",
            dependencies: ["CLatchkeyEvent", "CLatchkeyShims", "LatchkeyLibevent", "LatchkeyBasics", "LatchkeyCrypto"],
            swiftSettings: swiftSettingsInPackage),
        // The /v1 request and response bodies, shared by the server's routes, its tests and the
        // client SDK; JSON only, so they cannot drift apart.
        .target(name: "LatchkeyWire", dependencies: ["LatchkeyJSON"], swiftSettings: swiftSettings),
        .target(
            name: "LatchkeyCrypto",
            dependencies: ["CLatchkeyOpenSSL", "CLatchkeyArgon2", "CLatchkeyUnistring", "LatchkeyErrors"],
            swiftSettings: swiftSettingsInPackage),
        .target(
            name: "LatchkeyJOSE",
            dependencies: ["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyErrors"],
            swiftSettings: swiftSettingsInPackage),
        // The WebAuthn Level 3 verifier: CBOR, COSE keys, authenticator and client data, the
        // registration and authentication checks, attestation statements. No HTTP, no storage:
        // pure functions the server's passkey service calls.
        .target(
            name: "LatchkeyWebAuthn",
            dependencies: ["LatchkeyCrypto", "LatchkeyJSON", "LatchkeyErrors"],
            swiftSettings: swiftSettingsInPackage),
        // What only C can express of OpenSSL (macros over SSL_ctrl): one-line forwards.
        .target(name: "CLatchkeyShims", dependencies: ["CLatchkeyOpenSSL"]),
        // HTTP messages, errors, the router with its groups and middleware: no C library, so
        // routes and their tests compile without libevent or OpenSSL.
        .target(
            name: "LatchkeyHTTP",
            dependencies: ["LatchkeyJSON", "LatchkeyErrors", "LatchkeyBasics"],
            swiftSettings: swiftSettingsInPackage),
        // What the server's and the clients' libevent loops share: the mailbox into a loop,
        // libevent's thread setup, the monotonic clock, and the outbound TLS settings.
        .target(
            name: "LatchkeyLibevent",
            dependencies: ["CLatchkeyEvent", "CLatchkeyShims"],
            swiftSettings: swiftSettingsInPackage),
        // The HTTP/1.1 server on libevent: loops, connections, the parser, the access log.
        .target(
            name: "LatchkeyHTTPServer",
            dependencies: ["CLatchkeyEvent", "LatchkeyLibevent", "LatchkeyHTTP", "LatchkeyJSON", "LatchkeyErrors", "LatchkeyBasics"],
            swiftSettings: swiftSettingsInPackage),
        // The outbound HTTP client on libevent and OpenSSL (Apple's endpoints).
        .target(
            name: "LatchkeyHTTPClient",
            dependencies: ["CLatchkeyEvent", "CLatchkeyShims", "LatchkeyLibevent", "LatchkeyHTTP", "LatchkeyErrors", "LatchkeyBasics"],
            swiftSettings: swiftSettingsInPackage),
        .target(
            name: "LatchkeyStore",
            dependencies: ["CLatchkeySQLite", "CLatchkeyPQ", "LatchkeyJSON", "LatchkeyErrors"],
            swiftSettings: swiftSettingsInPackage),
        // A local stand-in for Apple's Sign in with Apple servers: development mode and tests.
        .target(
            name: "LatchkeySandbox",
            dependencies: ["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP", "LatchkeyHTTPClient"],
            swiftSettings: swiftSettingsInPackage),
        // The common-password list (docs/security.md S12) as one string literal, generated by
        // scripts/generate-common-passwords from Vendor/common-passwords/. A module of its own so
        // that the 19,640-line literal compiles once, not with every change to the server.
        .target(name: "LatchkeyCommonPasswords", swiftSettings: swiftSettingsInPackage),
        .target(
            name: "LatchkeyServer",
            dependencies: [
                "LatchkeyErrors", "LatchkeyBasics", "LatchkeyJSON", "LatchkeyWire", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP",
                "LatchkeyHTTPServer", "LatchkeyHTTPClient", "LatchkeyStore", "LatchkeyCommonPasswords", "LatchkeyMail", "LatchkeyWebAuthn",
            ],
            swiftSettings: swiftSettingsInPackage),
        .executableTarget(
            name: "latchkey",
            dependencies: [
                "LatchkeyJSON", "LatchkeyBasics", "CLatchkeyMalloc", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP", "LatchkeyHTTPClient",
                "LatchkeyStore", "LatchkeyServer", "LatchkeySandbox",
            ],
            swiftSettings: swiftSettingsInPackage),
        // `make bench`: operations per second of the crypto hot paths, read by scripts/bench.
        .executableTarget(
            name: "latchkey-bench",
            dependencies: ["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP", "LatchkeyHTTPClient", "LatchkeyServer", "LatchkeyStore", "LatchkeyWebAuthn"],
            swiftSettings: swiftSettingsInPackage),

        // The client SDK that apps embed: Foundation and the wire models only, no C library.
        .target(
            name: "LatchkeyClient",
            dependencies: ["LatchkeyWire", "LatchkeyJSON"],
            swiftSettings: swiftSettings),
        // A small SDK client the SDK tests launch as separate processes (the cross-process refresh)
        // and the bench script calls for the SDK's per-request cost; not shipped in a product.
        .executableTarget(
            name: "latchkey-sdk-probe",
            dependencies: ["LatchkeyClient"],
            swiftSettings: swiftSettingsInPackage),
        // The SDK's Linux doubles of what Apple's hardware does: a software passkey manager and a
        // software device key, on LatchkeyCrypto (and the WebAuthn module's CBOR encoder). For the
        // SDK's tests and the demo; not shipped in a product, so an app never links them.
        .target(
            name: "LatchkeyClientDoubles",
            dependencies: ["LatchkeyClient", "LatchkeyJSON", "LatchkeyCrypto", "LatchkeyWebAuthn"],
            swiftSettings: swiftSettingsInPackage),
        // `latchkey demo` execs this sibling binary: the demo is an SDK client (Foundation), the
        // server binary stays FoundationEssentials-only. The doubles play the device key and the
        // passkey manager.
        .executableTarget(
            name: "latchkey-demo",
            dependencies: ["LatchkeyClient", "LatchkeyClientDoubles", "LatchkeyJSON"],
            swiftSettings: swiftSettingsInPackage),

        // `make fuzz`: the property each fuzz target checks, one function per target. The libFuzzer
        // entry points in Fuzz/Targets call these; FuzzCorpusTests replays the checked-in corpus
        // and regressions through the same functions, so `make test` guards them without libFuzzer.
        .target(
            name: "LatchkeyFuzzChecks",
            dependencies: ["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP", "LatchkeyHTTPServer", "LatchkeyMail", "LatchkeyWebAuthn"],
            path: "Fuzz/Checks",
            swiftSettings: swiftSettingsInPackage),

        // Shared by the test targets: fixtures, the test vectors (Wycheproof, in Vectors/, stored
        // once), the Wycheproof runner, the input mutator.
        .target(
            name: "LatchkeyTestSupport",
            dependencies: ["LatchkeyCrypto", "LatchkeyWebAuthn"],
            path: "Tests/LatchkeyTestSupport",
            resources: [.copy("Vectors")],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyCommonPasswordsTests",
            dependencies: ["LatchkeyCommonPasswords", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyCryptoTests",
            dependencies: ["LatchkeyCrypto", "LatchkeyErrors", "LatchkeyTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyCLITests",
            dependencies: ["LatchkeyJSON", "latchkey", "LatchkeyJOSE", "LatchkeyCrypto", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyHTTPTests",
            dependencies: ["LatchkeyErrors", "LatchkeyJSON", "LatchkeyHTTP", "LatchkeyHTTPServer", "LatchkeyHTTPClient", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyStoreTests",
            dependencies: ["LatchkeyErrors", "LatchkeyStore", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyServerTests",
            dependencies: [
                "LatchkeyJSON", "LatchkeyWire", "LatchkeyServer", "LatchkeySandbox", "LatchkeyHTTP", "LatchkeyHTTPServer", "LatchkeyHTTPClient", "LatchkeyStore", "LatchkeyJOSE", "LatchkeyCrypto",
                "LatchkeyTestSupport", "latchkey", "latchkey-demo",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyMailTests",
            dependencies: ["LatchkeyMail", "LatchkeyJSON", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyClientTests",
            dependencies: [
                "LatchkeyClient", "LatchkeyClientDoubles", "LatchkeyWire", "LatchkeyJSON", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyTestSupport",
                "latchkey", "latchkey-sdk-probe", "latchkey-demo",
            ],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyWireTests",
            dependencies: ["LatchkeyWire", "LatchkeyJSON"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyJSONTests",
            dependencies: ["LatchkeyJSON", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyJOSETests",
            dependencies: ["LatchkeyJSON", "LatchkeyJOSE", "LatchkeyCrypto", "LatchkeyTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyWebAuthnTests",
            dependencies: ["LatchkeyWebAuthn", "LatchkeyCrypto", "LatchkeyJSON", "LatchkeyTestSupport"],
            swiftSettings: swiftSettingsInPackage),
        .testTarget(
            name: "LatchkeyFuzzTests",
            dependencies: ["LatchkeyFuzzChecks"],
            swiftSettings: swiftSettingsInPackage),
    ]
)
