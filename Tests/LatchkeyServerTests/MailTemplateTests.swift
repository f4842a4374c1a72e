import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The messages per purpose and locale: `Accept-Language` read strictly, the locale matched,
/// the template format (placeholders, escaping, one-line subjects), `email.templates_dir` over the
/// compiled-in English and French, and the start-up refusals of a directory that cannot be used.
@Suite("Mail templates: locales from Accept-Language, the template format, email.templates_dir (S32, S33)")
struct MailTemplateTests {
    static let available: Set<MailLocale> = [.english, .french]

    static func choose(_ header: String?, from available: Set<MailLocale> = available) -> String {
        AcceptLanguage(header).choose(from: available, fallback: .english).tag
    }

    // MARK: Accept-Language

    @Test("S32: Accept-Language weights: the highest q that a locale matches wins, equal weights keep the header's order, q=0 rules out")
    func acceptLanguageWeights() {
        #expect(AcceptLanguage("fr-CA, en;q=0.5").ranges == [.init(tag: "fr-ca", quality: 1000), .init(tag: "en", quality: 500)])
        #expect(AcceptLanguage("EN-gb;Q=0.25 , fr ;q=1.000").ranges == [.init(tag: "en-gb", quality: 250), .init(tag: "fr", quality: 1000)])
        #expect(Self.choose("fr-CA, en;q=0.5") == "fr")
        #expect(Self.choose("en;q=0.5, fr;q=0.8") == "fr")
        #expect(Self.choose("de, fr;q=0.9, en;q=0.8") == "fr", "de is not available: the next weight")
        #expect(Self.choose("fr;q=0.5, en;q=0.5") == "fr", "equal weights: the header's order")
        #expect(Self.choose("en;q=0.5, fr;q=0.5") == "en")
        #expect(Self.choose("fr;q=0, en") == "en")
        #expect(Self.choose("fr-CA, fr;q=0") == "en", "fr is ruled out, so fr-CA cannot fall back to it")
        #expect(Self.choose("fr;q=0.001") == "fr")
        #expect(Self.choose("fr;q=0") == "en", "nothing acceptable: the default, since the message is sent anyway")
    }

    @Test("S32: Accept-Language wildcards: * takes the default (English) unless it is ruled out, then another available locale")
    func acceptLanguageWildcards() {
        #expect(Self.choose("*") == "en")
        #expect(Self.choose("de, *;q=0.1, fr;q=0.05") == "en", "* outweighs fr")
        #expect(Self.choose("en;q=0, *") == "fr")
        #expect(Self.choose("*;q=0") == "en")
        #expect(AcceptLanguage("*;q=0.5").ranges == [.init(tag: "*", quality: 500)])
    }

    @Test("S32: malformed Accept-Language ranges are left out, one by one, and the rest still count")
    func acceptLanguageMalformed() {
        let malformed = [
            "fr;q=2", "fr;q=1.5", "fr;q=0.5.5", "fr;q=0.1234", "fr;q=", "fr;q", "fr;level=1", "fr;q=0.5;q=0.4", "fr q=0.5", "fr;q = 0.5",
            "français", "fr-", "-fr", "fr--ca", "toolongtag", "fr-abcdefghi", "1fr", "f*", "fr_CA", "fr;;q=1", "\"fr\"", "fr\u{0}",
        ]
        for range in malformed {
            #expect(AcceptLanguage(range).ranges.isEmpty, "\(range.debugDescription)")
            #expect(Self.choose(range + ", en;q=0.1") == "en", "\(range.debugDescription)")
            #expect(Self.choose(range + ", fr;q=0.1") == "fr", "\(range.debugDescription): the well-formed range still counts")
        }
        for empty in [nil, "", " ", ",", " , ,\t,"] {
            #expect(AcceptLanguage(empty).ranges.isEmpty && Self.choose(empty) == "en")
        }
    }

