/// Whether a message mentions a handle: as a word (`ada`, `@ada`, `ada:`), ignoring case.
///
/// The full-screen client's highlight and bell, and both front ends' `--notify-command`, use this one test.
public enum Mentions {
    public static func contains(_ text: String, handle: String) -> Bool {
        let handle = handle.lowercased()
        guard !handle.isEmpty else { return false }
        return text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" && $0 != "-" && $0 != "." })
            .contains { $0 == handle }
    }
}
