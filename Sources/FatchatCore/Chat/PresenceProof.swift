import Foundation
import RecordStore
import Synchronization

/// How a heartbeat shows who wrote it without a signature check of its own.
///
/// Checking a record's signature costs about 70 µs, and with a hundred people each client would check
/// 99 heartbeats a minute, all day: most of what an idle client spends. So a presence record also
/// carries a proof from a `HashChain`. When its state, reason or handle changes (and when its chain
/// runs out, after a day), the writer makes a new chain and signs a statement of the new presence and
/// the chain's tip, which readers check once. Each heartbeat after that gives out the chain's next link
/// for the time passed, which a reader checks with a few hashes against the last link it accepted.
///
/// No one else can give out a link before those already given, so a forged heartbeat can only repeat
/// one the writer wrote: it cannot make anyone look present later than they were. The time a proof
/// vouches for is the statement's start plus its steps of ``tick``, never later than the record's `seen`.
struct PresenceProof: Sendable, Equatable {
    /// The time one step of a chain stands for.
    static let tick: TimeInterval = 10

    /// The owner's signature of the statement (`statement(of:creator:since:tip:)`).
    var signature: Data
    var tip: Data
    /// When the chain began, in milliseconds since 1970.
    var since: Int64
    var step: Int
    var link: Data

    /// The latest time this proof vouches for.
    var vouchedUntil: Date { Date(timeIntervalSince1970: Double(since) / 1000 + Double(step) * Self.tick) }

    private enum Field {
        static let signature = "chainSignature", tip = "chainTip", since = "chainSince", step = "chainStep", link = "chainLink"
    }

    /// The proof a presence record carries; nil for one without (written by an earlier build) or with a malformed one.
    init?(_ record: Record) {
        guard let signature = record[Field.signature]?.bytesValue, let tip = record[Field.tip]?.bytesValue,
              let since = record[Field.since]?.int64Value, let step = record[Field.step]?.int64Value,
              let link = record[Field.link]?.bytesValue,
              (0...Int64(HashChain.maximumLength)).contains(step) else { return nil }
        (self.signature, self.tip, self.since, self.step, self.link) = (signature, tip, since, Int(step), link)
    }

    init(signature: Data, tip: Data, since: Int64, step: Int, link: Data) {
        (self.signature, self.tip, self.since, self.step, self.link) = (signature, tip, since, step, link)
    }

    func write(into record: inout Record) {
        record[Field.signature] = .bytes(signature)
        record[Field.tip] = .bytes(tip)
        record[Field.since] = .int64(since)
        record[Field.step] = .int64(Int64(step))
        record[Field.link] = .bytes(link)
    }

    /// What a chain's statement says: whose presence, its state, reason and handle, and the chain's start and tip.
    ///
    /// A reader keeps it for each chain it accepted and compares each heartbeat's with it, which tells the
    /// same as building the statement again, at a fraction of the cost. Text is compared by its UTF-8
    /// bytes, as the statement holds it: Swift's `==` would take another spelling of the same characters
    /// for the signed one.
    struct Claim: Equatable {
        var creator: String, state: String, reason: String, handle: String
        var since: Int64
        var tip: Data

        init(_ record: Record, creator: String, since: Int64, tip: Data) {
            (self.creator, self.since, self.tip) = (creator, since, tip)
            (state, reason, handle) = (record["state"]?.stringValue ?? "", record["reason"]?.stringValue ?? "",
                                       record["handle"]?.stringValue ?? "")
        }

        static func == (a: Claim, b: Claim) -> Bool {
            a.since == b.since && a.tip == b.tip && a.creator.utf8.elementsEqual(b.creator.utf8)
                && a.state.utf8.elementsEqual(b.state.utf8) && a.reason.utf8.elementsEqual(b.reason.utf8)
                && a.handle.utf8.elementsEqual(b.handle.utf8)
        }

        /// The bytes signed: each part with its length before it, so equal claims and equal statements go together.
        var statement: Data {
            var out = Data()
            let parts = ["presence chain 1", creator, state, reason, handle, String(since)].map { Data($0.utf8) } + [tip]
            for part in parts {
                withUnsafeBytes(of: UInt32(part.count).bigEndian) { out.append(contentsOf: $0) }
                out.append(part)
            }
            return out
        }
    }