    @Test("S32: Accept-Language is bounded: a header over 1024 bytes is ignored, and only its first 32 ranges are read")
    func acceptLanguageBounds() {
        let padding = String(repeating: "de;q=0.9, ", count: 102)
        let long = "fr, " + padding + "en"
        #expect(long.utf8.count > AcceptLanguage.maxLength)
        #expect(AcceptLanguage(long).ranges.isEmpty && Self.choose(long) == "en")
        let fits = "fr, " + String(repeating: "de;q=0.9, ", count: 90) + "en"
        #expect(fits.utf8.count <= AcceptLanguage.maxLength && Self.choose(fits) == "fr")

        let many = Array(repeating: "de", count: 32)
        #expect(Self.choose((many + ["fr"]).joined(separator: ",")) == "en", "the 33rd range is not read")
        #expect(Self.choose((many.dropLast() + ["fr"]).joined(separator: ",")) == "fr", "the 32nd is")
        #expect(AcceptLanguage((many + ["fr"]).joined(separator: ",")).ranges.count == 32)
    }

    @Test("S32: locale matching: the exact tag, whatever its case, then its shorter tags (fr-CA → fr, zh-Hant-TW → zh-hant); never a longer one")
    func localeMatching() throws {
        let available: Set<MailLocale> = [.english, .french, try #require(MailLocale("zh-Hant")), try #require(MailLocale("pt-BR"))]
        #expect(Self.choose("fr-CA", from: available) == "fr")
        #expect(Self.choose("FR", from: available) == "fr")
        #expect(Self.choose("zh-Hant-TW", from: available) == "zh-hant")
        #expect(Self.choose("pt-br", from: available) == "pt-br")
        #expect(Self.choose("pt", from: available) == "en", "pt does not pick pt-BR: lookup only shortens the request")
        #expect(Self.choose("de-CH, de", from: available) == "en")
        #expect(try #require(MailLocale("de-x-private")).fallbacks == [try #require(MailLocale("de"))], "a singleton goes with the subtag after it")
        #expect(try #require(MailLocale("zh-Hant-TW")).fallbacks.map(\.tag) == ["zh-hant", "zh"])
        #expect(MailLocale("en_US") == nil && MailLocale("") == nil && MailLocale("e1") == nil && MailLocale("en-") == nil)
    }

    // MARK: The template format

    static func refusal(_ source: String, _ name: MailTemplateName, _ part: MailTemplatePart) -> String? {
        do throws(MailTemplateError) {
            _ = try MailTemplate(source, name: name, part: part)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("S32: the template format is strict: unknown or misplaced placeholders, a flow's body without {{code}} or {{link}}, control characters, empty files are refused")
    func templateFormat() throws {
        #expect(Self.refusal("Hello {{name}}, {{code}} {{link}}", .reset, .text)?.contains("unknown placeholder {{name}}") == true)
        #expect(Self.refusal("{{ code }} {{link}}", .reset, .text) != nil, "no spaces inside the braces")
        #expect(Self.refusal("{{Code}} {{link}}", .reset, .text) != nil)
        #expect(Self.refusal("{{code} {{link}}", .reset, .text) != nil)
        #expect(Self.refusal("{{code}} {{link}} {{", .reset, .text) != nil)
        #expect(Self.refusal("Your code {{code}}", .signIn, .subject)?.contains("unknown placeholder {{code}}") == true, "no code in a subject")
        #expect(Self.refusal("<a href=\"{{link}}\">go</a>", .reset, .html) == "must hold {{code}}")
        #expect(Self.refusal("{{code}}", .verify, .text) == "must hold {{link}}")
        #expect(Self.refusal("Changed. {{link}}", .changeNotice, .text)?.contains("unknown placeholder {{link}}") == true, "the notice has no link")
        #expect(Self.refusal("Changed in {{minutes}}", .changeNotice, .html) != nil)
        #expect(Self.refusal("Line\u{7}bell {{code}} {{link}}", .reset, .text)?.contains("U+7") == true)
        #expect(Self.refusal(" \n\t", .changeNotice, .text) == "is empty")
        #expect(Self.refusal("Reset\nyour password", .reset, .subject) == "a subject is one line")
        #expect(Self.refusal("Reset\u{2028}your password", .reset, .subject) != nil)
        #expect(Self.refusal("Reset\tyour password", .reset, .subject) != nil)

        // Accepted: one final line break of a subject, CRLF bodies (read as LF), a byte-order mark.
        let subject = try MailTemplate("\u{FEFF}Reset your {{product_name}} password ({{minutes}} minutes)\r\n", name: .reset, part: .subject)
        #expect(subject.render(MailValues(productName: "Notes", minutes: "15")) == "Reset your Notes password (15 minutes)")
        let text = try MailTemplate("Code: {{code}}\r\nLink: {{link}}\r\n", name: .reset, part: .text)
        #expect(text.render(MailValues(code: "123456", link: "https://x.example/l", productName: "N")) == "Code: 123456\nLink: https://x.example/l\n")
        #expect(try MailTemplate("{{product_name}} }} {", name: .changeNotice, part: .text).pieces.count == 2, "a lone }} or { is text")
    }

    @Test("S32: values are escaped once in HTML and put in as they are in text; the template's own markup is kept")
    func escaping() throws {
        let values = MailValues(code: "123456", link: "https://auth.example/email/reset?token=a&b=\"c\"", productName: "Ada & <Co> 'x'", minutes: "15")
        let html = try MailTemplate(#"<p title="{{product_name}}"><a href="{{link}}">{{code}}</a> {{product_name}}</p>"#, name: .reset, part: .html)
        #expect(
            html.render(values)
                == #"<p title="Ada &amp; &lt;Co&gt; &#39;x&#39;"><a href="https://auth.example/email/reset?token=a&amp;b=&quot;c&quot;">123456</a> Ada &amp; &lt;Co&gt; &#39;x&#39;</p>"#
        )
        let text = try MailTemplate("{{product_name}}: {{code}} {{link}}", name: .reset, part: .text)
        #expect(text.render(values) == "Ada & <Co> 'x': 123456 https://auth.example/email/reset?token=a&b=\"c\"")
        // One escaping function (LatchkeyBasics' HTMLEscaping) behind the mail and the hosted pages' HTML.
        #expect(html.render(values).contains(">123456</a> " + HTML.escape(values.productName) + "</p>"))
    }

    @Test("S33: a subject stays one header line: a line break in a value becomes a space, and a product name with one is refused at start")
    func subjectIsOneLine() throws {
        let subject = try MailTemplate("Reset your {{product_name}} password", name: .reset, part: .subject)
        let rendered = subject.render(MailValues(productName: "Notes\r\nBcc: eve@example.com\u{2028}x"))
        #expect(rendered == "Reset your Notes  Bcc: eve@example.com x password")
        #expect(!rendered.contains { $0.isNewline })
        let refused = #expect(throws: ConfigurationError.self) { _ = try MailTemplateSet(productName: "Notes\r\nBcc: eve@example.com", directory: nil) }
        #expect(refused?.problems == ["email.product_name: must be 1 to 100 bytes on one line"])
    }

    @Test("S32: the compiled-in English is exactly the old text, every purpose exists in English and French, and French is French")
    func compiledIn() throws {
        let set = try MailTemplateSet(productName: "Latchkey", directory: nil)
        #expect(set.locales == [.english, .french])
        for locale in set.locales {
            for name in MailTemplateName.allCases {
                for part in MailTemplatePart.allCases {
                    #expect(MailTemplates.sources[locale]?[name]?[part] != nil, "\(locale)/\(name.rawValue).\(part.rawValue)")
                }
            }
        }
        let link = "https://auth.example/email/reset?token=T"
        let english = set.message(for: .reset, locale: .english, to: "ada@example.com", link: link, code: "123456", minutes: 15)
        #expect(english.subject == "Reset your Latchkey password")
        #expect(
            english.text == """
                Someone asked to reset the password of your account.

                Your code: 123456

                Or open this link:
                https://auth.example/email/reset?token=T

                The code and the link work once, for 15 minutes. If you did not ask for this, ignore this message.

                Latchkey
                """)
        #expect(
            english.html == """
                <!DOCTYPE html><html><body style="font-family: -apple-system, sans-serif"><p>Someone asked to reset the password of your account.</p>\
                <p style="font-size: 28px; letter-spacing: 4px"><strong>123456</strong></p><p><a href="https://auth.example/email/reset?token=T">\
                Choose a new password</a></p><p>The code and the link work once, for 15 minutes. If you did not ask for this, ignore this message.</p>\
                <p>Latchkey</p></body></html>
                """)
        #expect(english.purpose == "reset")
        let subjects = MailTemplateName.allCases.filter(\.isFlow).map {
            set.template($0, .subject, locale: .english).render(MailValues(productName: "Latchkey"))
        }
        #expect(
            subjects == [
                "Confirm your email for Latchkey", "Reset your Latchkey password", "Your Latchkey sign-in code", "Confirm your new email for Latchkey",
            ])
        let notice = set.changeNotice(locale: .english, to: "ada@example.com")
        #expect(notice.subject == "Your Latchkey email was changed" && notice.purpose == "change_notice")
        #expect(notice.text == "The email address of your Latchkey account was changed. If you did not do this, contact support.\n\nLatchkey")

        let french = set.message(for: .reset, locale: .french, to: "ada@example.com", link: link, code: "123456", minutes: 15)
        #expect(french.subject == "Réinitialisez votre mot de passe Latchkey")
        #expect(french.text.contains("Votre code\u{A0}: 123456") && french.text.contains(link) && french.text.contains("pendant 15 minutes"))
        #expect(french.html.hasPrefix("<!DOCTYPE html><html lang=\"fr\">") && french.html.contains("<strong>123456</strong>"))
        #expect(set.changeNotice(locale: .french, to: "ada@example.com").subject == "L’adresse e-mail de votre compte Latchkey a changé")
    }

