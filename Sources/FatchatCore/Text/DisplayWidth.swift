/// The number of terminal cells text takes, and the cells a grapheme cluster is drawn as:
/// the one width function of the client.
///
/// Widths are glibc's `wcwidth()` (Unicode 14.0.0, the table in `DisplayWidth+Table.swift`),
/// because terminals on Linux count columns with it: tmux 3.3a keeps one spacing code point
/// per cell, adds the zero-width ones after it to that cell, and gives the cell the spacing
/// code point's width. A grapheme cluster with several spacing code points (a Devanagari
/// conjunct, Thai SARA AM, old Hangul LLV, an Arabic number sign and its digit) is drawn here
/// as several cells in the same way, so the client and the terminal agree and nothing is lost.
///
/// Where terminals disagree with each other about an emoji sequence, or would drop a code
/// point, the cluster is drawn in an inert form that every terminal counts alike:
/// - a flag (regional indicator letters) as its letters in brackets, 🇺🇸 as `[US]`;
/// - tag letters (a subdivision flag) likewise, 🏴 + `gbeng` tags as `🏴[gbeng]`;
/// - U+200D ZERO WIDTH JOINER is not drawn, so a joined sequence shows as its parts
///   (tmux glues whatever follows a joiner into the cell before it, keeping that width);
/// - U+FE0F after an emoji that is one cell wide is not drawn (text presentation), since
///   some terminals would then draw it two cells wide;
/// - a code point glibc does not know (newer than Unicode 14, unassigned) as its hex
///   value, `<1fae8>`, as the sanitizer shows C1 controls: a terminal would drop it;
/// - a combining mark with no base is drawn on U+25CC DOTTED CIRCLE, and a cell keeps at
///   most ``maxScalarsPerCell`` code points, more marks going on to another dotted circle.
public enum DisplayWidth {
    /// One cell of a drawn cluster: the code points a terminal keeps in it, and its width.
    public struct Piece: Hashable, Sendable {
        /// A spacing code point and the zero-width ones drawn with it.
        public var text: String
        /// Columns covered: 1 or 2.
        public var width: Int
    }

    /// Code points in one cell at most: ncurses' `CCHARW_MAX`. Five UTF-8 scalars are at
    /// most 20 bytes, within tmux's 21 per cell.
    public static let maxScalarsPerCell = 5

    /// Where a mark with nothing to sit on is drawn, as Unicode's own charts show marks.
    static let dottedCircle: Unicode.Scalar = "\u{25CC}"

    /// Cells taken by one grapheme cluster as drawn; 0 for controls and for format
    /// characters standing alone (the sanitizer removes those).
    public static func of(_ grapheme: Character) -> Int {
        if let width = singleCellWidth(grapheme) { return width }
        var builder = CellBuilder(collects: false)
        for scalar in grapheme.unicodeScalars { builder.add(scalar) }
        return builder.finish().width
    }

    /// Cells taken by a whole string, cluster by cluster.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The longest prefix of `text` that fits in `columns` cells, never splitting a wide grapheme.
    public static func prefix(_ text: some StringProtocol, fitting columns: Int) -> String {
        var used = 0
        var result = ""
        for grapheme in text {
            let w = of(grapheme)
            if used + w > columns { break }
            used += w
            result.append(grapheme)
        }
        return result
    }

    /// The width of a cluster that is drawn as itself in one cell, or nil when it takes
    /// ``cells(of:)``: the fast path for ASCII, Latin, CJK and single emoji.
    public static func singleCellWidth(_ grapheme: Character) -> Int? {
        var scalars = grapheme.unicodeScalars.makeIterator()
        guard let first = scalars.next(), scalars.next() == nil else { return nil }
        let v = first.value
        if isControl(first) { return 0 }
        if v < 0x300 { return 1 }
        if (0x1F1E6...0x1F1FF).contains(v) || (0xE0020...0xE007F).contains(v) { return nil }
        let width = scalarWidth(v)
        return width > 0 ? width : nil
    }

