/// Text with `{name}` placeholders (a payment provider's link, a notification's catalog entry).
enum Template {
    /// `template` with each `{name}` replaced by its value, in one pass (a value holding
    /// `{note}` is never filled in again); a placeholder without a value stays as written.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            result += values[String(rest[rest.index(after: open)..<close])] ?? String(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}