    // MARK: Over HTTP

    /// The newest message to `address` in the sandbox mailbox, once there are `count`.
    static func message(_ server: TestServer, to address: String, count: Int = 1) async throws -> JSONValue {
        #expect(try await eventually(within: .seconds(10)) { try await EmailFlowTests.mailbox(server, to: address).count >= count }, "mail to \(address)")
        return try #require(try await EmailFlowTests.mailbox(server, to: address).dropFirst(count - 1).first)
    }

    @Test("S32: a reset asked with Accept-Language: fr-CA, en;q=0.5 is mailed in French; without the header, in English")
    func resetInFrench() async throws {
        try await TestServer.with { server in
            _ = try await EmailFlowTests.signUp(server, "ada@example.com")
            let started = try await server.request(
                .post, "/v1/auth/password/reset", json: ["email": "ada@example.com"], headers: ["Accept-Language": "fr-CA, en;q=0.5"])
            #expect(started.status == 202)
            let french = try await Self.message(server, to: "ada@example.com")
            #expect(french["subject"] == "Réinitialisez votre mot de passe Latchkey")
            let text = try #require(french["text"]?.stringValue)
            #expect(text.hasPrefix("Quelqu’un a demandé la réinitialisation du mot de passe de votre compte."))
            #expect(text.firstMatch(of: /Votre code\u{A0}: [0-9]{6}\n/) != nil && text.contains("/email/reset?token="))
            #expect(french["html"]?.stringValue?.contains("<html lang=\"fr\">") == true)

            // The code works as in English.
            let code = try #require(text.firstMatch(of: /: ([0-9]{6})\n/).map { String($0.output.1) })
            let flowID = try #require(try started.json["flow_id"])
            let reset = try await server.request(
                .post, "/v1/auth/password/reset/confirm", json: ["flow_id": flowID, "code": .string(code), "password": "a brand new passphrase"])
            #expect(reset.status == 200)

            _ = try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"])
            #expect(try await Self.message(server, to: "ada@example.com", count: 2)["subject"] == "Reset your Latchkey password")
            _ = try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"], headers: ["Accept-Language": "de-CH, de;q=0.9"])
            #expect(try await Self.message(server, to: "ada@example.com", count: 3)["subject"] == "Reset your Latchkey password", "no German: English")
        }
    }