    /// The cells a grapheme cluster is drawn as, left to right (see the type's summary).
    public static func cells(of grapheme: Character) -> [Piece] {
        if let width = singleCellWidth(grapheme) {
            return width == 0 ? [] : [Piece(text: String(grapheme), width: width)]
        }
        var builder = CellBuilder(collects: true)
        for scalar in grapheme.unicodeScalars { builder.add(scalar) }
        return builder.finish().pieces
    }

    /// glibc's `wcwidth()` for one code point: -1 for controls and code points it does not know.
    public static func scalarWidth(_ v: UInt32) -> Int {
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return -1 }
        if v < 0x300 { return 1 }
        // The last range starting at or before v.
        let key = v << 2 | 3
        var low = 0
        var high = glibcRanges.count
        while low < high {
            let mid = (low + high) / 2
            if glibcRanges[mid] <= key { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return 1 }
        return Int(glibcRanges[low - 1] & 3) - 1
    }

    /// C0 controls, DEL and C1 controls.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
    }
}

/// Splits one cluster's code points into cells, applying the inert forms of ``DisplayWidth``;
/// when it does not collect, it only counts columns (the wrapper's path) and makes no strings.
private struct CellBuilder {
    private enum Run { case regional, tag }

    private let collects: Bool
    private var pieces: [DisplayWidth.Piece] = []
    private var width = 0
    private var current = String.UnicodeScalarView()
    private var base: Unicode.Scalar?
    private var currentWidth = 0
    private var currentCount = 0
    private var run: Run?

    init(collects: Bool) { self.collects = collects }

    mutating func add(_ scalar: Unicode.Scalar) {
        let v = scalar.value
        if (0x1F1E6...0x1F1FF).contains(v) {
            open(.regional)
            letter(0x41 + v - 0x1F1E6)
            return
        }
        if (0xE0020...0xE007E).contains(v) {
            open(.tag)
            letter(v - 0xE0000)
            return
        }
        close()
        // CANCEL TAG only ends a tag run; a joiner would glue the next cell into this one.
        if v == 0xE007F || v == 0x200D || DisplayWidth.isControl(scalar) { return }
        let scalarWidth = DisplayWidth.scalarWidth(v)
        switch scalarWidth {
        case 1, 2:
            start(scalar, width: scalarWidth)
        case 0:
            if v == 0xFE0F, currentWidth == 1, base?.properties.isEmoji == true { return }
            if currentWidth == 0 {
                // A format character with nothing to join draws as nothing; a mark gets a base.
                if scalar.properties.generalCategory == .format { return }
                start(DisplayWidth.dottedCircle, width: 1)
            } else if currentCount >= DisplayWidth.maxScalarsPerCell {
                start(DisplayWidth.dottedCircle, width: 1)
            }
            if collects { current.append(scalar) }
            currentCount += 1
        default:
            for ascii in "<\(String(v, radix: 16))>".unicodeScalars { start(ascii, width: 1) }
        }
    }

    mutating func finish() -> (pieces: [DisplayWidth.Piece], width: Int) {
        close()
        flush()
        return (pieces, width)
    }

    private mutating func open(_ kind: Run) {
        if run == kind { return }
        close()
        run = kind
        start("[", width: 1)
    }

    private mutating func close() {
        guard run != nil else { return }
        run = nil
        start("]", width: 1)
    }

    private mutating func letter(_ value: UInt32) {
        guard let ascii = Unicode.Scalar(value) else { return }
        start(ascii, width: 1)
    }

    private mutating func start(_ scalar: Unicode.Scalar, width cellWidth: Int) {
        flush()
        if collects { current.append(scalar) }
        base = scalar
        currentWidth = cellWidth
        currentCount = 1
    }

    private mutating func flush() {
        guard currentWidth > 0 else { return }
        width += currentWidth
        if collects {
            pieces.append(DisplayWidth.Piece(text: String(current), width: currentWidth))
            current = String.UnicodeScalarView()
        }
        base = nil
        currentWidth = 0
        currentCount = 0
    }
}
