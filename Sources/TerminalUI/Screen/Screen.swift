import FatchatCore

/// An in-memory grid of cells that views draw into; a backend copies it to a real terminal.
///
/// Every write goes through ``Sanitizer`` and ``DisplayWidth``, so nothing in the grid can
/// move a terminal's cursor, each cell holds what a terminal would put in it, and a wide
/// character is never split at a clip edge.
public struct Screen: Equatable, Sendable {
    /// Number of columns.
    public let width: Int
    /// Number of rows.
    public let height: Int
    /// Cells in row-major order.
    public private(set) var cells: [Cell]
    /// Where the terminal cursor should be left, or nil to hide it.
    public var cursor: (row: Int, column: Int)? {
        get { cursorPosition.map { ($0.row, $0.column) } }
        set { cursorPosition = newValue.map { Position(row: $0.row, column: $0.column) } }
    }
    private var cursorPosition: Position?

    private struct Position: Equatable, Sendable {
        var row: Int
        var column: Int
    }

    /// Creates a blank screen; negative sizes become zero.
    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        self.cells = Array(repeating: .blank(), count: self.width * self.height)
    }

    /// The cell at a position, or nil outside the grid.
    public func cell(row: Int, column: Int) -> Cell? {
        guard contains(row: row, column: column) else { return nil }
        return cells[row * width + column]
    }

    /// The text of one row with trailing blanks removed; continuation cells add nothing.
    public func text(row: Int) -> String {
        guard row >= 0, row < height else { return "" }
        var line = ""
        for column in 0..<width {
            let cell = cells[row * width + column]
            if !cell.isContinuation { line.append(cell.grapheme) }
        }
        while line.last == " " { line.removeLast() }
        return line
    }

    /// Every row's text, top to bottom, for assertions.
    public var lines: [String] { (0..<height).map { text(row: $0) } }

    /// Sets every cell of a rectangle to a blank in `style`.
    public mutating func fill(row: Int, column: Int, width fillWidth: Int, height fillHeight: Int, style: Style = .plain) {
        let rows = max(0, row)..<max(max(0, row), min(height, row + max(0, fillHeight)))
        let columns = max(0, column)..<max(max(0, column), min(width, column + max(0, fillWidth)))
        for r in rows {
            for c in columns { setCell(row: r, column: c, .blank(style)) }
        }
    }

    /// Writes text starting at a column, clipped before `limit` (default: the right edge).
    ///
    /// The text is sanitized first, then each grapheme cluster is split into the cells a
    /// terminal would give it (``DisplayWidth/cells(of:)``). A wide cell that would cross
    /// the limit is replaced by blank padding. Returns the column after the last cell written.
    @discardableResult
    public mutating func write(_ text: String, row: Int, column: Int, style: Style = .plain, limit: Int? = nil) -> Int {
        let end = min(width, limit ?? width)
        var col = column
        guard row >= 0, row < height else { return col }
        for grapheme in Sanitizer.inert(text) {
            // Most text is one code point per cluster, drawn as itself in one cell.
            if let cellWidth = DisplayWidth.singleCellWidth(grapheme) {
                if cellWidth == 0 { continue }
                guard place(String(grapheme), width: cellWidth, row: row, column: &col, end: end, style: style) else { break }
            } else {
                var fits = true
                for piece in DisplayWidth.cells(of: grapheme) where fits {
                    fits = place(piece.text, width: piece.width, row: row, column: &col, end: end, style: style)
                }
                if !fits { break }
            }
        }
        return col
    }

    /// Puts one cell (and its continuation) at `column` and advances it; at the limit, pads
    /// the rest with blanks and returns false.
    private mutating func place(_ content: String, width cellWidth: Int, row: Int, column col: inout Int, end: Int, style: Style) -> Bool {
        if col + cellWidth > end {
            while col < end { put(.blank(style), row: row, column: col); col += 1 }
            return false
        }
        if col >= 0 {
            put(Cell(grapheme: content, style: style), row: row, column: col)
            if cellWidth == 2 { put(Cell(grapheme: " ", style: style, isContinuation: true), row: row, column: col + 1) }
        }
        col += cellWidth
        return true
    }

    /// Changes the style of existing cells without touching their graphemes.
    public mutating func restyle(row: Int, column: Int, width span: Int, _ transform: (Style) -> Style) {
        guard row >= 0, row < height else { return }
        for c in max(0, column)..<max(max(0, column), min(width, column + max(0, span))) {
            cells[row * width + c].style = transform(cells[row * width + c].style)
        }
    }

    /// A copy with every colour removed, for `NO_COLOR`.
    public var withoutColor: Screen {
        var copy = self
        for index in copy.cells.indices { copy.cells[index].style = copy.cells[index].style.withoutColor }
        return copy
    }

    /// True when the two screens' cursors and cells are equal.
    public static func == (lhs: Screen, rhs: Screen) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.cells == rhs.cells
            && lhs.cursorPosition == rhs.cursorPosition
    }

    /// True when the row holds the same cells in both screens.
    public func rowEquals(_ row: Int, in other: Screen) -> Bool {
        guard other.width == width, other.height == height, row >= 0, row < height else { return false }
        let range = row * width..<(row + 1) * width
        return cells[range] == other.cells[range]
    }

    private func contains(row: Int, column: Int) -> Bool {
        row >= 0 && row < height && column >= 0 && column < width
    }

    /// Places a cell, first blanking any wide grapheme it would cut in half.
    private mutating func put(_ cell: Cell, row: Int, column: Int) {
        guard contains(row: row, column: column) else { return }
        let index = row * width + column
        let old = cells[index]
        if old.isContinuation, column > 0, !cell.isContinuation {
            cells[index - 1] = .blank(cells[index - 1].style)
        }
        // A continuation always follows the wide cell it belongs to.
        if !old.isContinuation, column + 1 < width, cells[index + 1].isContinuation {
            cells[index + 1] = .blank(old.style)
        }
        cells[index] = cell
    }

    private mutating func setCell(row: Int, column: Int, _ cell: Cell) { put(cell, row: row, column: column) }
}
