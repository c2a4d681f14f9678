/// One terminal cell: a grapheme cluster with a style, or the right half of a wide one.
public struct Cell: Hashable, Sendable {
    /// The grapheme drawn here; a space for blank cells and for continuations.
    public var grapheme: Character
    /// How the cell is drawn.
    public var style: Style
    /// True when this cell is covered by the wide grapheme in the cell to its left.
    public var isContinuation: Bool

    /// Creates a cell.
    public init(grapheme: Character = " ", style: Style = .plain, isContinuation: Bool = false) {
        self.grapheme = grapheme
        self.style = style
        self.isContinuation = isContinuation
    }

    /// A blank cell in the given style.
    public static func blank(_ style: Style = .plain) -> Cell { Cell(grapheme: " ", style: style) }
}
