import ArgumentParser
import Foundation
import RecordStore

/// Unbuffered output: a line is out of the process the moment `write(2)` returns.
enum WorkerOutput {
    static func line(_ text: String) {
        write(Data((text + "\n").utf8), to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        write(Data(("store-worker: " + text + "\n").utf8), to: STDERR_FILENO)
    }

    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        line(String(decoding: data, as: UTF8.self))
    }

    private static func write(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { buffer in
            guard var pointer = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = Foundation.write(fd, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                pointer += written
                remaining -= written
            }
        }
    }
}

/// The documented exit codes (sysexits.h values where one fits).
enum WorkerExit {
    static let storeError = ExitCode(1)
    static let temporaryFailure = ExitCode(75)
    static let permissionDenied = ExitCode(77)

    /// Runs `body`, turning a `StoreError` into a message on stderr and an exit code.
    static func reporting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            error.partialErrors.sorted { $0.key.recordName < $1.key.recordName }.forEach {
                WorkerOutput.error("  \($0.key.recordName): \($0.value)")
            }
            WorkerOutput.error(error.description)
            switch error.code {
            case .permissionFailure: throw permissionDenied
            case .zoneBusy, .serviceUnavailable: throw temporaryFailure
            default: throw storeError
            }
        }
    }
}
