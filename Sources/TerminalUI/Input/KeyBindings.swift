/// Which key does which client action: the defaults, with whatever a configuration file moved.
///
/// Binding an action to keys takes its default keys away from it, and takes those keys from
/// any action that had them by default. Only keys the line editor can spare may be bound:
/// Ctrl with a letter, Alt with a character other than the channel digits, F1–F12, PgUp,
/// PgDn and Insert. Ctrl-I, Ctrl-M, Ctrl-J and Ctrl-H are refused, as terminals send them as
/// Tab, Enter and Backspace.
public struct KeyBindings: Sendable, Equatable {
    /// The actions that can be bound, by the names a configuration file gives them.
    public static let names: [(name: String, action: ClientAction)] = [
        ("next-channel", .nextChannel),
        ("previous-channel", .previousChannel),
        ("next-active", .nextActiveChannel),
        ("reply-parent", .jumpToReplyParent),
        ("jump-unread", .jumpToUnread),
        ("page-up", .pageUp),
        ("page-down", .pageDown),
        ("help", .toggleHelp),
        ("member-list", .toggleMemberList),
        ("redraw", .redraw),
        ("quit", .quit),
    ]

    /// The bindable keys and their actions.
    private var table: [Key: ClientAction]
    /// Actions bound explicitly, so that two of them cannot claim one key.
    private var bound: [ClientAction: [Key]] = [:]

    /// The bindings with nothing moved.
    public static let defaults = KeyBindings()

    private init() {
        var table: [Key: ClientAction] = [:]
        for (action, keys) in ClientAction.defaultKeys {
            for key in keys { table[key] = action }
        }
        self.table = table
    }

    /// The action for `key`, or nil when the key belongs to the line editor.
    public func action(for key: Key, inputIsEmpty: Bool) -> ClientAction? {
        ClientAction.fixedAction(for: key, inputIsEmpty: inputIsEmpty) ?? table[key]
    }

    /// The keys that do `action` now, in the order they were given.
    public func keys(for action: ClientAction) -> [Key] {
        if let keys = bound[action] { return keys }
        return ClientAction.defaultKeys.first { $0.action == action }?.keys.filter { table[$0] == action } ?? []
    }

    /// Makes `keys` the keys of `action`, and only those.
    public mutating func bind(_ action: ClientAction, to keys: [Key]) throws(InvalidSetting) {
        guard !keys.isEmpty else { throw InvalidSetting( "give at least one key") }
        for key in keys {
            if let other = bound.first(where: { $0.key != action && $0.value.contains(key) })?.key {
                throw InvalidSetting( "\(Self.describe(key)) is already bound to \(Self.name(of: other))")
            }
        }
        for (key, holder) in table where holder == action { table[key] = nil }
        for key in keys { table[key] = action }
        bound[action] = keys
    }

    /// The configuration file's name for `action`.
    public static func name(of action: ClientAction) -> String {
        names.first { $0.action == action }?.name ?? "\(action)"
    }

    /// Reads a key as a configuration file writes it: `ctrl-n`, `alt-x`, `f5`, `pgup`, `pgdn`, `insert`.
    public static func key(named text: String) throws(InvalidSetting) -> Key {
        let lowered = text.lowercased()
        let refused = InvalidSetting( "'\(text)' is not a key that can be bound; use ctrl-LETTER, alt-CHARACTER, f1…f12, pgup, pgdn or insert")
        switch lowered {
        case "pgup", "pageup": return .pageUp
        case "pgdn", "pagedown": return .pageDown
        case "insert": return .insert
        default: break
        }
        if lowered.hasPrefix("ctrl-"), lowered.count == 6, let letter = lowered.last, letter.isASCII, letter.isLetter {
            guard !"imjh".contains(letter) else {
                throw InvalidSetting( "'\(text)' cannot be bound: terminals send it as Tab, Enter or Backspace")
            }
            return .control(letter)
        }
        if lowered.hasPrefix("alt-"), text.count == 5, let character = text.last, !character.isWhitespace {
            guard !(character.wholeNumberValue.map { (1...9).contains($0) } ?? false) else {
                throw InvalidSetting( "'\(text)' cannot be bound: Alt-1…Alt-9 choose channels")
            }
            return .alt(character)
        }
        if lowered.hasPrefix("f"), let number = Int(lowered.dropFirst()), (1...12).contains(number) { return .function(number) }
        throw refused
    }

    /// How a key reads in a configuration file and in `fatchat config --print`.
    public static func describe(_ key: Key) -> String {
        switch key {
        case .control(let c): return "ctrl-\(c)"
        case .alt(let c): return "alt-\(c)"
        case .function(let n): return "f\(n)"
        case .pageUp: return "pgup"
        case .pageDown: return "pgdn"
        case .insert: return "insert"
        default: return "\(key)"
        }
    }
}

/// Why a key, a style or another setting a person wrote was refused; the configuration file adds where.
public struct InvalidSetting: Error, Equatable, CustomStringConvertible {
    /// What the person reads.
    public let description: String

    /// Refuses a setting, saying why.
    public init(_ description: String) { self.description = description }
}
