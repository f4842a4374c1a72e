extension Substring {
    /// The text without leading and trailing white space (Unicode's White_Space: spaces, tabs,
    /// line breaks).
    package func trimmingWhitespace() -> Substring {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return Substring(scalars[start...end])
    }
}

extension String {
    /// The text without leading and trailing white space (Unicode's White_Space: spaces, tabs,
    /// line breaks).
    package func trimmingWhitespace() -> Substring { self[...].trimmingWhitespace() }
}