    /// The bytes signed for a chain of `record`'s presence.
    static func statement(of record: Record, creator: String, since: Int64, tip: Data) -> Data {
        Claim(record, creator: creator, since: since, tip: tip).statement
    }
}

/// The chain this client gives its heartbeats' proofs out of.
struct PresenceChainWriter {
    private var chain: HashChain?
    private var statement = Data()
    private var signature = Data()
    private var since: Int64 = 0
    private var step = 0

    /// Puts a proof into `record`, a presence about to be written at `now`: the next link of the current
    /// chain when the record says what the chain's statement says, else a new chain's tip, signed.
    mutating func prove(_ record: inout Record, at now: Date, creator: String, keys: AccountKeys) throws {
        let millis = Int64(exactly: (now.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
        if let chain, PresenceProof.statement(of: record, creator: creator, since: since, tip: chain.tip) == statement {
            // The steps the time since the chain began stands for; past the chain's end, a new chain.
            let due = (Double(millis) - Double(since)) / 1000 / PresenceProof.tick
            step = max(step + 1, Int(min(max(due, 0), Double(chain.length + 1))))
            if let link = chain.link(at: step) {
                PresenceProof(signature: signature, tip: chain.tip, since: since, step: step, link: link).write(into: &record)
                return
            }
        }
        let fresh = HashChain()
        let statement = PresenceProof.statement(of: record, creator: creator, since: millis, tip: fresh.tip)
        signature = try keys.sign(statement: statement)
        (chain, self.statement, since, step) = (fresh, statement, millis, 0)
        PresenceProof(signature: signature, tip: fresh.tip, since: since, step: 0, link: fresh.tip).write(into: &record)
    }
}

/// What this process has accepted of each account's chains: for each, the last link, so that the next
/// heartbeat is checked with the hashes between them.
final class PresenceChainReader: Sendable {
    /// Chains kept per account: a user with two clients open writes from two.
    static let chainsPerAccount = 4
    /// Accounts kept before all are forgotten and learnt again.
    static let accounts = 10_000
    /// The most steps walked to check a link, about 10 minutes' worth. A link further on is checked by the
    /// record's own signature, which covers its proof, instead: a row that replays someone's statement
    /// with a made-up link a day's steps on costs one signature check, as any forged row does, and not
    /// 8,640 hashes.
    static let longestWalk = 64

    /// A chain accepted so far: what its signed statement says, and the last link accepted.
    private struct Head {
        var signature: Data
        var claim: PresenceProof.Claim
        var step: Int
        var link: Data
    }

    private let heads = Mutex<[String: [Head]]>([:])

    /// The time `record`'s proof vouches for its creator's presence, or nil if it does not: its statement
    /// is not signed by the creator's key, its link does not follow the last one accepted, or it is older
    /// than that one.
    func vouchedUntil(_ record: Record, creator: String, proof: PresenceProof, keys: AccountKeys) -> Date? {
        let claim = PresenceProof.Claim(record, creator: creator, since: proof.since, tip: proof.tip)
        let known = heads.withLock { $0[creator]?.first { $0.signature == proof.signature && $0.claim == claim } }
        var head: Head
        if let known, proof.step < known.step {
            return nil
        } else if let known, proof.step - known.step <= Self.longestWalk {
            head = known
        } else if known == nil, proof.step <= Self.longestWalk {
            guard keys.check(statement: claim.statement, signature: proof.signature, by: creator).isVerified else { return nil }
            head = Head(signature: proof.signature, claim: claim, step: 0, link: proof.tip)
        } else {
            guard keys.check(record, keep: false).isVerified else { return nil }
            head = Head(signature: proof.signature, claim: claim, step: proof.step, link: proof.link)
        }
        guard proof.step == head.step ? proof.link == head.link
                : HashChain.follows(proof.link, steps: proof.step - head.step, from: head.link) else { return nil }
        (head.step, head.link) = (proof.step, proof.link)
        heads.withLock { heads in
            if heads.count >= Self.accounts, heads[creator] == nil { heads = [:] }
            var chains = heads[creator, default: []]
            let same = chains.firstIndex { $0.signature == head.signature && $0.claim == head.claim }
            // Another thread may have taken the same chain further meanwhile: the furthest link stands.
            if let same {
                let other = chains.remove(at: same)
                if other.step > head.step { head = other }
            }
            chains.insert(head, at: 0)
            heads[creator] = Array(chains.prefix(Self.chainsPerAccount))
        }
        return proof.vouchedUntil
    }
}
