/// One terminal cell: what a terminal keeps in it, with a style, or the right half of a wide one.
public struct Cell: Hashable, Sendable {
    /// The code points drawn here: one spacing character and the zero-width ones that go
    /// with it, as ``DisplayWidth/cells(of:)`` splits a cluster; a space for blank cells and
    /// for continuations. A cluster with several spacing characters covers several cells.
    public var grapheme: String
    /// How the cell is drawn.
    public var style: Style
    /// True when this cell is covered by the wide character in the cell to its left.
    public var isContinuation: Bool

    /// Creates a cell.
    public init(grapheme: String = " ", style: Style = .plain, isContinuation: Bool = false) {
        self.grapheme = grapheme
        self.style = style
        self.isContinuation = isContinuation
    }

    /// A blank cell in the given style.
    public static func blank(_ style: Style = .plain) -> Cell { Cell(grapheme: " ", style: style) }
}
