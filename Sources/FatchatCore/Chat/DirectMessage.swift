import Foundation
import RecordStore

/// A direct message between two accounts, opened by one of them.
///
/// In the shared file it is a `DirectMessage` record whose only readable
/// fields say to whom it goes; the text and the sender's handle are sealed
/// twice, once to the recipient's key and once to the sender's own, so that
/// each side can read it back and nobody else can. The record is signed like
/// any other, so it cannot pass for another sender's.
public struct DirectMessage: Hashable, Sendable {
    public var id: MessageID
    /// Who wrote it: the record's creator, which no handle can fake.
    public var from: UserID
    /// To whom.
    public var to: UserID
    /// The handle the sender had when sending, from inside the sealed text.
    public var handle: String
    public var text: String
    public var date: Date
    /// Whether the sender's key vouches for the record as it is.
    public var verified = true

    /// The short ID people type in `/del`.
    public var shortID: String { String(id.rawValue.prefix(6)) }

    /// The other side of the conversation, seen from `me`.
    public func peer(of me: UserID) -> UserID { from == me ? to : from }

    static let recipientKey = "recipient"
    static let forRecipientKey = "sealedForRecipient"
    static let forSenderKey = "sealedForSender"

    /// What a sealed box is bound to: the two accounts and the record's name.
    static func context(from: String, to: String, name: String) -> Data {
        Data("\(from)\u{0}\(to)\u{0}\(name)".utf8)
    }

    /// The sealed plaintext: the handle's length (two bytes), the handle, then the text.
    static func plaintext(handle: String, text: String) -> Data {
        let handleBytes = Data(handle.utf8.prefix(1024))
        var length = UInt16(handleBytes.count).bigEndian
        return Data(bytes: &length, count: 2) + handleBytes + Data(text.utf8)
    }

    /// Reads a plaintext back; nil for bytes of any other shape.
    static func parse(_ plaintext: Data) -> (handle: String, text: String)? {
        guard plaintext.count >= 2 else { return nil }
        let bytes = [UInt8](plaintext)
        let length = Int(bytes[0]) << 8 | Int(bytes[1])
        guard bytes.count >= 2 + length else { return nil }
        return (String(decoding: bytes[2..<(2 + length)], as: UTF8.self), String(decoding: bytes[(2 + length)...], as: UTF8.self))
    }
}
