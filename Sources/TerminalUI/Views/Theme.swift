/// The styles the views draw with, in one place.
public struct Theme: Sendable, Equatable {
    /// Title and status bars.
    public var bar = Style(attributes: [.reverse])
    /// The current channel in the list.
    public var currentChannel = Style(attributes: [.reverse, .bold])
    /// A channel with unread messages.
    public var unreadChannel = Style(attributes: [.bold])
    /// A channel whose unread messages mention me.
    public var mentionChannel = Style(foreground: 11, attributes: [.bold])
    /// The time column.
    public var time = Style(attributes: [.dim])
    /// My handle mentioned in a message.
    public var mention = Style(foreground: 11, attributes: [.bold, .underline])
    /// A message still in the outbox.
    public var pending = Style(attributes: [.dim])
    /// The mark after a message that could not be sent.
    public var failed = Style(foreground: 9, attributes: [.bold])
    /// The "(edited)" mark.
    public var edited = Style(attributes: [.dim])
    /// The quoted line above a reply.
    public var quote = Style(attributes: [.dim])
    /// Reaction counts after a message.
    public var reaction = Style(foreground: 6)
    /// Marker lines: first unread, new messages below.
    public var marker = Style(foreground: 9, attributes: [.bold])
    /// The notification banner.
    public var banner = Style(foreground: 11, attributes: [.reverse, .bold])
    /// Pane separators.
    public var separator = Style(attributes: [.dim])
    /// The help overlay.
    public var overlay = Style(attributes: [.reverse])

    /// The default theme.
    public init() {}

    /// Each style by the name a configuration file gives it.
    public static let names: [(name: String, style: WritableKeyPath<Theme, Style> & Sendable)] = [
        ("bar", \.bar), ("current-channel", \.currentChannel), ("unread-channel", \.unreadChannel),
        ("mention-channel", \.mentionChannel), ("time", \.time), ("mention", \.mention), ("pending", \.pending),
        ("failed", \.failed), ("edited", \.edited), ("quote", \.quote), ("reaction", \.reaction), ("marker", \.marker),
        ("banner", \.banner), ("separator", \.separator), ("overlay", \.overlay),
    ]
}
