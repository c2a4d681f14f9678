import CNCurses
import FatchatCore
import Foundation

/// The ncurses backend: sets the terminal up, reads keys, and copies a ``Screen`` to it.
///
/// Use it from one thread only. It puts the terminal in raw mode (Ctrl-C, Ctrl-Q and Ctrl-S
/// reach the app), turns bracketed paste on, and restores everything in ``close()``,
/// which `deinit` calls too; on a crash, ``CrashRestore`` restores what it can.
public final class CursesTerminal {
    /// Whether colours are drawn: the terminal has them and `NO_COLOR` is unset.
    public let usesColor: Bool
    private var screenPointer: OpaquePointer?
    private var window: UnsafeMutablePointer<WINDOW>?
    private var drawn: Screen?
    private var colorPairs: [ColorKey: Int16] = [:]
    private var closed = false

    private struct ColorKey: Hashable {
        var foreground: Int16
        var background: Int16
    }

    private static let bracketedPasteOn = "\u{1B}[?2004h"
    private static let bracketedPasteOff = "\u{1B}[?2004l"

    /// Turns the terminal's mouse reporting off (every mode curses may have asked for), for a crash.
    private static let mouseReportingOff = "\u{1B}[?1006l\u{1B}[?1002l\u{1B}[?1000l"

