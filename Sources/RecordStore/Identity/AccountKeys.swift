import Foundation
import Synchronization

/// The published keys of a container's accounts, as this user has come to know them.
///
/// Keys are read from the container's `KeyDirectory` and kept for a few
/// seconds, so that checking a page of messages reads each author's key once.
/// Every key seen is remembered in `known_keys` in the user's private data
/// directory (one line: account, fingerprint). A key that differs from the one
/// remembered is reported once, as ssh reports a changed host key, and then
/// remembered in its place.
public final class AccountKeys: Sendable {
    /// How long a key read from the container is used before it is looked at again.
    static let freshness: TimeInterval = 5
    /// How long a key is used while a look (`KeyDirectory.stamp(of:)`) shows its file unchanged, before
    /// it is read again all the same: a filesystem whose times are coarse could show a rewritten file
    /// as unchanged.
    static let trustInStamps: TimeInterval = 300
    static let knownKeysName = "known_keys"

    let directory: KeyDirectory
    /// This user's own keys.
    public let own: IdentityKeys
    private let knownKeysURL: URL
    /// Verdicts of earlier processes.
    let verdicts: VerdictStore
    private let verifications = Atomic<Int>(0)

    /// How many signatures this process has verified (as opposed to knowing the verdict already).
    public var signaturesVerified: Int { verifications.load(ordering: .relaxed) }

    /// Waits until the verdicts had so far are kept on disk for the next process (they are written after the page is shown).
    public func keepVerdicts() {
        verdicts.flush()
    }

    private struct State {
        /// Each key as read, when it was read and last looked at, and its file's stamp then.
        var cache: [String: (key: PublicIdentity?, read: Date, looked: Date, stamp: KeyStamp?)] = [:]
        var known: [String: String]?
        /// Verdicts by `VerdictStore.digest`, the same key the store on disk uses.
        var checked: [Data: SignatureCheck] = [:]
        var report: (@Sendable (String) -> Void)?
        var pending: [String] = []
    }
    /// A signature still to verify: the signed bytes, the signature, the key, and the digest of all three
    /// that its verdict is kept under.
    private struct Unchecked: Sendable {
        var message: Data
        var signature: Data
        var key: PublicIdentity
        var digest: Data
    }
    private let state = Mutex(State())

    init(directory: KeyDirectory, own: IdentityKeys, privateRoot: URL, naming: ContainerNaming) {
        self.directory = directory
        self.own = own
        knownKeysURL = privateRoot.appendingPathComponent(Self.knownKeysName)
        verdicts = VerdictStore(directory: privateRoot, naming: naming)
    }

    /// Sends each warning about a changed key to `handler` instead of standard error; those raised so far go first.
    public func report(to handler: @escaping @Sendable (String) -> Void) {
        let earlier: [String] = state.withLock { state in
            state.report = handler
            defer { state.pending = [] }
            return state.pending
        }
        earlier.forEach(handler)
    }

    /// The key `account` has published, or nil; a key that changed since it was last seen is reported once.
    ///
    /// A key is looked at again after 5 s: read again if its file changed, else kept, for at most
    /// `trustInStamps`. A look is one `lstat`; a read opens three folders and files (a heartbeat a
    /// minute from each of a hundred people would otherwise read a hundred key files a minute).
    public func key(of account: String) -> PublicIdentity? {
        let now = Date()
        let isOwn = account == own.publicIdentity.account
        let cached = state.withLock { $0.cache[account] }
        if let cached, now.timeIntervalSince(cached.looked) < Self.freshness { return cached.key }
        // Taken before any read: a file changed after it shows a new stamp at the next look.
        let stamp = isOwn ? nil : directory.stamp(of: account)
        if let cached, now.timeIntervalSince(cached.read) < Self.trustInStamps, let stamp, cached.stamp == stamp {
            state.withLock { $0.cache[account]?.looked = now }
            return cached.key
        }
        let key = isOwn ? own.publicIdentity : directory.key(of: account)
        var warning: String?
        state.withLock { state in
            // Creators come from the file: a member could name thousands, so the cache has a bound.
            if state.cache.count > 10_000 { state.cache = [:] }
            state.cache[account] = (key, now, now, key == nil ? nil : stamp)
            guard let key else { return }
            if state.known == nil { state.known = loadKnown() }
            let seen = state.known?[account]
            guard seen != key.fingerprint else { return }
            state.known?[account] = key.fingerprint
            // A key seen for the first time is a line added; a client's first minute among a hundred people
            // sees a hundred, and rewriting the file for each cost more than all else it did. A changed key
            // rewrites the file, so that it names each account once.
            if seen == nil { appendKnown(account, key.fingerprint) } else { saveKnown(state.known ?? [:]) }
            // One's own key changes only by one's own doing (a lost identity.key): nothing to warn about.
            if let seen, account != own.publicIdentity.account {
                warning = "The key of \(account) has changed: it was \(seen), it is now \(key.fingerprint). If they did not make a new key, someone else may be writing as them; their messages signed with the old key now show as unverified (?)."
            }
        }
        if let warning { warn(warning) }
        return key
    }