    @Test("S32: a change of address: the confirmation in the language of the request that asked, the notice in that of the request that confirmed")
    func changeNoticeLocale() async throws {
        try await TestServer.with { server in
            let signedUp = try await EmailFlowTests.signUp(server, "ada@example.com")
            let headers = ["Authorization": "Bearer \(signedUp.accessToken)", "Accept-Language": "fr"]
            _ = try EmailFlowTests.started(try await server.request(.post, "/v1/me/email", json: ["email": "ada@new.example"], headers: headers))
            let confirmation = try await Self.message(server, to: "ada@new.example")
            #expect(confirmation["subject"] == "Confirmez votre nouvelle adresse e-mail pour Latchkey")
            let token = try #require(confirmation["text"]?.stringValue?.firstMatch(of: /token=(\S+)/).map { String($0.output.1) })
            let confirmed = try await server.request(.post, "/v1/me/email/confirm", json: ["token": .string(token)], headers: ["Accept-Language": "en-GB, fr;q=0.5"])
            #expect(confirmed.status == 200)
            #expect(try await Self.message(server, to: "ada@example.com")["subject"] == "Your Latchkey email was changed")
        }
    }

    @Test("S32: the hosted Forgot password? page mails in the browser's Accept-Language")
    func hostedPageLocale() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            _ = try await server.passwordUser()
            let browser = OAuthBrowser(server, headers: ["Accept-Language": "fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7"])
            let codePage = try await HostedEmailPagesTests.start(browser, AuthorizationAttempt(client), link: "Forgot password?")
            #expect(codePage.status == 200)
            #expect(try await Self.message(server, to: HostedEmailPagesTests.address)["subject"] == "Réinitialisez votre mot de passe Latchkey")
        }
    }

    /// Writes `files` (path → contents) under a new directory.
    static func templates(_ files: [String: String], raw: [String: [UInt8]] = [:]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("mail-templates")
        for (path, bytes) in files.mapValues({ Array($0.utf8) }).merging(raw, uniquingKeysWith: { $1 }) {
            let url = directory.url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        return directory
    }

    @Test("S32: email.templates_dir overrides part by part: its subject and HTML, the compiled-in rest, a new locale, and an HTML-hostile product name escaped in HTML only")
    func templatesDirectory() async throws {
        let directory = try Self.templates([
            "en/reset.subject": "{{product_name}}: choose a new password\n",
            "en/reset.html": "<html><body><h1>{{product_name}}</h1><p>{{code}}</p><a href=\"{{link}}\">Reset</a> ({{minutes}} min)</body></html>",
            "fr/reset.txt": "Bonjour de {{product_name}} : {{code}} {{link}}",
            "de/reset.subject": "Ihr neues Passwort für {{product_name}}",
            "de/change-notice.txt": "Die Adresse wurde geändert. {{product_name}}",
            ".git/HEAD": "ignored: a dot-name",
        ])
        defer { directory.remove() }
        let product = #"Ada & <Co> "Notes""#
        try await TestServer.with({
            $0.email.templatesDir = directory.path
            $0.email.productName = product
        }) { server in
            _ = try await EmailFlowTests.signUp(server, "ada@example.com")
            _ = try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"])
            let english = try await Self.message(server, to: "ada@example.com")
            #expect(english["subject"] == .string(product + ": choose a new password"), "a subject is text: not escaped")
            let html = try #require(english["html"]?.stringValue)
            #expect(html.hasPrefix("<html><body><h1>Ada &amp; &lt;Co&gt; &quot;Notes&quot;</h1>") && html.contains("(15 min)"))
            #expect(!html.contains("<Co>") && !html.contains("&amp;amp;"), "escaped once")
            let text = try #require(english["text"]?.stringValue)
            #expect(text.hasPrefix("Someone asked to reset the password") && text.hasSuffix("\n\n" + product), "the compiled-in text, the name as it is")

            _ = try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"], headers: ["Accept-Language": "fr"])
            let french = try await Self.message(server, to: "ada@example.com", count: 2)
            #expect(french["subject"] == .string("Réinitialisez votre mot de passe " + product), "the compiled-in French subject")
            #expect(french["text"]?.stringValue?.hasPrefix("Bonjour de " + product + " : ") == true, "the directory's French text")

            _ = try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"], headers: ["Accept-Language": "de-AT"])
            let german = try await Self.message(server, to: "ada@example.com", count: 3)
            #expect(german["subject"] == .string("Ihr neues Passwort für " + product), "a locale of the directory alone; de-AT → de")
            #expect(german["html"]?.stringValue?.hasPrefix("<html><body><h1>") == true, "the rest falls back to English, the directory's first")
            #expect(server.application.services.email?.templates.locales.map(\.tag).sorted() == ["de", "en", "fr"])
        }
    }

    @Test("S32, S33: a templates directory that cannot be used stops latchkey serve with a line naming email.templates_dir and the file")
    func refusedDirectories() throws {
        let oversized = "{{code}} {{link}} " + String(repeating: "x", count: 64 * 1024)
        let cases: [(files: [String: String], raw: [String: [UInt8]], file: String, says: String)] = [
            (["en/reset.txt": "Your code is below. {{link}}"], [:], "en/reset.txt", "must hold {{code}}"),
            (["fr/verify.html": "{{code}} {{link}} {{signature}}"], [:], "fr/verify.html", "unknown placeholder {{signature}}"),
            (["en/change-notice.txt": "Changed. {{link}}"], [:], "en/change-notice.txt", "unknown placeholder {{link}}"),
            (["en/sign-in.subject": "Your code\nBcc: eve@example.com"], [:], "en/sign-in.subject", "a subject is one line"),
            ([:], ["en/reset.txt": [0x59, 0x6F, 0xFF, 0xFE, 0x20] + Array("{{code}} {{link}}".utf8)], "en/reset.txt", "is not UTF-8"),
            (["en/reset.html": oversized], [:], "en/reset.html", "is larger than 64 KiB"),
            (["en/resett.txt": "{{code}} {{link}}"], [:], "en/resett.txt", "is not a template"),
            (["en/reset.text": "{{code}} {{link}}"], [:], "en/reset.text", "is not a template"),
            (["english_us/reset.txt": "{{code}} {{link}}"], [:], "english_us", "is not a locale folder"),
            (["README.md": "notes"], [:], "README.md", "is not a locale folder"),
        ]
        let run = try TemporaryDirectory("mail-templates-serve")
        defer { run.remove() }
        for (files, raw, file, says) in cases {
            let templates = try Self.templates(files, raw: raw)
            defer { templates.remove() }
            let result = try Self.serve(in: run, templatesDir: templates.path)
            let line = "email.templates_dir: \(templates.path)/\(file)"
            #expect(result.status == 1 && result.error.contains(line) && result.error.contains(says), "\(file): \(result.error)")
        }
        let missing = run.file("no-such-templates")
        let result = try Self.serve(in: run, templatesDir: missing)
        #expect(result.status == 1 && result.error.contains("email.templates_dir: \(missing) is not a directory that can be read"), "\(result.error)")
    }

    /// Runs `latchkey serve` (development mode) with `email.templates_dir`, expecting it to stop.
    static func serve(in directory: TemporaryDirectory, templatesDir: String) throws -> Subprocess.Result {
        let config = directory.url.appendingPathComponent("latchkey-\(UUID()).json")
        let members: JSONValue = [
            "database": .string("sqlite:" + directory.file("db.sqlite")), "master_key_file": .string(directory.file("master.key")),
            "dev": true, "listen": "127.0.0.1:0", "email": ["templates_dir": .string(templatesDir)],
        ]
        try Data(members.serialized).write(to: config)
        return try Subprocess.run(Executables.latchkey, ["serve", "--config", config.path], directory: directory.url)
    }

    @Test("S32: email.templates_dir needs mail to be on: outside development mode it needs email.smtp_url")
    func templatesNeedMail() {
        var configuration = Configuration()
        configuration.masterKeyFile = "/tmp/master.key"
        configuration.email.templatesDir = "/etc/latchkey/templates"
        #expect(ConfigurationLoader.validate(configuration).contains("email.templates_dir: applies only when mail can be sent; set email.smtp_url"))
        configuration.dev = true
        #expect(!ConfigurationLoader.validate(configuration).contains { $0.hasPrefix("email.templates_dir") })
    }
}
