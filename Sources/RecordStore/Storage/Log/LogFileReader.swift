import Foundation

/// Reads entries from an open log file, trusting only bytes it has read and checked.
///
/// A size from `stat` or a listing may be stale on a network filesystem, so
/// neither decides how much to read: the reader reads until the file ends,
/// and keeps only whole entries whose checksum holds. It stops at the first
/// torn or bad entry and reports where it stopped, so the caller reads from
/// there again next time; an entry is never allocated before its bytes are there.
enum LogFileReader {
    /// How much one `pread` asks for.
    static let chunk = 1 << 20

    /// Why a scan ended.
    enum Stop: Equatable {
        /// The file ended right after a whole entry.
        case caughtUp
        /// The scan took as many entries as it was allowed; more may follow.
        case limit
        /// Part of an entry is there: a torn tail, or a writer still writing.
        case incomplete
        /// An entry's length or checksum is wrong.
        case bad(String)
        /// The file could not be read.
        case unreadable(String)
    }

    /// What one scan found.
    struct Scan {
        var entries: [LogEntry] = []
        /// Entries whose checksum held but whose contents made no sense: skipped.
        var malformed = 0
        /// The offset just past the last whole entry read: where the next scan starts.
        var end: Int64
        var stop: Stop
    }

    /// The header at the start of the file.
    static func header(of fd: Int32, direct: Bool = false) -> Result<(LogHeader, Int), LogFormat.HeaderProblem> {
        let size = LogFormat.magic.count + 8 + LogFormat.maximumHeaderBody + 4
        var bytes: [UInt8] = []
        while bytes.count < size {
            guard case .success(let more) = read(fd, at: Int64(bytes.count), count: size - bytes.count, direct: direct), !more.isEmpty else { break }
            bytes += more
        }
        return bytes.withUnsafeBytes { LogFormat.decodeHeader($0) }
    }

    /// The alignment of a direct read's offset, length and buffer: a page, which satisfies every disk a server may use.
    static let directAlignment = 4096

    /// Up to `count` bytes at `offset`; empty at the end of the file.
    ///
    /// With `direct` (a file opened with O_DIRECT), the read starts at the aligned offset just
    /// before `offset`, never at it: a FUSE kernel answers a read at or past the size it cached
    /// with nothing, without asking the daemon, but passes on one that starts before it, and the
    /// daemon returns every byte there is. GlusterFS's server then reads its disk with O_DIRECT
    /// too, which fails unless offset, length and buffer are aligned.
    static func read(_ fd: Int32, at offset: Int64, count: Int, direct: Bool) -> Result<[UInt8], Errno> {
        let alignment = Int64(directAlignment)
        let start = direct && offset > 0 ? (offset - 1) / alignment * alignment : offset
        let skip = Int(offset - start)
        let length = direct ? (skip + count + directAlignment - 1) / directAlignment * directAlignment : count
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: directAlignment)
        defer { buffer.deallocate() }
        while true {
            let got = pread(fd, buffer, length, off_t(start))
            if got < 0 {
                if errno == EINTR { continue }
                return .failure(Errno(errno))
            }
            guard got > skip else { return .success([]) }
            return .success(Array(UnsafeRawBufferPointer(start: buffer + skip, count: min(got - skip, count))))
        }
    }

    /// An `errno` value.
    struct Errno: Error {
        var code: Int32
        init(_ code: Int32) { self.code = code }
    }

    /// The whole entries after `offset`, where a scan stopped at bytes that are not an entry: every later
    /// offset is tried as the start of one, and from each that holds, entries are read in turn until the
    /// next damage, to the end of the file. `unreadable` is set if the file could not be read; the search
    /// then stops. Only a writer reading its own log calls this, so the cost of trying each offset is its own.
    static func entriesPastDamage(_ fd: Int32, from offset: Int64, direct: Bool = false) -> (entries: [LogEntry], unreadable: String?) {
        var bytes: [UInt8] = []
        while true {
            switch read(fd, at: offset + Int64(bytes.count), count: chunk, direct: direct) {
            case .failure(let error):
                return ([], DirectoryHandle.reason(error.code))
            case .success(let more) where more.isEmpty:
                var entries: [LogEntry] = []
                bytes.withUnsafeBytes { raw in
                    var at = 1
                    while at + LogFormat.framePrefix <= raw.count {
                        if case .entry(let decoded, let size) = LogFormat.frame(UnsafeRawBufferPointer(rebasing: raw[at...])) {
                            if case .success(let entry) = decoded { entries.append(entry) }
                            at += size
                        } else {
                            at += 1
                        }
                    }
                }
                return (entries, nil)
            case .success(let more):
                bytes += more
            }
        }
    }

    /// Reads whole entries from `offset` on, at most `limit` of them; `direct` as in `read`.
    static func scan(_ fd: Int32, from offset: Int64, limit: Int = .max, direct: Bool = false) -> Scan {
        var scan = Scan(end: offset, stop: .caughtUp)
        // Bytes read but not yet taken as entries; they start at `scan.end` in the file.
        var pending: [UInt8] = []
        while true {
            var consumed = 0
            var stop: Stop?
            pending.withUnsafeBytes { raw in
                while stop == nil {
                    if scan.entries.count >= limit {
                        stop = .limit
                        break
                    }
                    switch LogFormat.frame(UnsafeRawBufferPointer(rebasing: raw[consumed...])) {
                    case .entry(let decoded, let size):
                        consumed += size
                        switch decoded {
                        case .success(let entry): scan.entries.append(entry)
                        case .failure: scan.malformed += 1
                        }
                    case .incomplete:
                        return
                    case .bad(let reason):
                        stop = .bad(reason)
                    }
                }
            }
            pending.removeFirst(consumed)
            scan.end += Int64(consumed)
            if let stop {
                scan.stop = stop
                return scan
            }
            switch read(fd, at: scan.end + Int64(pending.count), count: chunk, direct: direct) {
            case .failure(let error):
                scan.stop = .unreadable(DirectoryHandle.reason(error.code))
                return scan
            case .success(let bytes) where bytes.isEmpty:
                scan.stop = pending.isEmpty ? .caughtUp : .incomplete
                return scan
            case .success(let bytes):
                pending.append(contentsOf: bytes)
            }
        }
    }
}
