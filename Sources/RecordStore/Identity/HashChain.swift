import Crypto
import Foundation

/// A one-way hash chain: its owner signs the last link (the tip) once, then proves something again
/// and again by giving out the links before it, newest to oldest. Anyone who holds a link the owner
/// gave out can check a later one with a few SHA-256 hashes instead of a signature check, and no one
/// but the owner can give out a link before the ones already given.
///
/// Link `i` is the hash of link `i - 1`; link 0 is a random secret and link `length` the tip. Step `k`
/// gives out link `length - k`, so step 0 is the tip itself.
public struct HashChain: Sendable {
    /// The longest chain anyone makes or follows: a day of 10-second steps.
    public static let maximumLength = 8_640
    /// One link of every this many is kept, so a step costs at most this many hashes to give out.
    static let keptEvery = 64

    public let length: Int
    public let tip: Data
    /// Links 0, `keptEvery`, 2 × `keptEvery`, ...
    private let kept: [Data]

    /// A new chain from a secret of 32 random bytes; `length` is at most ``maximumLength``.
    public init(length: Int = maximumLength) {
        self.length = min(max(length, 1), Self.maximumLength)
        var link = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
        var kept: [Data] = []
        for index in stride(from: 0, to: self.length, by: Self.keptEvery) {
            kept.append(link)
            link = Self.hash(link, times: min(Self.keptEvery, self.length - index))
        }
        self.kept = kept
        tip = link
    }

    /// The link step `step` gives out (0 ... `length`).
    public func link(at step: Int) -> Data? {
        guard (0...length).contains(step) else { return nil }
        let index = length - step
        let from = index / Self.keptEvery
        guard from < kept.count else { return tip }
        return Self.hash(kept[from], times: index - from * Self.keptEvery)
    }

    /// Whether `link` is `steps` steps after `known`: hashed `steps` times, it gives `known`.
    /// Refuses more steps than the longest chain has, so a link someone else wrote costs a bounded check.
    public static func follows(_ link: Data, steps: Int, from known: Data) -> Bool {
        guard steps >= 0, steps <= maximumLength, link.count == known.count else { return false }
        return hash(link, times: steps) == known
    }

    /// `data` hashed `times` times over. Each round hashes the last digest where it lies, so a walk
    /// of a few steps, which a reader makes for every heartbeat, allocates one `Data`, not one a step.
    static func hash(_ data: Data, times: Int) -> Data {
        guard times > 0 else { return data }
        var digest = Crypto.SHA256.hash(data: data)
        for _ in 1..<times { digest = digest.withUnsafeBytes { Crypto.SHA256.hash(data: $0) } }
        return Data(digest)
    }
}