    /// Reports a warning about keys: to the handler, else standard error unless it is a terminal (kept for a handler to come).
    func warn(_ warning: String) {
        let handler: (@Sendable (String) -> Void)? = state.withLock { state in
            if state.report == nil, state.pending.count < 100 { state.pending.append(warning) }
            return state.report
        }
        if let handler { handler(warning) } else if isatty(STDERR_FILENO) == 0 {
            FileHandle.standardError.write(Data(("warning: " + warning + "\n").utf8))
        }
    }

    /// Checks that `record` was signed, as it is, by its creator's published key.
    ///
    /// A record fetched with some keys only cannot be checked and reads as unsigned.
    /// What was checked is remembered by a digest of the exact bytes signed, the signature and the key, so
    /// paging back over the same messages costs an encoding and a hash, not another signature check.
    ///
    /// `keep`: false for a record that is news only while it is new (a presence heartbeat, a typing
    /// notice). Its verdict is held in memory but not written for later processes, which would look it
    /// up only in a page of records, where such a record never comes.
    public func check(_ record: Record, keep: Bool = true) -> SignatureCheck {
        // One record is most often one that just arrived, which no earlier process can have checked.
        check([record], lookingUp: false, keep: keep).first ?? .unsigned
    }

    /// `check` of each record, in order. A signature checked before, by this process or (through the
    /// `VerdictStore`) an earlier one, is not checked again; the others are checked on several of the
    /// machine's cores when there are enough of them: one takes about 90 µs here, most of what reading
    /// a page of 50 messages costs.
    public func check(_ records: [Record]) -> [SignatureCheck] {
        check(records, lookingUp: true)
    }

    /// `lookingUp`: asks the `VerdictStore` for the verdicts not held in memory, and writes the new ones at once.
    /// `keep`: whether the new verdicts are written to it at all.
    private func check(_ records: [Record], lookingUp: Bool, keep: Bool = true) -> [SignatureCheck] {
        var outcomes: [SignatureCheck] = []
        var prepared: [(index: Int, signature: Unchecked)] = []
        for (index, record) in records.enumerated() {
            switch prepare(record) {
            case .known(let outcome): outcomes.append(outcome)
            case .unchecked(let signature):
                outcomes.append(.unsigned)
                prepared.append((index, signature))
            }
        }
        guard !prepared.isEmpty else { return outcomes }
        let kept = lookingUp ? verdicts.verdicts(prepared.map(\.signature.digest)) : [:]
        var unchecked: [(index: Int, signature: Unchecked)] = []
        for item in prepared {
            if let outcome = kept[item.signature.digest] {
                outcomes[item.index] = outcome
                remember(item.signature.digest, outcome)
            } else {
                unchecked.append(item)
            }
        }
        for (item, outcome) in zip(unchecked, OnAllCores.map(unchecked) { [self] in verify($0.signature) }) {
            outcomes[item.index] = outcome
        }
        if keep { verdicts.remember(unchecked.map { ($0.signature.digest, outcomes[$0.index]) }, soon: lookingUp) }
        return outcomes
    }

