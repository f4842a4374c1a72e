import FoundationEssentials
import Glibc

/// The messages in every language the server writes: the compiled-in ones (``MailTemplates``:
/// English and French) with the files of `email.templates_dir` over them, read and checked once,
/// at start, so that a bad file stops the server instead of a message.
///
/// The directory holds one folder per locale, named by its language tag, and in it up to three
/// files per message, `{name}.subject`, `{name}.txt` and `{name}.html` (``MailTemplateName``,
/// ``MailTemplatePart``):
///
/// ```
/// templates/
///   en/reset.subject        Reset your {{product_name}} password
///   de/reset.txt
///   de/reset.html
/// ```
///
/// Each part comes from the first of: the request's locale, its shorter tags (`de-ch` → `de`),
/// then English, each as a file of the directory, else compiled in. So a folder may hold as few
/// files as it likes, and a new language is as complete as its folder.
struct MailTemplateSet: Sendable {
    /// The largest template file read.
    static let maxFileSize = 64 * 1024
    /// The setting that names the directory, which starts every problem.
    static let setting = "email.templates_dir"

    struct Key: Sendable, Hashable {
        var locale: MailLocale
        var name: MailTemplateName
        var part: MailTemplatePart
    }

    /// The product name that signs the messages (`email.product_name`).
    let productName: String
    /// The locales a request may be answered in: the compiled-in ones and the directory's.
    let locales: Set<MailLocale>
    /// Every part of every message in every locale, the fallbacks resolved.
    private let templates: [Key: MailTemplate]

    /// The compiled-in messages and those of `directory`.
    ///
    /// - Throws: ``ConfigurationError`` with one problem per refused file, each naming
    ///   `email.templates_dir` and the file: a file or folder that is not a template or a locale,
    ///   a file over 64 KiB or not UTF-8, a template that does not parse or lacks `{{code}}` or
    ///   `{{link}}` (``MailTemplate``).
    init(productName: String, directory: String?) throws(ConfigurationError) {
        var problems: [String] = []
        var compiled: [Key: MailTemplate] = [:]
        for (locale, names) in MailTemplates.sources {
            for (name, parts) in names {
                for (part, source) in parts {
                    do throws(MailTemplateError) {
                        compiled[Key(locale: locale, name: name, part: part)] = try MailTemplate(source, name: name, part: part)
                    } catch {
                        problems.append("compiled-in template \(locale)/\(name.rawValue).\(part.rawValue): \(error.reason)")
                    }
                }
            }
        }
        let overrides = directory.map { Self.read($0, problems: &problems) } ?? [:]
        if productName.unicodeScalars.contains(where: MailTemplate.isControl) {
            problems.append("email.product_name: must be 1 to 100 bytes on one line")
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }

        let locales = Set(compiled.keys.map(\.locale)).union(overrides.keys.map(\.locale))
        var templates: [Key: MailTemplate] = [:]
        for locale in locales {
            let chain = [locale] + locale.fallbacks + [.english]
            for name in MailTemplateName.allCases {
                for part in MailTemplatePart.allCases {
                    let keys = chain.map { Key(locale: $0, name: name, part: part) }
                    templates[Key(locale: locale, name: name, part: part)] = keys.lazy.compactMap { overrides[$0] ?? compiled[$0] }.first
                }
            }
        }
        self.productName = productName
        self.locales = locales
        self.templates = templates
    }

    /// The locale to write in for a request's `Accept-Language` (``AcceptLanguage``): English
    /// unless it asks for one of ``locales``.
    func locale(accepting header: String?) -> MailLocale {
        AcceptLanguage(header).choose(from: locales, fallback: .english)
    }

    /// The message that carries a flow's link and code, in `locale`.
    func message(for purpose: EmailPurpose, locale: MailLocale, to address: String, link: String, code: String, minutes: Int) -> MailMessage {
        let values = MailValues(code: code, link: link, productName: productName, minutes: String(minutes))
        return render(MailTemplateName(purpose), locale: locale, to: address, values: values, purpose: purpose.rawValue)
    }

