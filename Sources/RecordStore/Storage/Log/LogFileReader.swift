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
    static func header(of fd: Int32) -> Result<(LogHeader, Int), LogFormat.HeaderProblem> {
        let size = LogFormat.magic.count + 8 + LogFormat.maximumHeaderBody + 4
        var buffer = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + filled }, size - filled, off_t(filled)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return buffer.withUnsafeBytes { LogFormat.decodeHeader(UnsafeRawBufferPointer(rebasing: $0[0..<filled])) }
    }

    /// Reads whole entries from `offset` on, at most `limit` of them.
    static func scan(_ fd: Int32, from offset: Int64, limit: Int = .max) -> Scan {
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
            var buffer = [UInt8](repeating: 0, count: chunk)
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, chunk, off_t(scan.end) + off_t(pending.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                scan.stop = .unreadable(DirectoryHandle.reason(errno))
                return scan
            }
            if count == 0 {
                scan.stop = pending.isEmpty ? .caughtUp : .incomplete
                return scan
            }
            pending.append(contentsOf: buffer[0..<count])
        }
    }
}
