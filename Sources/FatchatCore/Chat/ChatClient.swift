import Foundation
import RecordStore
import Synchronization
import SyncEngine

/// The chat on top of a container: channels, messages, members, handles and read markers.
///
/// Messages, memberships, edits, subscriptions and the channels that joining
/// creates go through the sync engine's outbox, so nothing typed is lost when
/// the container is briefly away, and another process's lock on the file
/// holds up no caller. `createChannel`, and `deleteChannel` and `setTopic`
/// unless asked to queue, write directly, for callers that need the outcome
/// at once.
///
/// It is the one door between the chat and its front ends: they see
/// FatchatCore's own types only (``MessageID``, ``ChannelID``,
/// ``HistoryCursor``, ``ChatStatus``), never the store or the engine. Only the
/// `fatchat` executable, which wires a container and an engine together, names those.
public final class ChatClient: Sendable {
    let container: Container
    let engine: SyncEngine
    let handleOverride: String?
    /// Highlight words from the configuration file, which count as my own but are not stored.
    let configuredHighlights: [String]
    /// Messages this process queued, so that a bot does not echo its own.
    private let queuedHere = Mutex<Set<MessageID>>([])
    /// Channels this process found itself a member of, and when; see `joinedChannel`.
    let recentlyJoined = Mutex<[ChannelName: (channel: Channel, seen: ContinuousClock.Instant)]>([:])
    /// Presence and typing records, written straight to the shared file off the caller's thread.
    let ephemeral: EphemeralWriter
    /// The presence this process last wrote, so that saying it again is known for a heartbeat.
    let lastPresence = Mutex<(state: PresenceState, reason: String)?>(nil)
    /// The hash chain this client's heartbeats prove themselves with (`PresenceProof`).
    let presenceChain = Mutex(PresenceChainWriter())
    /// The links of others' chains this client has accepted.
    let presenceChains = PresenceChainReader()

    /// Opens the chat on `container`, with an engine set up by `configuration`; `handle` overrides the saved handle for this run,
    /// and `highlights` are highlight words kept elsewhere (the configuration file's), added to the stored ones.
    ///
    /// The `fatchat` executable wires them together here; front ends take the client it made.
    public init(container: Container, handle: String? = nil, highlights: [String] = [],
                configuration: SyncEngine.Configuration = SyncEngine.Configuration()) throws {
        self.container = container
        self.handleOverride = handle
        for word in highlights { try Self.checkHighlight(word) }
        configuredHighlights = highlights.map { $0.lowercased() }
        ephemeral = EphemeralWriter(database: container.publicDatabase)
        // The damaged-row log is one per process; a front end built on the chat, which may
        // not go through the `fatchat` executable, still words its notices as Fatchat's.
        DamagedRowLog.word(as: .fatchat)
        if let handle { try Self.checkHandle(handle) }
        Self.prepareIndexesSoon(container.publicDatabase)
        var configuration = configuration
        configuration.alertStrings = ChatNotification.alertStrings
        // Heartbeats and typing notices come every minute and every few seconds: a round of them
        // neither saves the position nor reads the subscriptions again.
        configuration.ephemeralRecordTypes.formUnion([Presence.recordType, TypingNotice.recordType])
        if configuration.refetch == nil {
            configuration.refetch = { database in
                try database.records(matching: Query(recordType: ChatSchema.channelType), resultsLimit: 1000).records
            }
        }
        engine = try SyncEngine(container: container, configuration: configuration)
    }

    /// Sets the chat's index marks once per container; later opens only read them.
    ///
    /// Reading them may open the shared file and setting them writes it, and
    /// another process may hold it locked: a thread of its own does it, and
    /// this waits for it a moment only, so that a `post` queues its line all
    /// the same. Queries work without the marks, only slower, until it is through.
    private static func prepareIndexesSoon(_ database: RecordDatabase) {
        let done = DispatchSemaphore(value: 0)
        NamedThread.start("fatchat.indexes") {
            try? prepareIndexes(database)
            done.signal()
        }
        _ = done.wait(timeout: .now() + 1)
    }

    /// Sets the chat's index marks now, where missing, and returns when they are set (the full-text index
    /// of every message built, on a cache that had none).
    package static func prepareIndexes(_ database: RecordDatabase) throws {
        for (type, entries) in Dictionary(grouping: ChatSchema.indexes, by: \.type) {
            let existing = try database.indexes(ofType: type)
            for entry in entries where !(existing[entry.field]?.isSuperset(of: entry.options) ?? false) {
                try database.setIndexes(entry.options.union(existing[entry.field] ?? []), forField: entry.field, ofType: type)
            }
        }
    }

    /// Opens the shared file if nothing has yet, which another process's lock can hold up; one read does it.
    public func openSharedDatabase() throws {
        _ = try container.publicDatabase.currentChangeToken()
    }

    /// Whether this process queued the message (as opposed to another process of the same user).
    public func queuedHere(_ id: MessageID) -> Bool { queuedHere.withLock { $0.contains(id) } }

    func remember(_ record: Record) { queuedHere.withLock { _ = $0.insert(MessageID(record.recordID)) } }

    /// The OS account this process runs as.
    public var user: UserID { UserID(userRecordID) }

    /// The OS account's user record, for queries and record names.
    var userRecordID: RecordID { container.currentUserRecordID }
}

