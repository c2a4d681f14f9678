import CNCurses

/// Turns a stream of ``RawInput`` into ``InputEvent``s: Esc-prefixed Alt keys, control
/// characters, curses key codes, and bracketed paste (`ESC [200~ … ESC [201~`).
///
/// Feed everything that is available with ``decode(_:)``, then call ``flush()`` when the
/// terminal has nothing more, so that a lone Esc becomes ``Key/escape``.
public struct KeyDecoder: Sendable {
    private var pending: [UInt32] = []      // an escape sequence in progress
    private var paste: [UInt32]?            // text of a paste in progress
    private static let pasteStart: [UInt32] = Array("\u{1B}[200~".unicodeScalars.map(\.value))
    private static let pasteEnd: [UInt32] = Array("\u{1B}[201~".unicodeScalars.map(\.value))

    /// Creates a decoder with nothing pending.
    public init() {}

    /// True while inside a bracketed paste.
    public var isInPaste: Bool { paste != nil }

    /// Decodes a batch of raw input and then flushes, for one read of everything available.
    public mutating func decodeAll(_ inputs: [RawInput]) -> [InputEvent] {
        var events: [InputEvent] = []
        for input in inputs { events += decode(input) }
        return events + flush()
    }

    /// Decodes one raw input; may return nothing while a sequence is incomplete.
    public mutating func decode(_ input: RawInput) -> [InputEvent] {
        switch input {
        case .keyCode(let code):
            if paste != nil { return [] }   // keys inside a paste are not text
            var events = flushPending()
            events.append(.key(Self.key(forCode: code)))
            return events
        case .character(let value):
            return decodeCharacter(value)
        case .mouse(let event):
            if paste != nil { return [] }
            return flushPending() + [.mouse(event)]
        }
    }

    /// Ends an incomplete Esc sequence: a lone Esc becomes a key. A paste stays open.
    public mutating func flush() -> [InputEvent] {
        guard paste == nil else { return [] }
        return flushPending()
    }

    private mutating func decodeCharacter(_ value: UInt32) -> [InputEvent] {
        if var text = paste {
            text.append(value)
            if text.count >= Self.pasteEnd.count, Array(text.suffix(Self.pasteEnd.count)) == Self.pasteEnd {
                text.removeLast(Self.pasteEnd.count)
                paste = nil
                return [.paste(Self.pasteText(text))]
            }
            paste = text
            return []
        }
        if pending.isEmpty {
            if value == 0x1B { pending = [value]; return [] }
            return [.key(Self.key(forCharacter: value))]
        }
        pending.append(value)
        if pending == Self.pasteStart {
            pending = []
            paste = []
            return []
        }
        if Self.pasteStart.starts(with: pending) { return [] }
        if pending.count == 2 {
            // Esc + one character: Alt, or Esc followed by Esc.
            pending = []
            if value == 0x1B { pending = [value]; return [.key(.escape)] }
            if value == 0x7F || value == 0x08 { return [.key(.altBackspace)] }
            if value == 0x0D || value == 0x0A { return [.key(.altEnter)] }
            if let scalar = Unicode.Scalar(value), value >= 0x20 { return [.key(.alt(Character(scalar)))] }
            return [.key(.escape), .key(Self.key(forCharacter: value))]
        }
        // An Esc sequence that is not a paste marker (curses already decodes known keys):
        // give it back as Alt-[ and the characters that followed, so nothing is lost.
        let chars = pending
        pending = []
        var events: [InputEvent] = [.key(.alt(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: chars[1])))))]
        for c in chars.dropFirst(2) { events += decodeCharacter(c) }
        return events
    }

    private mutating func flushPending() -> [InputEvent] {
        guard !pending.isEmpty else { return [] }
        let chars = pending
        pending = []
        if chars.count == 1 { return [.key(.escape)] }
        var events: [InputEvent] = [.key(.alt(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: chars[1])))))]
        for c in chars.dropFirst(2) { events.append(.key(Self.key(forCharacter: c))) }
        return events
    }

    /// Pasted text with CR and CRLF turned into LF, as terminals send Enter as CR.
    private static func pasteText(_ values: [UInt32]) -> String {
        var scalars = String.UnicodeScalarView()
        var previousCR = false
        for v in values {
            guard let scalar = Unicode.Scalar(v) else { continue }
            if v == 0x0D { scalars.append("\n"); previousCR = true; continue }
            if v == 0x0A, previousCR { previousCR = false; continue }
            previousCR = false
            scalars.append(scalar)
        }
        return String(scalars)
    }

    /// The key for a character that `wget_wch` returned as text.
    static func key(forCharacter value: UInt32) -> Key {
        switch value {
        case 0x0D, 0x0A: return .enter
        case 0x09: return .tab
        case 0x7F, 0x08: return .backspace
        case 0x1B: return .escape
        case 0x00: return .control(" ")
        case 0x01...0x1A: return .control(Character(Unicode.Scalar(UInt8(value + 0x60))))
        case 0x1C...0x1F: return .control(Character(Unicode.Scalar(UInt8(value + 0x40))))
        default:
            guard let scalar = Unicode.Scalar(value) else { return .unknown(Int32(bitPattern: value)) }
            return .character(Character(scalar))
        }
    }

    /// The key for a curses key code (after `KEY_CODE_YES`).
    static func key(forCode code: Int32) -> Key {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_IC: return .insert
        case KEY_DC: return .delete
        case KEY_BACKSPACE: return .backspace
        case KEY_ENTER: return .enter
        case KEY_BTAB: return .backTab
        case KEY_RESIZE: return .resize
        default:
            for n in 1...12 where code == fatchat_key_f(Int32(n)) { return .function(n) }
            return .unknown(code)
        }
    }
}
