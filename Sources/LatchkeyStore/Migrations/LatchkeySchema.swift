/// Latchkey's schema, as the sequence of migrations that builds it.
///
/// Conventions (portable across SQLite and PostgreSQL): timestamps are integer unix seconds
/// (UTC) in ``SQLDialect/bigIntegerType`` columns named `…_at`; ids are `TEXT`; secrets and
/// hashes are ``SQLDialect/blobType``; booleans are `INTEGER` 0 or 1, checked; JSON is `TEXT`.
/// Every foreign key says what happens on delete, and every foreign-key column is the first
/// column of some index, so a cascading delete never scans a table.
package enum LatchkeySchema {
    /// Every migration, in order. Append new ones; never edit one that has shipped.
    package static let migrations: [Migration] = [
        Migration(version: 1, name: "initial schema", statements: initialSchema),
        Migration(version: 2, name: "sign in with apple", statements: signInWithApple),
        Migration(version: 3, name: "second factors", statements: secondFactors),
        Migration(version: 4, name: "refresh reuse grace", statements: refreshReuseGrace),
        Migration(version: 5, name: "oauth provider", statements: oauthProvider),
        Migration(version: 6, name: "email flows and the outbox", statements: email),
        Migration(version: 7, name: "passkeys", statements: passkeys),
        Migration(version: 8, name: "upstream providers", statements: upstreamProviders),
        Migration(version: 9, name: "dpop", statements: dpop),
        Migration(version: 10, name: "device authorization grant", statements: deviceAuthorizations),
        Migration(version: 11, name: "app attest", statements: appAttest),
        Migration(version: 12, name: "disabled accounts", statements: disabledAccounts),
        Migration(version: 13, name: "admin roles", statements: adminRoles),
        Migration(version: 14, name: "console sessions", statements: consoleSessions),
    ]

    /// Migration 12: disabled accounts. `users.disabled_at` is set when an operator or an admin
    /// disables the account and cleared when they enable it again; each change is a
    /// compare-and-set on it (`WHERE disabled_at IS NULL` / `IS NOT NULL`). A disabled account
    /// cannot sign in by any method.
    @Sendable
    static func disabledAccounts(_ dialect: SQLDialect) -> [String] {
        ["ALTER TABLE users ADD COLUMN disabled_at \(dialect.bigIntegerType)"]
    }

    /// Migration 14: the admin console's sign-ins (`/admin`). The cookie holds a random token,
    /// the row only its SHA-256 hash; `session_id` is the API session the console's code
    /// exchange made, which must stay live; `amr` and `auth_time` are the sign-in's, for the
    /// console's second-factor and fresh-sign-in rules. A row lasts 12 hours at most.
    @Sendable
    static func consoleSessions(_ dialect: SQLDialect) -> [String] {
        let time = dialect.bigIntegerType
        return [
            """
            CREATE TABLE console_sessions (
                id TEXT PRIMARY KEY NOT NULL,
                token_hash \(dialect.blobType) NOT NULL UNIQUE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                session_id TEXT NOT NULL,
                amr TEXT NOT NULL DEFAULT '[]',
                auth_time \(time) NOT NULL,
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                ended_at \(time)
            )
            """,
            "CREATE INDEX console_sessions_user_id ON console_sessions (user_id)",
            "CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at)",
        ]
    }

    /// Migration 13: the roles of the admin API and what its searches need. A role is granted
    /// only from the CLI; it goes with the account. The user search is a prefix search,
    /// case-insensitive, over email, username and names: each is a range over an index of the
    /// lowercased value, compared bytewise (``SQLDialect/bytewise``) whatever the database's
    /// collation, and the listing walks `(created_at, id)` by keyset, as the audit log walks
    /// `(time, id)`.
    @Sendable
    static func adminRoles(_ dialect: SQLDialect) -> [String] {
        let time = dialect.bigIntegerType
        let bytewise = " " + dialect.bytewiseCollation
        return [
            """
            CREATE TABLE admin_roles (
                user_id TEXT PRIMARY KEY NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                role TEXT NOT NULL CHECK (role IN ('admin', 'support')),
                granted_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX users_created_at_id ON users (created_at, id)",
            "CREATE INDEX users_email_search ON users ((lower(email))\(bytewise))",
            "CREATE INDEX users_given_name_search ON users ((lower(given_name))\(bytewise))",
            "CREATE INDEX users_family_name_search ON users ((lower(family_name))\(bytewise))",
            "CREATE INDEX password_credentials_username_search ON password_credentials (username\(bytewise))",
            "CREATE INDEX audit_log_time_id ON audit_log (time, id)",
        ]
    }

    /// Migration 11: App Attest. A challenge is stored as its SHA-256 (which is also the
    /// `clientDataHash` the app signs) and deleted when spent; a key is what its attestation
    /// proved, with the last assertion counter accepted (advanced by compare-and-set).
    @Sendable
    static func appAttest(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            """
            CREATE TABLE app_attest_challenges (
                challenge_hash \(blob) PRIMARY KEY NOT NULL,
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX app_attest_challenges_expires_at ON app_attest_challenges (expires_at)",
            // key_id is SHA-256 of public_key, an uncompressed P-256 point; receipt is Apple's.
            """
            CREATE TABLE app_attest_keys (
                key_id \(blob) PRIMARY KEY NOT NULL,
                app_id TEXT NOT NULL,
                environment TEXT NOT NULL CHECK (environment IN ('production', 'development')),
                public_key \(blob) NOT NULL,
                receipt \(blob) NOT NULL,
                counter \(time) NOT NULL DEFAULT 0,
                created_at \(time) NOT NULL,
                last_asserted_at \(time)
            )
            """,
        ]
    }

    /// Migration 10: device authorizations (RFC 8628), one row per `device_code`, from issue to
    /// redemption. The device code and the user code are stored only as SHA-256; `id` is the
    /// random reference the hosted pages carry between the code page, the sign-in and the
    /// consent page. Every change of `status` (`pending` → `approved` or `denied`, `approved` →
    /// `redeemed`) is a compare-and-set on it.
    @Sendable
    static func deviceAuthorizations(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            """
            CREATE TABLE device_authorizations (
                id TEXT PRIMARY KEY NOT NULL,
                device_code_hash \(blob) NOT NULL UNIQUE,
                user_code_hash \(blob) NOT NULL UNIQUE,
                client_id TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
                user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
                browser_session_id TEXT REFERENCES browser_sessions (id) ON DELETE SET NULL,
                auth_time \(time),
                amr TEXT NOT NULL DEFAULT '[]',
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                decided_at \(time),
                redeemed_at \(time),
                session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL
            )
            """,
            "CREATE INDEX device_authorizations_client_id ON device_authorizations (client_id)",
            "CREATE INDEX device_authorizations_user_id ON device_authorizations (user_id)",
            "CREATE INDEX device_authorizations_browser_session_id ON device_authorizations (browser_session_id)",
            "CREATE INDEX device_authorizations_session_id ON device_authorizations (session_id)",
            "CREATE INDEX device_authorizations_expires_at ON device_authorizations (expires_at)",
        ]
    }

    /// Migration 9: DPoP (RFC 9449). The key thumbprint a session's refresh-token family is bound
    /// to; the clients that must present proofs; and the proofs already seen, one row per key and
    /// `jti` (a SHA-256 hash of both), kept until the proof could no longer be accepted, so a
    /// replay is refused on every instance.
    @Sendable
    static func dpop(_ dialect: SQLDialect) -> [String] {
        let time = dialect.bigIntegerType
        return [
            "ALTER TABLE sessions ADD COLUMN dpop_jkt TEXT",
            "ALTER TABLE oauth_clients ADD COLUMN require_dpop INTEGER NOT NULL DEFAULT 0 CHECK (require_dpop IN (0, 1))",
            """
            CREATE TABLE dpop_proofs (
                proof_hash \(dialect.blobType) PRIMARY KEY NOT NULL,
                expires_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX dpop_proofs_expires_at ON dpop_proofs (expires_at)",
        ]
    }

    /// Migration 8: the states of sign-ins at upstream providers that came back. A state carries
    /// everything itself (sealed and bound to its browser); the row is what makes it answerable
    /// once, on every instance, until it would have expired. Upstream identities live in
    /// `identities` beside Apple's.
    @Sendable
    static func upstreamProviders(_ dialect: SQLDialect) -> [String] {
        let time = dialect.bigIntegerType
        return [
            """
            CREATE TABLE provider_states (
                id TEXT PRIMARY KEY NOT NULL,
                provider TEXT NOT NULL,
                used_at \(time) NOT NULL,
                expires_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX provider_states_expires_at ON provider_states (expires_at)",
        ]
    }

    /// Migration 7: passkeys (WebAuthn credentials), the ceremonies that make and use them, and
    /// each account's user handle.
    @Sendable
    static func passkeys(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            // The opaque user handle authenticators store with a passkey (64 random bytes, never
            // the user id or the email), given once, at the account's first passkey or at a
            // sign-up with a passkey. The index allows any number of accounts without one.
            "ALTER TABLE users ADD COLUMN passkey_user_handle \(blob)",
            "CREATE UNIQUE INDEX users_passkey_user_handle ON users (passkey_user_handle)",
            // One registered credential. public_key is the COSE key as the authenticator gave it;
            // sign_count the last counter seen (0 for synced passkeys, which never count);
            // backup_eligible and backed_up the BE and BS flags; transports a JSON array.
            """
            CREATE TABLE passkeys (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                credential_id \(blob) NOT NULL UNIQUE,
                public_key \(blob) NOT NULL,
                algorithm INTEGER NOT NULL,
                sign_count \(time) NOT NULL DEFAULT 0,
                backup_eligible INTEGER NOT NULL CHECK (backup_eligible IN (0, 1)),
                backed_up INTEGER NOT NULL CHECK (backed_up IN (0, 1)),
                transports TEXT NOT NULL DEFAULT '[]',
                aaguid \(blob) NOT NULL,
                attestation TEXT NOT NULL,
                name TEXT NOT NULL,
                created_at \(time) NOT NULL,
                last_used_at \(time)
            )
            """,
            "CREATE INDEX passkeys_user_id ON passkeys (user_id)",
            // One ceremony: the options a client was given and may answer once, success or not.
            // kind is what the answer does; user_id the account it is for (registration, a second
            // factor), user_handle the handle the options named (registration, sign-up);
            // username and the names are a sign-up's or a named sign-in's; conditional marks
            // iOS 18's automatic upgrade (registration) or AutoFill (sign-in).
            """
            CREATE TABLE passkey_ceremonies (
                id TEXT PRIMARY KEY NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('registration', 'signup', 'sign-in', 'second-factor')),
                challenge \(blob) NOT NULL,
                user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
                user_handle \(blob),
                username TEXT,
                given_name TEXT,
                family_name TEXT,
                conditional INTEGER NOT NULL DEFAULT 0 CHECK (conditional IN (0, 1)),
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                used_at \(time)
            )
            """,
            "CREATE INDEX passkey_ceremonies_expires_at ON passkey_ceremonies (expires_at)",
            "CREATE INDEX passkey_ceremonies_user_id ON passkey_ceremonies (user_id)",
        ]
    }

    /// Migration 6: email flows (verification, password reset, sign-in by code, change of
    /// address), and one durable outbox for their mail and the Apple revocations, which move
    /// into it from `apple_revocations`.
    @Sendable
    static func email(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            // One mailed link-and-code. token_hash is the SHA-256 of the link's 256-bit token;
            // code_hash an HMAC of the 6-digit code under a key derived from the master key.
            // user_id is NULL for an address with no account (the flow exists so the answer is
            // the same, but nothing is mailed). new_email is the address a change moves to.
            // A flow ends once: used, superseded by a newer one, or dead after too many wrong codes.
            """
            CREATE TABLE email_flows (
                id TEXT PRIMARY KEY NOT NULL,
                purpose TEXT NOT NULL CHECK (purpose IN ('verify', 'reset', 'sign-in', 'change')),
                email TEXT NOT NULL,
                user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
                new_email TEXT,
                may_create INTEGER NOT NULL DEFAULT 0 CHECK (may_create IN (0, 1)),
                token_hash \(blob) NOT NULL UNIQUE,
                code_hash \(blob) NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                ended_at \(time),
                ended_reason TEXT
            )
            """,
            "CREATE INDEX email_flows_user_id ON email_flows (user_id)",
            "CREATE INDEX email_flows_email ON email_flows (email, purpose)",
            "CREATE INDEX email_flows_expires_at ON email_flows (expires_at)",
            // Email flows find an account by its address.
            "CREATE INDEX users_email ON users (email)",
            // Work to do outside a request, written in the transaction that decided it, done by
            // whichever process claims it first (a compare-and-set moving next_attempt_at to the
            // end of a lease), retried with back-off until give_up_at. payload is sealed under
            // the master key and the row is deleted once done, so a sent message's link and code
            // do not stay at rest. user_id has no foreign key: a revocation outlives the account.
            // label says what the item is in words that are no secret (an Apple client id, a
            // mail purpose).
            """
            CREATE TABLE outbox (
                id TEXT PRIMARY KEY NOT NULL,
                kind TEXT NOT NULL,
                payload \(blob) NOT NULL,
                user_id TEXT,
                label TEXT,
                created_at \(time) NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at \(time) NOT NULL,
                give_up_at \(time) NOT NULL,
                last_error TEXT
            )
            """,
            "CREATE INDEX outbox_next_attempt_at ON outbox (next_attempt_at)",
            "CREATE INDEX outbox_user_id ON outbox (user_id)",
            // Queued Apple revocations move over, sealed as they were (their context names their
            // id); they are retried for as long as it takes.
            """
            INSERT INTO outbox (id, kind, payload, user_id, label, created_at, attempts, next_attempt_at, give_up_at, last_error)
            SELECT id, 'apple_revocation', token, user_id, client_id, created_at, attempts, next_attempt_at, created_at + 3153600000, last_error
            FROM apple_revocations
            """,
            "DROP TABLE apple_revocations",
        ]
    }

    /// Migration 5: the OAuth 2.1 / OpenID Connect provider: registered clients, browser sessions
    /// of the hosted pages, authorization codes, remembered consent, and sessions that belong to
    /// a client.
    @Sendable
    static func oauthProvider(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            // A registered client. secret_hash is the SHA-256 of a 256-bit random secret (S7),
            // NULL for a public client. The list columns are JSON arrays of strings: redirect
            // URIs are matched as exact strings (S20); grant_types and scopes are what the client
            // may ask for. jwks holds the client's public keys for private_key_jwt.
            """
            CREATE TABLE oauth_clients (
                id TEXT PRIMARY KEY NOT NULL,
                name TEXT NOT NULL,
                secret_hash \(blob),
                first_party INTEGER NOT NULL DEFAULT 0 CHECK (first_party IN (0, 1)),
                redirect_uris TEXT NOT NULL,
                post_logout_redirect_uris TEXT NOT NULL DEFAULT '[]',
                grant_types TEXT NOT NULL,
                scopes TEXT NOT NULL,
                id_token_algorithm TEXT NOT NULL DEFAULT 'RS256',
                jwks TEXT,
                created_at \(time) NOT NULL,
                secret_rotated_at \(time)
            )
            """,
            // The hosted pages' sign-in, shared by every client (single sign-on): the cookie
            // holds a random token, the row only its SHA-256 hash (S29). amr and auth_time are
            // what ID tokens issued under it report.
            """
            CREATE TABLE browser_sessions (
                id TEXT PRIMARY KEY NOT NULL,
                token_hash \(blob) NOT NULL UNIQUE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                amr TEXT NOT NULL DEFAULT '[]',
                auth_time \(time) NOT NULL,
                created_at \(time) NOT NULL,
                last_used_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                ended_at \(time),
                ended_reason TEXT,
                user_agent TEXT,
                ip TEXT
            )
            """,
            "CREATE INDEX browser_sessions_user_id ON browser_sessions (user_id)",
            "CREATE INDEX browser_sessions_expires_at ON browser_sessions (expires_at)",
            // An OAuth grant's refresh-token family is a session that names its client, the
            // granted scope and the browser session it came from (the ID token's sid).
            "ALTER TABLE sessions ADD COLUMN client_id TEXT REFERENCES oauth_clients (id) ON DELETE CASCADE",
            "ALTER TABLE sessions ADD COLUMN scope TEXT",
            "ALTER TABLE sessions ADD COLUMN browser_session_id TEXT REFERENCES browser_sessions (id) ON DELETE SET NULL",
            "CREATE INDEX sessions_client_id ON sessions (client_id)",
            "CREATE INDEX sessions_browser_session_id ON sessions (browser_session_id)",
            // Authorization codes (S22): kept as SHA-256 hashes, single use (used_at set by a
            // compare-and-set), bound to client, redirect URI, PKCE challenge and nonce, alive
            // at most 60 s. session_id is what the exchange issued, revoked if the code comes
            // back a second time.
            """
            CREATE TABLE oauth_codes (
                code_hash \(blob) PRIMARY KEY NOT NULL,
                client_id TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                browser_session_id TEXT REFERENCES browser_sessions (id) ON DELETE SET NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                scope TEXT NOT NULL,
                nonce TEXT,
                auth_time \(time) NOT NULL,
                amr TEXT NOT NULL DEFAULT '[]',
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                used_at \(time),
                session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL
            )
            """,
            "CREATE INDEX oauth_codes_client_id ON oauth_codes (client_id)",
            "CREATE INDEX oauth_codes_user_id ON oauth_codes (user_id)",
            "CREATE INDEX oauth_codes_browser_session_id ON oauth_codes (browser_session_id)",
            "CREATE INDEX oauth_codes_session_id ON oauth_codes (session_id)",
            "CREATE INDEX oauth_codes_expires_at ON oauth_codes (expires_at)",
            // Consent a user gave a third-party client: the granted scopes, space-separated and
            // sorted; asking for more shows the consent page again. Withdrawn by DELETE.
            """
            CREATE TABLE oauth_consents (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                client_id TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                granted_at \(time) NOT NULL,
                updated_at \(time) NOT NULL,
                PRIMARY KEY (user_id, client_id)
            )
            """,
            "CREATE INDEX oauth_consents_client_id ON oauth_consents (client_id)",
            // The `jti` of each private_key_jwt client assertion seen, until it expires: an
            // assertion authenticates once (RFC 7523 §3, OpenID Connect Core §9).
            """
            CREATE TABLE oauth_client_assertions (
                client_id TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
                jti TEXT NOT NULL,
                expires_at \(time) NOT NULL,
                PRIMARY KEY (client_id, jti)
            )
            """,
            "CREATE INDEX oauth_client_assertions_expires_at ON oauth_client_assertions (expires_at)",
        ]
    }

    /// Migration 4: a rotated refresh token keeps its successor sealed for the reuse grace
    /// window (S8), so a client that lost the answer to its refresh gets the same successor back.
    @Sendable
    static func refreshReuseGrace(_ dialect: SQLDialect) -> [String] {
        [
            // The successor, sealed under the master key; cleared once the window is over.
            "ALTER TABLE refresh_tokens ADD COLUMN successor_sealed \(dialect.blobType)",
            "ALTER TABLE refresh_tokens ADD COLUMN successor_expires_at \(dialect.bigIntegerType)",
            """
            CREATE INDEX refresh_tokens_successor_expires_at
                ON refresh_tokens (successor_expires_at) WHERE successor_expires_at IS NOT NULL
            """,
        ]
    }

    /// Migration 2: what Sign in with Apple needs beyond the initial schema.
    @Sendable
    static func signInWithApple(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            // The client id (token `aud`) the Apple refresh token was issued to: code exchange,
            // validation and revocation must name the same one.
            "ALTER TABLE identities ADD COLUMN apple_client_id TEXT",
            // Set by an email-disabled notification, cleared by email-enabled.
            "ALTER TABLE identities ADD COLUMN email_disabled_at \(time)",
            // Identity tokens already accepted (by nonce hash, or token hash without a nonce),
            // kept until the token expires, so each is accepted once.
            """
            CREATE TABLE apple_identity_tokens (
                token_key \(blob) PRIMARY KEY NOT NULL,
                expires_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX apple_identity_tokens_expires_at ON apple_identity_tokens (expires_at)",
            // The revocation outbox: Apple refresh tokens of deleted accounts, sealed under the
            // master key, retried until Apple's revoke endpoint accepts them. user_id has no
            // foreign key: the row outlives the account.
            """
            CREATE TABLE apple_revocations (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL,
                client_id TEXT NOT NULL,
                token \(blob) NOT NULL,
                created_at \(time) NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at \(time) NOT NULL,
                last_error TEXT
            )
            """,
            "CREATE INDEX apple_revocations_next_attempt_at ON apple_revocations (next_attempt_at)",
            // Tombstones of the live refresh tokens of deleted accounts (hashes only, no personal
            // data), so a client refreshing afterwards learns reason account_deleted instead of
            // "unknown"; kept until the session would have expired.
            """
            CREATE TABLE ended_refresh_tokens (
                token_hash \(blob) PRIMARY KEY NOT NULL,
                reason TEXT NOT NULL,
                expires_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX ended_refresh_tokens_expires_at ON ended_refresh_tokens (expires_at)",
        ]
    }


    /// Migration 3: MFA tokens, and challenges bound to the session or MFA token that asked.
    @Sendable
    static func secondFactors(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        return [
            // An mfa_token proves a first factor for five minutes and five wrong tries (S7: kept
            // only as a SHA-256 hash). first_factor is the amr value of the sign-in method.
            """
            CREATE TABLE mfa_tokens (
                token_hash \(blob) PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                first_factor TEXT NOT NULL,
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                failures INTEGER NOT NULL DEFAULT 0,
                ended_at \(time),
                ended_reason TEXT
            )
            """,
            "CREATE INDEX mfa_tokens_user_id ON mfa_tokens (user_id)",
            "CREATE INDEX mfa_tokens_expires_at ON mfa_tokens (expires_at)",
            // A register or step_up challenge belongs to the session that asked for it; an mfa
            // challenge to the mfa_token (S16).
            "ALTER TABLE challenges ADD COLUMN session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE",
            "ALTER TABLE challenges ADD COLUMN mfa_token_hash \(blob) REFERENCES mfa_tokens (token_hash) ON DELETE CASCADE",
            "CREATE INDEX challenges_session_id ON challenges (session_id)",
            "CREATE INDEX challenges_mfa_token_hash ON challenges (mfa_token_hash)",
        ]
    }

    /// Migration 1: the whole v1 schema.
    @Sendable
    static func initialSchema(_ dialect: SQLDialect) -> [String] {
        let blob = dialect.blobType
        let time = dialect.bigIntegerType
        func flag(_ column: String, default value: Int = 0) -> String {
            "\(column) INTEGER NOT NULL DEFAULT \(value) CHECK (\(column) IN (0, 1))"
        }
        return [
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY NOT NULL,
                email TEXT,
                \(flag("email_verified")),
                \(flag("is_private_email")),
                given_name TEXT,
                family_name TEXT,
                created_at \(time) NOT NULL,
                updated_at \(time) NOT NULL
            )
            """,
            // One row per external account (Sign in with Apple now, other providers later).
            // apple_refresh_token is sealed with AES-GCM under the master key (S10, S26).
            """
            CREATE TABLE identities (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                provider TEXT NOT NULL,
                issuer TEXT NOT NULL,
                subject TEXT NOT NULL,
                email TEXT,
                \(flag("email_verified")),
                \(flag("is_private_email")),
                real_user_status INTEGER,
                transfer_sub TEXT,
                apple_refresh_token \(blob),
                revoked_at \(time),
                last_validated_at \(time),
                created_at \(time) NOT NULL,
                UNIQUE (provider, issuer, subject)
            )
            """,
            "CREATE INDEX identities_user_id ON identities (user_id)",
            "CREATE INDEX identities_transfer_sub ON identities (transfer_sub)",
            // password_hash is a PHC string (S11); username is stored normalised by the caller.
            """
            CREATE TABLE password_credentials (
                user_id TEXT PRIMARY KEY NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                username TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                created_at \(time) NOT NULL,
                updated_at \(time) NOT NULL
            )
            """,
            // amr is a JSON array of strings; a session ends at the earlier of its two expiries
            // (S9) or when revoked.
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                amr TEXT NOT NULL DEFAULT '[]',
                created_at \(time) NOT NULL,
                last_used_at \(time) NOT NULL,
                idle_expires_at \(time) NOT NULL,
                absolute_expires_at \(time) NOT NULL,
                second_factor_at \(time),
                revoked_at \(time),
                revoked_reason TEXT,
                user_agent TEXT,
                ip TEXT
            )
            """,
            "CREATE INDEX sessions_user_id ON sessions (user_id)",
            // Refresh tokens are kept only as SHA-256 hashes (S7). Retired ones stay, so that
            // presenting one again is recognised as reuse and revokes the session (S8).
            """
            CREATE TABLE refresh_tokens (
                token_hash \(blob) PRIMARY KEY NOT NULL,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                created_at \(time) NOT NULL,
                retired_at \(time),
                replaced_by \(blob)
            )
            """,
            "CREATE INDEX refresh_tokens_session_id ON refresh_tokens (session_id)",
            // Exactly one live refresh token per session (S8): of two concurrent rotations of
            // the same token, the second insert fails here and its transaction rolls back.
            """
            CREATE UNIQUE INDEX refresh_tokens_one_live_per_session
                ON refresh_tokens (session_id) WHERE retired_at IS NULL
            """,
            // private_key is sealed with AES-GCM under the master key (S10).
            """
            CREATE TABLE signing_keys (
                id TEXT PRIMARY KEY NOT NULL,
                algorithm TEXT NOT NULL,
                public_jwk TEXT NOT NULL,
                private_key \(blob) NOT NULL,
                created_at \(time) NOT NULL,
                activates_at \(time) NOT NULL,
                retires_at \(time),
                expires_at \(time)
            )
            """,
            // public_key is the 65-byte uncompressed X9.63 P-256 point.
            """
            CREATE TABLE device_keys (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                public_key \(blob) NOT NULL,
                label TEXT NOT NULL,
                created_at \(time) NOT NULL,
                last_used_at \(time),
                UNIQUE (user_id, public_key)
            )
            """,
            // Challenges are kept as hashes, bound to user, device key and purpose, and spent by
            // setting used_at in the same transaction as what they authorise (S16, S28).
            """
            CREATE TABLE challenges (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                device_key_id TEXT REFERENCES device_keys (id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                challenge_hash \(blob) NOT NULL,
                created_at \(time) NOT NULL,
                expires_at \(time) NOT NULL,
                used_at \(time)
            )
            """,
            "CREATE INDEX challenges_user_id ON challenges (user_id)",
            "CREATE INDEX challenges_device_key_id ON challenges (device_key_id)",
            "CREATE INDEX challenges_expires_at ON challenges (expires_at)",
            // secret is sealed; last_used_step stops a code from being used twice (S19).
            """
            CREATE TABLE totp_factors (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
                secret \(blob) NOT NULL,
                confirmed_at \(time),
                last_used_step \(time),
                created_at \(time) NOT NULL
            )
            """,
            """
            CREATE TABLE recovery_codes (
                code_hash \(blob) PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at \(time) NOT NULL,
                used_at \(time)
            )
            """,
            "CREATE INDEX recovery_codes_user_id ON recovery_codes (user_id)",
            // Failure counters that outlive a restart (S14); key is for example
            // "login:account:<user id>" or "login:ip:<address>".
            """
            CREATE TABLE rate_limits (
                key TEXT PRIMARY KEY NOT NULL,
                window_start \(time) NOT NULL,
                failures \(time) NOT NULL DEFAULT 0,
                blocked_until \(time)
            )
            """,
            // Notification ids already handled, kept until the notification would expire, so a
            // replayed notification is answered without being applied twice.
            """
            CREATE TABLE apple_notifications (
                jti TEXT PRIMARY KEY NOT NULL,
                received_at \(time) NOT NULL,
                expires_at \(time) NOT NULL
            )
            """,
            "CREATE INDEX apple_notifications_expires_at ON apple_notifications (expires_at)",
            // The audit log (S27). user_id has no foreign key: entries outlive the account they
            // describe. details is a JSON object of strings and never holds a secret (S26).
            """
            CREATE TABLE audit_log (
                id \(dialect.autoIncrementPrimaryKey),
                time \(time) NOT NULL,
                user_id TEXT,
                event TEXT NOT NULL,
                outcome TEXT NOT NULL,
                ip TEXT,
                request_id TEXT,
                details TEXT NOT NULL DEFAULT '{}'
            )
            """,
            "CREATE INDEX audit_log_user_id_time ON audit_log (user_id, time)",
            "CREATE INDEX audit_log_event_time ON audit_log (event, time)",
        ]
    }
}
