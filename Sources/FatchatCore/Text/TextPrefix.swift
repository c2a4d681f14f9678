/// The bounded start of a text that may be huge: what a view draws, and how much it leaves out.
///
/// Anyone who can write the shared file can store a message of any size; the client draws
/// only this prefix, so wrapping and width work stay bounded whatever the file holds.
public struct TextPrefix: Sendable, Equatable {
    /// How much of a message the client draws: 16 KB of UTF-8.
    public static let messageBytes = 16 * 1024

    /// The start of the text: at most the limit's UTF-8 bytes, cut between two scalars.
    public var shown: String
    /// UTF-8 bytes of the text after ``shown``.
    public var omittedBytes: Int

    /// The first `limit` UTF-8 bytes of `text` or less, never splitting a scalar; O(limit).
    public init(_ text: String, limit: Int) {
        let utf8 = text.utf8
        guard utf8.count > limit else {
            shown = text
            omittedBytes = 0
            return
        }
        // A scalar boundary, found in at most three steps back; a grapheme cluster cut there
        // draws as its first part, and finding a cluster boundary could cost the whole text.
        var cut = utf8.index(utf8.startIndex, offsetBy: max(0, limit))
        while cut > utf8.startIndex, cut.samePosition(in: text.unicodeScalars) == nil {
            cut = utf8.index(before: cut)
        }
        shown = String(text.unicodeScalars[..<cut])
        omittedBytes = utf8.count - shown.utf8.count
    }

    /// The mark drawn after a cut text, `… 20464 KB more` (whole KB, rounded up); nil for none.
    public static func moreMark(omittedBytes: Int) -> String? {
        omittedBytes > 0 ? "… \((omittedBytes + 1023) / 1024) KB more" : nil
    }
}