    /// Signs `statement` as this account: a claim kept in a record's fields and checked apart from the
    /// record (a hash chain's tip, `HashChain`). The signed bytes begin with a domain of their own, so a
    /// statement's signature can never pass for a record's.
    public func sign(statement: Data) throws -> Data {
        try own.sign(Self.statementDomain + statement)
    }

    /// Whether `account`'s published key signed `statement` (`sign(statement:)`). The verdict is held in
    /// memory, as a record's is, and never written for later processes.
    public func check(statement: Data, signature: Data, by account: String) -> SignatureCheck {
        guard signature.count == 64 else { return .badSignature }
        guard let key = key(of: account) else { return .unknownKey }
        switch prepared(message: Self.statementDomain + statement, signature: signature, key: key) {
        case .known(let outcome): return outcome
        case .unchecked(let unchecked): return verify(unchecked)
        }
    }

    private static let statementDomain = Data("fatchat statement 1\0".utf8)

    private enum Prepared {
        case known(SignatureCheck)
        case unchecked(Unchecked)
    }

    /// Everything of a check but the signature's verification: the outcome, if it needs none or was had before.
    private func prepare(_ record: Record) -> Prepared {
        guard !record.isPartial, let (signature, replacing) = RecordSignature.parse(record.signature) else { return .known(.unsigned) }
        guard let creator = record.creatorUserRecordID?.recordName, let key = key(of: creator) else { return .known(.unknownKey) }
        guard let message = try? RecordSignature.message(type: record.recordType, id: record.recordID, creator: creator,
                                                         replacing: replacing, fields: record.fields) else { return .known(.badSignature) }
        return prepared(message: message, signature: signature, key: key)
    }

    /// The verdict this process already had on `signature` of `message` by `key`, else what checking it takes.
    private func prepared(message: Data, signature: Data, key: PublicIdentity) -> Prepared {
        let digest = VerdictStore.digest(message: message, signature: signature, key: key.signingKey)
        if let known = state.withLock({ $0.checked[digest] }) { return .known(known) }
        return .unchecked(Unchecked(message: message, signature: signature, key: key, digest: digest))
    }

    /// Verifies a signature, and remembers the outcome.
    private func verify(_ unchecked: Unchecked) -> SignatureCheck {
        let outcome: SignatureCheck = unchecked.key.isValidSignature(unchecked.signature, for: unchecked.message) ? .verified : .badSignature
        verifications.add(1, ordering: .relaxed)
        remember(unchecked.digest, outcome)
        return outcome
    }

    private func remember(_ digest: Data, _ outcome: SignatureCheck) {
        state.withLock { state in
            if state.checked.count > 10_000 { state.checked = [:] }
            state.checked[digest] = outcome
        }
    }

    /// The accounts with a published key whose user name, or whole account name, is `name`.
    public func accounts(named name: String) -> [String] {
        directory.accounts(named: name)
    }

    private func loadKnown() -> [String: String] {
        guard let data = try? Data(contentsOf: knownKeysURL), data.count < 4_000_000 else { return [:] }
        var known: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { known[String(parts[0])] = String(parts[1]) }
        }
        return known
    }

    /// Adds one account's line to what was seen (0600 if new); `loadKnown` takes the last line of an account.
    private func appendKnown(_ account: String, _ fingerprint: String) {
        guard !account.contains(where: \.isWhitespace) else { return }
        let fd = Foundation.open(knownKeysURL.path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let line = Data("\(account) \(fingerprint)\n".utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Writes what was seen, 0600, through a temporary file renamed into place.
    private func saveKnown(_ known: [String: String]) {
        let text = known.keys.sorted().map { "\($0) \(known[$0] ?? "")\n" }.joined()
        let temporary = knownKeysURL.path + ".\(getpid()).tmp"
        let fd = Foundation.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Data(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == bytes.count { rename(temporary, knownKeysURL.path) } else { unlink(temporary) }
    }
}
