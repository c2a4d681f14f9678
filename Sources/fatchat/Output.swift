import FatchatCore
import Foundation

/// The command line's output edge. A plain line is made inert here, once, whatever it holds;
/// a line from ``EventFormatter`` or ``JSONText`` is inert already and goes out with ``say(_:)``.
enum Output {
    /// A plain line to stdout, made inert: record names, types, keys, problems, paths.
    static func line(_ text: String) {
        say(Sanitizer.inert(text))
    }

    /// `fatchat: message` on stderr, made inert: an error may quote the shared file (a
    /// trigger's message, a record name).
    static func error(_ message: String) {
        note("fatchat: " + message)
    }

    /// A line for the person on stderr, made inert; a newline inside it shows as `^J`.
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((Sanitizer.inert(text) + "\n").utf8))
    }

    /// A question on stderr, made inert, with no line break: the answer is typed after it.
    static func ask(_ question: String) {
        FileHandle.standardError.write(Data(Sanitizer.inert(question).utf8))
    }
}

/// Writes a line to stdout at once, so a pipe sees it while the command keeps running.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
