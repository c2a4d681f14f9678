/// How a cell is drawn: colour indices and attributes, independent of any terminal.
public struct Style: Hashable, Sendable {
    /// Foreground colour index (0–255 in xterm's palette), or nil for the terminal's default.
    public var foreground: UInt8?
    /// Background colour index, or nil for the terminal's default.
    public var background: UInt8?
    /// Text attributes such as bold or reverse video.
    public var attributes: Attributes

    /// Creates a style; the default is the terminal's plain text.
    public init(foreground: UInt8? = nil, background: UInt8? = nil, attributes: Attributes = []) {
        self.foreground = foreground
        self.background = background
        self.attributes = attributes
    }

    /// Plain text in the terminal's default colours.
    public static let plain = Style()

    /// Text attributes that work with or without colour.
    public struct Attributes: OptionSet, Hashable, Sendable {
        /// The bit pattern.
        public let rawValue: UInt8
        /// Creates attributes from bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Bold (or bright) text.
        public static let bold = Attributes(rawValue: 1 << 0)
        /// Foreground and background swapped.
        public static let reverse = Attributes(rawValue: 1 << 1)
        /// Underlined text.
        public static let underline = Attributes(rawValue: 1 << 2)
        /// Dim (faint) text.
        public static let dim = Attributes(rawValue: 1 << 3)
    }

    /// This style with `extra` attributes added.
    public func adding(_ extra: Attributes) -> Style {
        var copy = self
        copy.attributes.formUnion(extra)
        return copy
    }

    /// This style without any colour, for `NO_COLOR`: attributes are kept.
    public var withoutColor: Style { Style(attributes: attributes) }
}
