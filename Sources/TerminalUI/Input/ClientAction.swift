/// A client-level action bound to a key, for keys the line editor does not take.
public enum ClientAction: Hashable, Sendable {
    /// Go to the n-th entry of the list (1-based; channels, then `@user` conversations), Alt-1…Alt-9.
    case selectChannel(Int)
    /// Ctrl-N.
    case nextChannel
    /// Ctrl-P.
    case previousChannel
    /// Alt-A: the next channel or conversation with unread messages, mentions (and direct messages) first.
    case nextActiveChannel
    /// Alt-R: the message that the newest reply on screen answers, loading history if needed.
    case jumpToReplyParent
    /// Alt-U: the "new messages" line, where I left off.
    case jumpToUnread
    /// PgUp.
    case pageUp
    /// PgDn.
    case pageDown
    /// Home on an empty input line: the oldest message.
    case scrollToOldest
    /// End on an empty input line: back to the newest message.
    case scrollToNewest
    /// F1: open or close the help overlay.
    case toggleHelp
    /// Esc: close overlays.
    case dismiss
    /// F2 or Alt-M: show or hide the member list.
    case toggleMemberList
    /// Ctrl-L: repaint the whole screen.
    case redraw
    /// The terminal changed size.
    case resize
    /// Ctrl-C or Ctrl-Q: leave.
    case quit

    /// The keys each action takes unless a configuration file binds it to others.
    ///
    /// Alt-1…Alt-9, Home and End on an empty line, Esc and a resize are not in this table:
    /// they cannot be bound to anything else (see ``forKey(_:inputIsEmpty:)``).
    public static let defaultKeys: [(action: ClientAction, keys: [Key])] = [
        (.nextChannel, [.control("n")]),
        (.previousChannel, [.control("p")]),
        (.nextActiveChannel, [.alt("a")]),
        (.jumpToReplyParent, [.alt("r")]),
        (.jumpToUnread, [.alt("u")]),
        (.pageUp, [.pageUp]),
        (.pageDown, [.pageDown]),
        (.toggleHelp, [.function(1)]),
        (.toggleMemberList, [.function(2), .alt("m")]),
        (.redraw, [.control("l")]),
        (.quit, [.control("c"), .control("q")]),
    ]

    /// The action for a key under the default bindings, or nil when the key belongs to the line editor.
    ///
    /// Home and End scroll the messages only while the input line is empty; otherwise they
    /// move the cursor. Ctrl-S is taken here (and ignored) so that it never freezes output.
    public static func forKey(_ key: Key, inputIsEmpty: Bool) -> ClientAction? {
        KeyBindings.defaults.action(for: key, inputIsEmpty: inputIsEmpty)
    }

    /// The actions no binding can move: the channel digits, Home and End on an empty line, Esc, a resize.
    static func fixedAction(for key: Key, inputIsEmpty: Bool) -> ClientAction? {
        switch key {
        case .alt(let c):
            if let digit = c.wholeNumberValue, (1...9).contains(digit) { return .selectChannel(digit) }
            return nil
        case .home where inputIsEmpty: return .scrollToOldest
        case .end where inputIsEmpty: return .scrollToNewest
        case .escape: return .dismiss
        case .resize: return .resize
        default: return nil
        }
    }
}