    /// The notice to the old address when an account's email changed, in `locale`: no link,
    /// nothing to do.
    func changeNotice(locale: MailLocale, to address: String) -> MailMessage {
        render(.changeNotice, locale: locale, to: address, values: MailValues(productName: productName), purpose: "change_notice")
    }

    /// The part of a message in `locale`, after its fallbacks (the compiled-in English at last).
    func template(_ name: MailTemplateName, _ part: MailTemplatePart, locale: MailLocale) -> MailTemplate {
        // Every key of ``locales`` is resolved and English is compiled in, so the lookup finds one.
        templates[Key(locale: locale, name: name, part: part)] ?? templates[Key(locale: .english, name: name, part: part)]!
    }

    private func render(_ name: MailTemplateName, locale: MailLocale, to address: String, values: MailValues, purpose: String) -> MailMessage {
        MailMessage(
            to: address, subject: template(name, .subject, locale: locale).render(values), text: template(name, .text, locale: locale).render(values),
            html: template(name, .html, locale: locale).render(values), purpose: purpose)
    }

    // MARK: Reading the directory

    /// The templates of `directory`, by locale; what cannot be used is added to `problems`.
    /// Names starting with a dot (`.git`, an editor's swap file) are passed over.
    private static func read(_ directory: String, problems: inout [String]) -> [Key: MailTemplate] {
        guard kind(of: directory) == .directory, let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            problems.append("\(setting): \(directory) is not a directory that can be read")
            return [:]
        }
        var templates: [Key: MailTemplate] = [:]
        var seen: [MailLocale: String] = [:]
        for entry in entries.sorted() where !entry.hasPrefix(".") {
            let folder = directory.hasSuffix("/") ? directory + entry : directory + "/" + entry
            guard let locale = MailLocale(entry), kind(of: folder) == .directory else {
                problems.append("\(setting): \(folder) is not a locale folder, named by a language tag such as en or fr-CA")
                continue
            }
            if let other = seen[locale] {
                problems.append("\(setting): \(folder) is the same locale as \(other)")
                continue
            }
            seen[locale] = folder
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                problems.append("\(setting): \(folder) cannot be read")
                continue
            }
            for file in files.sorted() where !file.hasPrefix(".") {
                let path = folder + "/" + file
                let parts = file.split(separator: ".", omittingEmptySubsequences: false)
                guard parts.count == 2, let name = MailTemplateName(rawValue: String(parts[0])), let part = MailTemplatePart(rawValue: String(parts[1]))
                else {
                    problems.append(
                        "\(setting): \(path) is not a template: the files are verify, reset, sign-in, change and change-notice, "
                            + "each .subject, .txt or .html")
                    continue
                }
                do throws(MailTemplateError) {
                    templates[Key(locale: locale, name: name, part: part)] = try MailTemplate(try contents(of: path), name: name, part: part)
                } catch {
                    problems.append("\(setting): \(path): \(error.reason)")
                }
            }
        }
        return templates
    }

    private enum Kind { case directory, file, other }

    /// What is at `path`, following links.
    private static func kind(of path: String) -> Kind {
        var status = stat()
        guard stat(path, &status) == 0 else { return .other }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .file
        default: return .other
        }
    }

    /// The text of the file at `path`: a regular file (a link to one is followed) of at most
    /// ``maxFileSize`` bytes of UTF-8. Reads no more than that, whatever the file claims.
    static func contents(of path: String) throws(MailTemplateError) -> String {
        // O_NONBLOCK: opening a FIFO does not wait for a writer; it is refused below.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw MailTemplateError(reason: "cannot be read (\(String(cString: strerror(errno))))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw MailTemplateError(reason: "is not a regular file") }
        guard status.st_size <= maxFileSize else { throw MailTemplateError(reason: "is larger than 64 KiB") }
        var bytes = [UInt8](repeating: 0, count: maxFileSize + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw MailTemplateError(reason: "cannot be read (\(String(cString: strerror(errno))))") }
            if got == 0 { break }
            count += got
        }
        guard count <= maxFileSize else { throw MailTemplateError(reason: "is larger than 64 KiB") }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else { throw MailTemplateError(reason: "is not UTF-8") }
        return text
    }
}
