import FatchatCore
import Foundation
import RecordStore

/// Channel names for the shells' completion of a CHANNEL argument, read from the container
/// that the words typed so far name (`--container DIR`), else the usual default.
///
/// The shell runs this on every Tab, so it never creates a container, never waits long on
/// a lock, and gives nothing rather than an error. A name from the shared file reaches the
/// shell only if it is a valid channel name, so it cannot carry a control character.
enum ChannelCompletion {
    static func names(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        guard let global = try? GlobalOptions.parse(containerOption(in: words).map { ["--container", $0] } ?? []) else { return [] }
        let typed = prefix.hasPrefix("#") ? String(prefix.dropFirst()) : prefix
        let container: Container
        do {
            container = try LockPatience.brief { try global.openContainer(create: false, catchUp: false) }
        } catch {
            return []
        }
        let channels = (try? LockPatience.brief { try ChatClient.channels(in: container) }) ?? []
        return channels.map(\.name.display)
            .filter { (try? ChannelName($0)) != nil && $0.hasPrefix(typed) }
    }

    /// The value of the last `--container DIR` or `--container=DIR` among the words.
    static func containerOption(in words: [String]) -> String? {
        var found: String?
        for (position, word) in words.enumerated() {
            if word == "--container", position + 1 < words.count {
                found = words[position + 1]
            } else if word.hasPrefix("--container=") {
                found = String(word.dropFirst("--container=".count))
            }
        }
        return found
    }
}
