/// One key press, after decoding terminal input.
public enum Key: Hashable, Sendable {
    /// A printable grapheme (or one scalar of it; the editor joins clusters).
    case character(Character)
    /// Ctrl with a letter or symbol, as lowercase: `.control("a")` is Ctrl-A.
    case control(Character)
    /// Alt (Meta) with a character, sent by terminals as an Esc prefix.
    case alt(Character)
    /// Enter or Return.
    case enter
    /// Alt-Enter (Esc then Return): a new line in the draft.
    case altEnter
    /// Tab.
    case tab
    /// Shift-Tab.
    case backTab
    /// Backspace (DEL, BS or the terminal's backspace key).
    case backspace
    /// Alt-Backspace, which deletes a word.
    case altBackspace
    /// Forward delete.
    case delete
    /// Esc on its own.
    case escape
    /// Arrow up.
    case up
    /// Arrow down.
    case down
    /// Arrow left.
    case left
    /// Arrow right.
    case right
    /// Home.
    case home
    /// End.
    case end
    /// Page up.
    case pageUp
    /// Page down.
    case pageDown
    /// Insert.
    case insert
    /// Function key F1…F12.
    case function(Int)
    /// The terminal was resized.
    case resize
    /// A key code the decoder does not know.
    case unknown(Int32)
}

/// What the input side delivers to the client: keys, and pasted text as one piece.
public enum InputEvent: Hashable, Sendable {
    /// A key press.
    case key(Key)
    /// Text from a bracketed paste, newlines kept, sent as one message.
    case paste(String)
    /// The mouse's wheel or first button (unless `--no-mouse`).
    case mouse(MouseEvent)
}

/// What the mouse did, and at which cell (0-based row and column).
public struct MouseEvent: Hashable, Sendable {
    public enum Action: Hashable, Sendable {
        case wheelUp, wheelDown, press
    }
    public var action: Action
    public var row: Int
    public var column: Int

    public init(_ action: Action, row: Int, column: Int) {
        (self.action, self.row, self.column) = (action, row, column)
    }
}

/// One result of ncurses' `wget_wch`: a character, or a key code when it returned `KEY_CODE_YES`.
public enum RawInput: Hashable, Sendable {
    /// A Unicode scalar value (control characters included).
    case character(UInt32)
    /// A curses key code such as `KEY_UP`.
    case keyCode(Int32)
    /// A mouse event, read with `getmouse` when curses returned `KEY_MOUSE`.
    case mouse(MouseEvent)
}
