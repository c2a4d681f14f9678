extension Style {
    /// The sixteen colours with names, as xterm numbers them.
    static let colorNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// Reads a style written as words, as a configuration file gives it: attributes
    /// (`bold`, `dim`, `underline`, `reverse`), a foreground colour, and `on` before a
    /// background colour. A colour is a name (`yellow`, `bright-blue`), or 0–255 from
    /// xterm's palette. `plain` is no colour and no attribute. `"bold yellow on 236"`.
    public init(words text: String) throws(InvalidSetting) {
        var style = Style()
        var words = text.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }[...]
        guard !words.isEmpty else { throw InvalidSetting("give a style: attributes and colours, or plain") }
        while let word = words.popFirst() {
            switch word {
            case "plain": continue
            case "bold": style.attributes.insert(.bold)
            case "dim": style.attributes.insert(.dim)
            case "underline": style.attributes.insert(.underline)
            case "reverse": style.attributes.insert(.reverse)
            case "on":
                guard let color = words.popFirst() else { throw InvalidSetting("'on' needs a background colour after it") }
                style.background = try Self.color(named: color)
            default:
                guard style.foreground == nil else {
                    throw InvalidSetting("'\(word)' is a second foreground colour; put 'on' before a background colour")
                }
                style.foreground = try Self.color(named: word)
            }
        }
        self = style
    }

    /// The words that ``init(words:)`` reads back as this style.
    public var words: String {
        var words: [String] = []
        for (attribute, word) in [(Attributes.bold, "bold"), (.dim, "dim"), (.underline, "underline"), (.reverse, "reverse")]
        where attributes.contains(attribute) {
            words.append(word)
        }
        if let foreground { words.append(Self.name(of: foreground)) }
        if let background { words += ["on", Self.name(of: background)] }
        return words.isEmpty ? "plain" : words.joined(separator: " ")
    }

    private static func color(named word: String) throws(InvalidSetting) -> UInt8 {
        if let number = UInt8(word) { return number }
        if let index = colorNames.firstIndex(of: word) { return UInt8(index) }
        if word.hasPrefix("bright-"), let index = colorNames.firstIndex(of: String(word.dropFirst("bright-".count))) { return UInt8(index + 8) }
        throw InvalidSetting("'\(word)' is not a colour: use a name such as yellow or bright-blue, or 0–255")
    }

    private static func name(of color: UInt8) -> String {
        switch color {
        case 0..<8: colorNames[Int(color)]
        case 8..<16: "bright-" + colorNames[Int(color) - 8]
        default: String(color)
        }
    }
}
