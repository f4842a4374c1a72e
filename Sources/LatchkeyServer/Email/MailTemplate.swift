import LatchkeyBasics

/// Which message a template writes: one per email flow, and the notice to the old address after
/// a change. The raw value is the file name in `email.templates_dir`.
enum MailTemplateName: String, CaseIterable, Sendable, Hashable {
    case verify
    case reset
    case signIn = "sign-in"
    case change
    case changeNotice = "change-notice"

    /// The template of a flow's message.
    init(_ purpose: EmailPurpose) {
        switch purpose {
        case .verify: self = .verify
        case .reset: self = .reset
        case .signIn: self = .signIn
        case .change: self = .change
        }
    }

    /// Whether the message carries a flow's link and code (the notice carries neither).
    var isFlow: Bool { self != .changeNotice }
}

/// The three parts of a message, each a file: `{name}.subject`, `{name}.txt`, `{name}.html`.
enum MailTemplatePart: String, CaseIterable, Sendable, Hashable {
    case subject
    case text = "txt"
    case html
}

/// What a template may say `{{…}}` for.
enum MailPlaceholder: String, CaseIterable, Sendable, Hashable {
    /// The 6-digit code.
    case code
    /// The link, `{public_url}/email/{purpose}?token=T`.
    case link
    /// `email.product_name`.
    case productName = "product_name"
    /// How long the code and the link last, in whole minutes.
    case minutes

    /// What the `part` of the `name` template may hold: a subject only the product name and
    /// the minutes (it is one header line, shown before the message is opened); the notice no
    /// code and no link (it has none).
    static func allowed(in name: MailTemplateName, _ part: MailTemplatePart) -> Set<MailPlaceholder> {
        guard name.isFlow else { return [.productName] }
        return part == .subject ? [.productName, .minutes] : Set(allCases)
    }

    /// What the `part` of the `name` template must hold: a flow's text and HTML both offer the
    /// code and the link, since the mail is read on another device as often as on the phone.
    static func required(in name: MailTemplateName, _ part: MailTemplatePart) -> Set<MailPlaceholder> {
        name.isFlow && part != .subject ? [.code, .link] : []
    }
}

/// The values a template is filled in with.
struct MailValues: Sendable, Hashable {
    var code = ""
    var link = ""
    var productName: String
    var minutes = ""

    subscript(placeholder: MailPlaceholder) -> String {
        switch placeholder {
        case .code: code
        case .link: link
        case .productName: productName
        case .minutes: minutes
        }
    }
}

/// Why a template was refused, in words for the operator.
struct MailTemplateError: Error, Sendable, Hashable {
    var reason: String
}

/// One part of one message in one language: text with `{{placeholder}}`s, checked when it is
/// read (the start-up of the server, for a file of `email.templates_dir`) so that rendering
/// cannot fail.
///
/// The format is small and strict: `{{` opens a placeholder, which is a known name and `}}`
/// with no space; anything else after `{{` is refused, as is a placeholder this part may not
/// use. A subject is one line (one final line break is dropped) with no control character. A
/// text or HTML body may hold tabs and line breaks (CRLF and CR read as LF) and no other
/// control character, and a flow's bodies must hold `{{code}}` and `{{link}}`.
struct MailTemplate: Sendable, Hashable {
    /// A piece of the template: literal text, or a value to put in.
    enum Piece: Sendable, Hashable {
        case literal(String)
        case value(MailPlaceholder)
    }

    let part: MailTemplatePart
    let pieces: [Piece]

    /// Parses and checks `source`, the `part` of the `name` template.
    ///
    /// - Throws: ``MailTemplateError`` saying what is wrong.
    init(_ source: String, name: MailTemplateName, part: MailTemplatePart) throws(MailTemplateError) {
        var text = source.hasPrefix("\u{FEFF}") ? String(source.dropFirst()) : source
        text = text.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
        if part == .subject {
            if text.hasSuffix("\n") { text.removeLast() }
            if text.contains("\n") { throw MailTemplateError(reason: "a subject is one line") }
            if text.unicodeScalars.contains(where: Self.isControl) { throw MailTemplateError(reason: "a subject may not hold a control character") }
        } else if let bad = text.unicodeScalars.first(where: { Self.isControl($0) && $0 != "\n" && $0 != "\t" }) {
            throw MailTemplateError(reason: "holds the control character U+\(String(bad.value, radix: 16, uppercase: true))")
        }
        guard !text.trimmingWhitespace().isEmpty else { throw MailTemplateError(reason: "is empty") }

        let allowed = MailPlaceholder.allowed(in: name, part)
        var pieces: [Piece] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{") {
            if open.lowerBound > rest.startIndex { pieces.append(.literal(String(rest[..<open.lowerBound]))) }
            let after = rest[open.upperBound...]
            let name = after.prefix { $0 == "_" || ("a"..."z").contains($0) }
            guard !name.isEmpty, name.count <= 32, after[name.endIndex...].hasPrefix("}}") else {
                throw MailTemplateError(reason: "{{ must open a placeholder such as {{product_name}}, and nothing else")
            }
            guard let placeholder = MailPlaceholder(rawValue: String(name)), allowed.contains(placeholder) else {
                throw MailTemplateError(reason: "unknown placeholder {{\(name)}}; this part may use \(Self.list(allowed))")
            }
            pieces.append(.value(placeholder))
            rest = after[after.index(name.endIndex, offsetBy: 2)...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }

        let used = Set(pieces.compactMap { if case .value(let placeholder) = $0 { placeholder } else { nil } })
        let missing = MailPlaceholder.required(in: name, part).subtracting(used)
        guard missing.isEmpty else { throw MailTemplateError(reason: "must hold \(Self.list(missing))") }
        self.part = part
        self.pieces = pieces
    }

    /// The template filled in with `values`: in HTML each value escaped (the one place mail
    /// escapes), in text as it is. A subject stays one line whatever the values hold: a control
    /// character becomes a space (the values are checked at start, so this is a second fence).
    func render(_ values: MailValues) -> String {
        var result = ""
        for piece in pieces {
            switch piece {
            case .literal(let text): result += text
            case .value(let placeholder): result += part == .html ? HTMLEscaping.escape(values[placeholder]) : values[placeholder]
            }
        }
        guard part == .subject, result.unicodeScalars.contains(where: Self.isControl) else { return result }
        return String(String.UnicodeScalarView(result.unicodeScalars.map { Self.isControl($0) ? " " : $0 }))
    }

    /// A control character (Unicode's Cc: C0, DEL, C1) or a line or paragraph separator.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    private static func list(_ placeholders: Set<MailPlaceholder>) -> String {
        MailPlaceholder.allCases.filter(placeholders.contains).map { "{{\($0.rawValue)}}" }.joined(separator: ", ")
    }
}