    /// Opens the terminal named by `TERM` on standard input and output; `mouse` asks for the wheel and clicks.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, mouse: Bool = false) throws {
        setlocale(LC_ALL, "")
        guard isatty(0) == 1, isatty(1) == 1 else { throw TerminalError.notATerminal }
        guard let type = environment["TERM"], !type.isEmpty else { throw TerminalError.noTerminalType }
        CrashRestore.saveModes()
        // newterm, unlike initscr, returns NULL for an unknown TERM instead of exiting.
        guard let screen = newterm(type, fatchat_stdout(), fatchat_stdin()) else {
            throw TerminalError.unknownTerminalType(type)
        }
        screenPointer = screen
        _ = set_term(screen)
        window = fatchat_stdscr()
        let wantsColor = (environment["NO_COLOR"] ?? "").isEmpty
        if wantsColor, has_colors() {
            start_color()
            _ = use_default_colors()
            usesColor = true
        } else {
            usesColor = false
        }
        raw()
        noecho()
        nonl()
        _ = keypad(window, true)
        _ = meta(window, true)
        wtimeout(window, 0)
        _ = set_escdelay(25)
        // Mouse reporting and bracketed paste are separate modes: a paste still arrives as one piece.
        let mouseOn = mouse && fatchat_mouse_on() != 0
        writeRaw(Self.bracketedPasteOn)
        CrashRestore.arm(extra: Self.bracketedPasteOff + (mouseOn ? Self.mouseReportingOff : ""))
    }

    deinit { close() }

    /// The terminal's size in cells.
    public var size: (width: Int, height: Int) {
        guard let window else { return (0, 0) }
        return (Int(getmaxx(window)), Int(getmaxy(window)))
    }

    /// Everything the terminal has sent so far, without waiting.
    public func readAvailable() -> [RawInput] {
        guard let window else { return [] }
        var inputs: [RawInput] = []
        var value: wint_t = 0
        while true {
            let result = wget_wch(window, &value)
            if result == KEY_CODE_YES, Int32(truncatingIfNeeded: value) == fatchat_key_mouse() {
                var row: Int32 = 0
                var column: Int32 = 0
                let actions: [Int32: MouseEvent.Action] = [1: .wheelUp, 2: .wheelDown, 3: .press]
                if let action = actions[fatchat_read_mouse(&row, &column)] {
                    inputs.append(.mouse(MouseEvent(action, row: Int(row), column: Int(column))))
                }
            } else if result == KEY_CODE_YES {
                inputs.append(.keyCode(Int32(truncatingIfNeeded: value)))
            } else if result == OK {
                inputs.append(.character(UInt32(truncatingIfNeeded: value)))
            } else {
                break
            }
        }
        return inputs
    }

    /// Copies `screen` to the terminal, redrawing only rows that changed since the last frame.
    public func draw(_ screen: Screen) {
        guard let window else { return }
        let previous = drawn.flatMap { $0.width == screen.width && $0.height == screen.height ? $0 : nil }
        if previous == nil { _ = werase(window) }
        for row in 0..<screen.height where previous.map({ !screen.rowEquals(row, in: $0) }) ?? true {
            for column in 0..<screen.width {
                guard let cell = screen.cell(row: row, column: column), !cell.isContinuation else { continue }
                let isWide = screen.cell(row: row, column: column + 1)?.isContinuation == true
                put(cell, width: isWide ? 2 : 1, row: row, column: column, window: window)
            }
        }
        if let cursor = screen.cursor {
            _ = curs_set(1)
            _ = wmove(window, Int32(cursor.row), Int32(cursor.column))
        } else {
            _ = curs_set(0)
        }
        _ = wnoutrefresh(window)
        _ = doupdate()
        drawn = screen
    }

    /// Forgets the last frame, so the next ``draw(_:)`` repaints everything (after a resize).
    public func invalidate() {
        drawn = nil
        if let window { _ = clearok(window, true) }
    }

    /// Asks the terminal for its size and, if curses still has another one, resizes to it;
    /// returns whether it did.
    ///
    /// SIGWINCH is the first way a resize arrives; this is the second, for the one
    /// a loaded machine can still lose between the kernel, tmux and curses (a frame
    /// drawn at an old size would otherwise stay until the next key).
    public func followTerminalSize() -> Bool {
        guard let window else { return false }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else { return false }
        guard Int32(size.ws_row) != getmaxy(window) || Int32(size.ws_col) != getmaxx(window) else { return false }
        _ = resizeterm(Int32(size.ws_row), Int32(size.ws_col))
        invalidate()
        return true
    }

    /// Rings the terminal bell.
    public func bell() { _ = beep() }

    /// Characters of a desktop notification's title or body that are sent; the rest is cut.
    static let notificationCharacters = 256

    /// Sends a desktop notification (OSC 777 and OSC 9) with sanitized, bounded text.
    public func notify(title: String, body: String) {
        let clean = { (s: String) in
            Sanitizer.inert(String(s.prefix(Self.notificationCharacters))).replacingOccurrences(of: ";", with: ",")
        }
        writeRaw("\u{1B}]777;notify;\(clean(title));\(clean(body))\u{07}\u{1B}]9;\(clean(body))\u{07}")
    }

    /// Restores the terminal: bracketed paste off, `endwin`. Safe to call more than once.
    public func close() {
        guard !closed else { return }
        closed = true
        CrashRestore.disarm()
        fatchat_mouse_off()
        writeRaw(Self.bracketedPasteOff)
        _ = endwin()
        if let screenPointer { delscreen(screenPointer) }
        screenPointer = nil
        window = nil
    }

    /// Draws one cell of the grid. The grid already holds what the terminal keeps in a cell
    /// (one spacing code point, then zero-width ones) at glibc's widths; the running C
    /// library is asked again in case it is another version than the table's.
    private func put(_ cell: Cell, width ours: Int, row: Int, column: Int, window: UnsafeMutablePointer<WINDOW>) {
        let scalars = cell.grapheme.unicodeScalars.map(\.value)
        let base = scalars.first ?? 0x20
        let theirs = fatchat_wcwidth(base)
        if theirs == ours || base < 0x80 {
            drawCell(scalars, row: row, column: column, style: cell.style, window: window)
        } else if theirs == 1 {
            // A narrower character than the table says: draw it and pad, so columns still agree.
            drawCell(scalars, row: row, column: column, style: cell.style, window: window)
            drawCell([0x20], row: row, column: column + 1, style: cell.style, window: window)
        } else {
            // Unknown here, or wider than its cell: a replacement character keeps the columns.
            drawCell([0xFFFD], row: row, column: column, style: cell.style, window: window)
            if ours == 2 { drawCell([0x20], row: row, column: column + 1, style: cell.style, window: window) }
        }
    }

    private func drawCell(_ scalars: [UInt32], row: Int, column: Int, style: Style, window: UnsafeMutablePointer<WINDOW>) {
        let attributes = attributes(for: style)
        let pair = colorPair(for: style)
        scalars.withUnsafeBufferPointer { buffer in
            _ = fatchat_put_cell(window, Int32(row), Int32(column), buffer.baseAddress, Int32(buffer.count), attributes, pair)
        }
    }

    private func attributes(for style: Style) -> attr_t {
        var result = fatchat_a_normal()
        if style.attributes.contains(.bold) { result |= fatchat_a_bold() }
        if style.attributes.contains(.reverse) { result |= fatchat_a_reverse() }
        if style.attributes.contains(.underline) { result |= fatchat_a_underline() }
        if style.attributes.contains(.dim) { result |= fatchat_a_dim() }
        return result
    }

    /// The colour pair for a style's colours, made on first use; 0 (default) without colour.
    private func colorPair(for style: Style) -> Int16 {
        guard usesColor, style.foreground != nil || style.background != nil else { return 0 }
        let colors = Int16(clamping: fatchat_colors())
        func index(_ value: UInt8?) -> Int16 {
            guard let value else { return -1 }
            let v = Int16(value)
            if v < colors { return v }
            return v >= 8 && v < 16 ? v - 8 : -1    // bright colours on an 8-colour terminal
        }
        let key = ColorKey(foreground: index(style.foreground), background: index(style.background))
        if let pair = colorPairs[key] { return pair }
        let next = Int16(colorPairs.count + 1)
        guard Int32(next) < fatchat_color_pairs() else { return 0 }
        _ = init_pair(next, key.foreground, key.background)
        colorPairs[key] = next
        return next
    }

    private func writeRaw(_ text: String) {
        _ = fflush(fatchat_stdout())
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeMutableBufferPointer { write(1, $0.baseAddress, $0.count) }
            if written <= 0 { break }
            offset += written
        }
        bytes.removeAll()
    }
}
