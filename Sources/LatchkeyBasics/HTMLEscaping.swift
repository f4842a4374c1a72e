/// Escaping text for HTML, in one place: the hosted pages (LatchkeyHTTP's `HTML`) and the mail
/// templates both call it, so neither the domain imports HTTP nor the two copies drift apart.
package enum HTMLEscaping {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, so that it
    /// reads as text in element content and in quoted attribute values (HTML Living Standard
    /// §13.1.2.3, §13.1.4); every other character is kept.
    ///
    /// It does not make a value safe as a URL (`href="javascript:…"`), inside `<script>` or
    /// `<style>`, or in an unquoted attribute.
    package static func escape(_ text: String) -> String {
        func replacement(_ byte: UInt8) -> StaticString? {
            switch byte {
            case UInt8(ascii: "&"): "&amp;"
            case UInt8(ascii: "<"): "&lt;"
            case UInt8(ascii: ">"): "&gt;"
            case UInt8(ascii: "\""): "&quot;"
            case UInt8(ascii: "'"): "&#39;"
            default: nil
            }
        }
        // Count first, then write the result once, in place: every hosted page escapes a
        // carried request full of `&`.
        let grown = text.utf8.reduce(0) { $0 + (replacement($1).map { $0.utf8CodeUnitCount - 1 } ?? 0) }
        if grown == 0 { return text }
        return String(unsafeUninitializedCapacity: text.utf8.count + grown) { output in
            var index = 0
            for byte in text.utf8 {
                guard let replacement = replacement(byte) else {
                    output[index] = byte
                    index += 1
                    continue
                }
                replacement.withUTF8Buffer { entity in
                    for unit in entity {
                        output[index] = unit
                        index += 1
                    }
                }
            }
            return index
        }
    }
}
