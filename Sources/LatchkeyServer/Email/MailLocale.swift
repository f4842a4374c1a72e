/// A language the messages are written in: a language tag in RFC 5646's syntax (`en`, `fr`,
/// `pt-br`, `zh-hant`), kept in lowercase, since tags compare without regard to case.
struct MailLocale: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The tag, lowercase.
    let tag: String

    /// The tag `text`, or `nil` when it is not one: a primary subtag of 1 to 8 letters, then
    /// subtags of 1 to 8 letters or digits, each after a hyphen; at most 35 characters.
    init?(_ text: String) {
        guard Self.isTag(text) else { return nil }
        tag = text.lowercased()
    }

    /// English: the default, and the last fallback of every template.
    static let english = MailLocale("en")!
    /// French, the other compiled-in language.
    static let french = MailLocale("fr")!

    var description: String { tag }

    static func < (a: MailLocale, b: MailLocale) -> Bool { a.tag < b.tag }

    /// The shorter tags tried after this one, longest first (RFC 4647 §3.4, Lookup): the last
    /// subtag goes, and a single-character subtag left at the end goes with it, so `zh-hant-cn`
    /// falls back to `zh-hant`, then `zh`; `fr-ca` to `fr`.
    var fallbacks: [MailLocale] {
        var subtags = tag.split(separator: "-")
        var result: [MailLocale] = []
        while subtags.count > 1 {
            subtags.removeLast()
            if subtags.count > 1, subtags.last?.count == 1 { subtags.removeLast() }
            if let shorter = MailLocale(subtags.joined(separator: "-")) { result.append(shorter) }
        }
        return result
    }

    /// Whether `text` has the syntax of a language tag (RFC 4647 §2.1's basic language range,
    /// without the wildcard).
    static func isTag(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 35 else { return false }
        var first = true
        for subtag in bytes.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false) {
            guard (1...8).contains(subtag.count) else { return false }
            let letters = subtag.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) }
            let alphanumerics = subtag.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard first ? letters : alphanumerics else { return false }
            first = false
        }
        return true
    }
}

/// The `Accept-Language` request header (RFC 9110 §12.5.4): language ranges with optional
/// weights, `fr-CA, fr;q=0.8, en;q=0.5, *;q=0.1`.
///
/// Read strictly and within bounds: a header longer than ``maxLength`` is ignored as a whole;
/// only the first ``maxRanges`` elements are looked at; an element that is not a basic language
/// range (RFC 4647 §2.1) or `*`, optionally followed by one `;q=` weight of RFC 9110 §12.4.2's
/// syntax, is left out; nothing else in the header can make the choice fail.
struct AcceptLanguage: Sendable, Hashable {
    /// One language range and its weight.
    struct Range: Sendable, Hashable {
        /// The range, lowercase, or `*`.
        var tag: String
        /// The weight in thousandths: 1000 for `q=1` (or no weight), 0 for "not acceptable".
        var quality: Int
    }

    /// The longest header read, in bytes; a browser sends a few dozen.
    static let maxLength = 1024
    /// The elements read; the rest are ignored.
    static let maxRanges = 32

    /// The well-formed ranges, in the order sent.
    let ranges: [Range]

    /// Parses the header's value (several fields of the header joined with commas); `nil` or
    /// empty when the request had none.
    init(_ header: String?) {
        guard let header, header.utf8.count <= Self.maxLength else {
            ranges = []
            return
        }
        let elements = header.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            .map { Self.trimmed($0) }.filter { !$0.isEmpty }
        ranges = elements.prefix(Self.maxRanges).compactMap(Self.range)
    }

    /// The locale to write in: the first range, by weight (and order among equal weights), that
    /// one of `available` matches, exactly or by its shorter tags (`fr-CA` → `fr`); `*` takes
    /// `fallback`. A range with `q=0` rules out the locales it matches (`en;q=0` rules out `en`
    /// and `en-gb`). When nothing matches, `fallback`, even if ruled out: the message is sent.
    func choose(from available: Set<MailLocale>, fallback: MailLocale) -> MailLocale {
        let excluded = ranges.filter { $0.quality == 0 }.map(\.tag)
        func isExcluded(_ locale: MailLocale) -> Bool {
            excluded.contains { $0 == "*" ? false : locale.tag == $0 || locale.tag.hasPrefix($0 + "-") }
        }
        // A stable sort: among equal weights the header's order decides.
        let wanted = ranges.enumerated().filter { $0.element.quality > 0 }
            .sorted { ($0.element.quality, -$0.offset) > ($1.element.quality, -$1.offset) }.map(\.element)
        for range in wanted {
            if range.tag == "*" {
                if !isExcluded(fallback) { return fallback }
                if let other = available.sorted().first(where: { !isExcluded($0) }) { return other }
                continue
            }
            guard let locale = MailLocale(range.tag) else { continue }
            if let match = ([locale] + locale.fallbacks).first(where: { available.contains($0) && !isExcluded($0) }) { return match }
        }
        return fallback
    }

    /// One element, `range` or `range;q=0.5` (white space allowed around the `;`, nowhere else).
    private static func range(_ element: ArraySlice<UInt8>) -> Range? {
        let parts = element.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let tag = trimmed(parts[0])
        guard tag.allSatisfy({ $0 < 0x80 }) else { return nil }
        let text = String(decoding: tag, as: UTF8.self)
        guard text == "*" || MailLocale.isTag(text) else { return nil }
        var quality = 1000
        if parts.count == 2 {
            let weight = trimmed(parts[1])
            guard weight.count >= 3, weight.first! | 0x20 == UInt8(ascii: "q"), weight[weight.startIndex + 1] == UInt8(ascii: "="),
                let value = qvalue(weight.dropFirst(2))
            else { return nil }
            quality = value
        }
        return Range(tag: text.lowercased(), quality: quality)
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
    private static func qvalue(_ bytes: ArraySlice<UInt8>) -> Int? {
        let digits = Array(bytes)
        guard let whole = digits.first, whole == UInt8(ascii: "0") || whole == UInt8(ascii: "1") else { return nil }
        var fraction: [UInt8] = []
        if digits.count > 1 {
            guard digits[1] == UInt8(ascii: "."), digits.count <= 5 else { return nil }
            fraction = Array(digits[2...])
        }
        guard fraction.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let thousandths = (fraction + Array(repeating: UInt8(ascii: "0"), count: 3 - fraction.count)).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        if whole == UInt8(ascii: "1") { return thousandths == 0 ? 1000 : nil }
        return thousandths
    }

    /// `bytes` without the spaces and tabs around it (RFC 9110's OWS).
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return bytes[start...end]
    }
}
