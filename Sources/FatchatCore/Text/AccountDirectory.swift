/// The accounts a view has seen, so that a handle never passes for another person.
///
/// An account is an OS user, named inside its user record name `_<uid>_<name>`. A sender
/// reads as its handle alone only when the handle is the account's own name and no other
/// account seen here has that name or handle (ignoring case); otherwise the account follows:
/// `alice (bob)` is the account bob using the handle alice. Two accounts of one name (two
/// hosts) are told apart by their whole ID, `alice (_1002_bob)`.
public struct AccountDirectory: Sendable {
    /// Handles longer than this are cut with `…`; the chat refuses more than 32 when one is set.
    public static let handleCharacters = 32

    /// Folded names and handles, each with the accounts that go by it.
    private var usersByName: [String: Set<String>] = [:]
    /// Account names as shown, each with the user record names that have it.
    private var usersByAccountName: [String: Set<String>] = [:]

    /// An empty directory.
    public init() {}

    /// Notes that the account `user` goes by `handle`; an empty `user` (no account) is ignored.
    public mutating func learn(user: String, handle: String) {
        guard !user.isEmpty else { return }
        let account = Self.accountName(of: user)
        usersByName[Self.fold(Self.shown(handle)), default: []].insert(user)
        usersByName[Self.fold(account), default: []].insert(user)
        usersByAccountName[account, default: []].insert(user)
    }

    /// How the sender `user` with `handle` reads, inert: `alice`, or `alice (bob)`.
    public func label(handle: String, user: String) -> String {
        let shown = Self.shown(handle)
        guard !user.isEmpty else { return shown + " (?)" }
        let account = Self.accountName(of: user)
        let sharesName = usersByName[Self.fold(shown)]?.contains { $0 != user } ?? false
        guard shown != account || sharesName else { return shown }
        let ambiguous = usersByAccountName[account]?.contains { $0 != user } ?? false
        return "\(shown) (\(ambiguous ? Self.shown(user) : account))"
    }

    /// The OS user name inside a user record name `_<uid>_<name>`, as shown; the whole
    /// record name, as shown, when it is not of that form.
    public static func accountName(of user: String) -> String {
        plainAccountName(of: user) ?? generalAccountName(of: user)
    }

    /// A name as it is drawn: bounded, inert, and with spaces and `()<>` as `_`, so that
    /// nothing inside a name can look like the account part or the end of the brackets.
    public static func shown(_ name: String) -> String {
        isPlain(name) ? name : generalShown(name)
    }

    // Every frame labels every sender on screen, so the names most people have, printable
    // ASCII, are read byte by byte; the general readings walk characters, and are the rule.

    /// `accountName` for any record name.
    static func generalAccountName(of user: String) -> String {
        // A uid has at most 10 digits; the prefix keeps a record name of any size cheap to read.
        let parts = user.prefix(12 + handleCharacters).split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, !parts[1].isEmpty, parts[1].allSatisfy(\.isASCIIDigit), !parts[2].isEmpty else {
            return shown(user)
        }
        return shown(String(parts[2]))
    }

    /// `shown` for any name.
    static func generalShown(_ name: String) -> String {
        let head = name.prefix(handleCharacters + 1)
        var text = Sanitizer.inert(String(head.prefix(handleCharacters)))
        text = String(text.map { $0.isWhitespace || "()<>".contains($0) ? "_" : $0 })
        if head.count > handleCharacters { text += "…" }
        return text.isEmpty ? "?" : text
    }

    /// `accountName` for a record name `_<uid>_<name>` of at most `12 + handleCharacters`
    /// printable ASCII characters; nil for any other.
    private static func plainAccountName(of user: String) -> String? {
        let name = user.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            let underscore = UInt8(ascii: "_")
            guard bytes.count <= 12 + handleCharacters, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
                  bytes.first == underscore, let second = bytes[1...].firstIndex(of: underscore),
                  second > 1, second + 1 < bytes.count,
                  bytes[1..<second].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return shown(String(decoding: UnsafeBufferPointer(rebasing: bytes[(second + 1)...]), as: UTF8.self))
        }
        return name ?? nil
    }

    /// Whether `name` is 1 to `handleCharacters` printable ASCII characters other than space
    /// and `()<>`, which `shown` leaves as they are.
    private static func isPlain(_ name: String) -> Bool {
        var count = 0
        for byte in name.utf8 {
            count += 1
            guard count <= handleCharacters, byte > 0x20, byte < 0x7F else { return false }
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"): return false
            default: continue
            }
        }
        return count > 0
    }

    private static func fold(_ name: String) -> String { name.lowercased() }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
