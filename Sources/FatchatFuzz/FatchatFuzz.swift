import Foundation

/// Fuzz targets for the decoders of untrusted input (issue 11), one binary for all of them.
///
/// Built by `scripts/fuzz.sh` with `-sanitize=fuzzer -DFUZZING`, it hands its
/// arguments to libFuzzer: `FatchatFuzz TARGET [libFuzzer options] [corpus…]`.
/// Built plainly (`swift build`), it replays inputs instead:
/// `FatchatFuzz TARGET FILE|DIRECTORY…` prints what each input did, so a
/// crash that libFuzzer saved can be rerun with a readable Swift backtrace.
@main
enum FatchatFuzz {
    /// Names the target for the processes libFuzzer starts itself (`-merge=1`), whose arguments no longer do.
    static let targetVariable = "FATCHAT_FUZZ_TARGET"

    static func main() {
        var arguments = CommandLine.arguments
        if arguments.count > 1, FuzzTarget(rawValue: arguments[1]) != nil {
            setenv(targetVariable, arguments.remove(at: 1), 1)
        }
        guard let target = FuzzTarget.chosen else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: FatchatFuzz TARGET [libFuzzer options | files…]; TARGET is one of: \(names)\n".utf8))
            exit(2)
        }
        #if FUZZING
        exit(LibFuzzer.run(target, arguments: arguments))
        #else
        exit(Replay.run(target, paths: Array(arguments.dropFirst())))
        #endif
    }
}
