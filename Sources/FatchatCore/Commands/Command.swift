/// One thing a person (or a bot) asks the chat to do; the full-screen client and the bot share it.
public enum Command: Equatable, Sendable {
    /// Post text to a channel (the current one when `channel` is nil).
    case post(channel: String?, text: String)
    case join(channel: String)
    case leave(channel: String?)
    case create(channel: String, topic: String?)
    case delete(channel: String)
    /// Show the topic (`text` nil) or set it.
    case topic(channel: String?, text: String?)
    case nick(handle: String)
    case who(channel: String?)
    case channels
    case attach(path: String, channel: String?)
    case save(message: String, path: String)
    case edit(message: String, text: String)
    case deleteMessage(message: String)
    case search(text: String)
    /// Post a reply to a message of the current channel.
    case reply(message: String, text: String)
    /// Add my reaction to a message; one of each emoji per person.
    case react(message: String, reaction: String)
    /// Take my reaction off a message.
    case unreact(message: String, reaction: String)
    /// Show a message's reactions and who made them.
    case reactions(message: String)
    /// Post an action (`/me waves`), shown as `* alice waves`.
    case action(channel: String?, text: String)
    /// Change or list the words that count as mentions of me.
    case highlight(HighlightChange)
    /// Send a direct message, sealed to `to` and to me.
    case directMessage(to: String, text: String)
    /// Show the direct messages between me and `with`.
    case query(with: String)
    /// Send again the outgoing changes that failed for good.
    case retry
    /// Drop the outgoing changes that failed for good.
    case discard
    case help(topic: String?)
    case quit
    /// Say I am away, with a reason; `nil` (`/away` alone) toggles: back when away by choice, else away.
    case away(reason: String?)
    /// Say I am back.
    case back
    /// Say I am typing in a channel (the current one when nil); never a message.
    case typing(channel: String?)
    /// Open the Nth most recent link of the current channel (1 is the newest).
    case open(index: Int)
}

/// What `/highlight` does.
public enum HighlightChange: Equatable, Sendable {
    case add(String)
    case remove(String)
    case list
}

/// A command line that could not be understood; the message says what would work.
public struct CommandError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
