/// Why the terminal could not be set up, with a message a person can act on.
public enum TerminalError: Error, Equatable, CustomStringConvertible {
    /// `TERM` is not set.
    case noTerminalType
    /// ncurses has no description of this `TERM`.
    case unknownTerminalType(String)
    /// Standard input or output is not a terminal.
    case notATerminal
    /// A system call failed.
    case system(String, Int32)

    /// The message shown to the user.
    public var description: String {
        switch self {
        case .noTerminalType:
            return "TERM is not set; set it to your terminal's type, e.g. TERM=xterm-256color."
        case .unknownTerminalType(let type):
            return "Unknown terminal type '\(type)'; no terminfo entry found. Try TERM=xterm-256color, or install ncurses-term."
        case .notATerminal:
            return "Standard input and output must be a terminal for the full-screen client."
        case .system(let call, let code):
            return "\(call) failed with errno \(code)."
        }
    }
}
