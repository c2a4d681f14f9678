import Foundation

/// What a writer keeps when it compacts its own log, and why no reader can tell the difference.
///
/// The goal: for any other logs at all (late, concurrent or backdated entries
/// of other accounts, and other clients of this account), replaying the
/// compacted log with them must give the same cache as replaying the original
/// log with them. That holds for a new reader, which sees only the compacted
/// file, and for a reader that read all or part of the original first: it keeps
/// every entry it has seen, so its history lies between the compacted entries
/// and the original ones, and the argument below covers any such set.
///
/// **Why no save is dropped.** Dropping a save can change who owns a record.
/// Take this writer's saves s0 < s1 < s2 of one record, and bob's entries that
/// turn up later (a slow mount, a clock behind, or a backdated stamp): bob's
/// save b0 before s0, so s0 is ignored; bob's delete between s0 and s1, which
/// frees the record; s1 claims it; bob's save b1 between s1 and s2 is ignored;
/// s2 holds. Without s1, b1 claims the record and s2 is ignored. The same
/// happens inside what looks like one ownership period of ours if another
/// client of our account deletes the record between s0 and s1. Which saves
/// start an ownership period is decided by entries this writer may never have
/// seen, so a dropped save could leave readers of the original and readers of
/// the compacted log disagreeing for good.
///
/// **What is dropped instead: the content of superseded saves.** The rules look
/// at a save's clock stamp, account and kind to decide ownership, and at its
/// content only if it is the save that holds at the end. A save s of this
/// writer followed (in clock order) by any later entry e of the same record in
/// this log never holds at the end: after s counts, only its account's entries
/// change the record until its account deletes it; e is one of them, so by e at
/// the latest the record is either replaced by an account's save or freed by
/// its delete, and nothing afterwards brings s back. So s is kept as a *stub*:
/// same record, stamp, account, type and dates, with empty fields and change
/// tag. Ownership, the last delete's stamp (which decides `deleteSelf` holders)
/// and the record that holds come out the same for every history. A reader that
/// already holds s keeps its own copy (entries are keyed by record and stamp),
/// so an old reader gains no rows, no events and no changes from the new file.
///
/// **Deletes are all kept.** Whether a delete frees the record depends on who
/// owns it at its stamp, which entries still to arrive can change, and a delete
/// is about as small as a stub anyway.
///
/// **Also dropped:** entries no reader takes (another account's or client's,
/// outside the default zone, or undecodable) and a second entry with the same
/// record and stamp, which readers ignore because the first one is kept.
///
/// **Order.** Whole entries come first, in their original order, then stubs.
/// A reader catching up in steps reads a prefix; any prefix that holds a stub
/// of a record also holds that record's latest entry, so even a half-read
/// compacted log never shows a stub. A stub's fields are empty text, which does
/// not decode as fields, so were one ever to hold it would be hidden, not shown empty.
///
/// **Files.** The new file has the next header generation (readers key what they
/// have read on file identity plus generation, and read a replaced log again
/// from its start). It is written under a hidden name in the same directory,
/// made durable, renamed over the log, and the directory is synced. A crash
/// leaves either the old file or the new one under the log's name; a left-over
/// temporary file does not have a log's name, so readers never list it, and
/// the writer removes it the next time it opens or compacts its log.
enum LogCompaction {
    /// The automatic trigger's floor: smaller logs are never compacted on their own.
    static let automaticMinimum: Int64 = 1 << 20

    /// The hidden name a compacted log is written under before it is renamed into place.
    static func temporaryName(for client: UUID) -> String { "." + client.uuidString + ".log.compacting" }

    /// The entries the compacted log holds, in the order it holds them; `entries` are the log's, in file order.
    static func plan(_ entries: [LogEntry], header: LogHeader) -> [LogEntry] {
        // Only what a reader would take: the same checks as a poll's.
        var seen = Set<StampKey>()
        var taken: [LogEntry] = []
        var latest: [RecordID: HybridTime] = [:]
        for entry in entries where entry.account == header.account && entry.client == header.client && entry.recordID.zoneID.isDefault {
            guard seen.insert(StampKey(recordID: entry.recordID, time: entry.time)).inserted else { continue }
            taken.append(entry)
            latest[entry.recordID] = max(latest[entry.recordID] ?? entry.time, entry.time)
        }
        var whole: [LogEntry] = []
        var stubs: [LogEntry] = []
        for entry in taken {
            if case .save(let saved) = entry.change, let last = latest[entry.recordID], entry.time < last {
                var stub = entry
                stub.change = .save(LogEntry.Saved(recordType: saved.recordType, fields: "", created: saved.created,
                                                   modified: saved.modified, changeTag: ""))
                stubs.append(stub)
            } else {
                whole.append(entry)
            }
        }
        return whole + stubs
    }

    /// The bytes of the compacted log: `header` (already at its new generation), then `plan`'s entries.
    static func bytes(_ entries: [LogEntry], header: LogHeader) throws -> [UInt8] {
        var bytes = LogFormat.encode(header)
        for entry in plan(entries, header: header) { try LogFormat.encode(entry, into: &bytes) }
        return bytes
    }

    /// Whether the automatic trigger fires: the log is past the floor and at least twice what compaction keeps.
    static func isWorthIt(size: Int64, compacted: Int64) -> Bool {
        size >= automaticMinimum && size >= 2 * compacted
    }

    /// A record and a stamp of this writer: two entries with both the same are one entry to a reader.
    private struct StampKey: Hashable {
        var recordID: RecordID
        var time: HybridTime
    }
}
