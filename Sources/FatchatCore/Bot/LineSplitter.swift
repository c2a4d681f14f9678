import Foundation

/// Splits a byte stream into lines, refusing any longer than the limit without losing the ones after it.
public struct LineSplitter: Sendable {
    /// What came out of the input so far.
    public enum Piece: Equatable, Sendable {
        case line([UInt8])
        /// A line over the limit was skipped; its length so far.
        case tooLong(Int)
    }

    private var buffer: [UInt8] = []
    private var skipping = 0
    let limit: Int

    public init(limit: Int = BotInput.maximumLineBytes) { self.limit = limit }

    /// Feeds bytes; returns the complete lines (without their newline) and refusals.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [Piece] {
        var pieces: [Piece] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if skipping > 0 {
                    pieces.append(.tooLong(skipping))
                    skipping = 0
                } else {
                    if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
                    pieces.append(.line(buffer))
                }
                buffer.removeAll(keepingCapacity: true)
            } else if skipping > 0 {
                skipping += 1
            } else {
                buffer.append(byte)
                if buffer.count > limit {
                    skipping = buffer.count
                    buffer.removeAll()
                }
            }
        }
        return pieces
    }

    /// What is left at end of input: a last line without a newline.
    public mutating func finish() -> [Piece] {
        defer { buffer.removeAll(); skipping = 0 }
        if skipping > 0 { return [.tooLong(skipping)] }
        return buffer.isEmpty ? [] : [.line(buffer)]
    }
}
