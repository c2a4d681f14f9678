import FatchatCore
import Foundation

/// Options that do not come from the chat state.
public struct RenderOptions: Sendable, Equatable {
    /// False for `NO_COLOR` or a terminal without colours: no colour at all, attributes kept.
    public var usesColor: Bool
    /// The styles.
    public var theme: Theme
    /// The time zone for message times.
    public var timeZone: TimeZone
    /// Message lines kept between frames; shared by copies of these options.
    public let lineCache = MessageLineCache()

    /// Creates options.
    public init(usesColor: Bool = true, theme: Theme = Theme(), timeZone: TimeZone = .current) {
        self.usesColor = usesColor
        self.theme = theme
        self.timeZone = timeZone
    }

    /// Options that draw alike are equal, whatever their caches hold.
    public static func == (lhs: RenderOptions, rhs: RenderOptions) -> Bool {
        lhs.usesColor == rhs.usesColor && lhs.theme == rhs.theme && lhs.timeZone == rhs.timeZone
    }

    /// Options from the environment: colour unless `NO_COLOR` is set to anything non-empty.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> RenderOptions {
        RenderOptions(usesColor: (environment["NO_COLOR"] ?? "").isEmpty)
    }
}

/// Draws a whole frame of the client from a ``ClientViewState`` into a ``Screen``.
public enum ClientRenderer {
    /// Renders one frame of `width`×`height` cells; the input line shows `editor`.
    public static func render(_ state: ClientViewState, editor: LineEditor, width: Int, height: Int,
                              options: RenderOptions = RenderOptions()) -> Screen {
        var screen = Screen(width: width, height: height)
        let theme = options.theme
        let layout = Layout(width: width, height: height, showsMemberList: state.showsMemberList, inputRows: state.inputRows)

        BarViews.drawTitle(state.title, in: layout.title, on: &screen, theme: theme)
        if let rect = layout.channelList {
            ChannelListView.draw(state.channels, in: rect, on: &screen, theme: theme)
            drawSeparator(column: rect.column + rect.width, rect: rect, on: &screen, theme: theme)
        }
        let viewport = messageViewport(state, layout: layout, options: options)
        MessageView.draw(viewport, showsNewBelow: state.hasNewMessagesBelow, in: layout.messages, on: &screen, theme: theme)
        if let rect = layout.memberList {
            drawSeparator(column: rect.column - 1, rect: rect, on: &screen, theme: theme)
            MemberListView.draw(state.members, accounts: accounts(state), in: rect, on: &screen)
        }
        BarViews.drawStatus(state.status, in: layout.status, on: &screen, theme: theme)
        InputView.draw(editor, channelName: state.title?.name, in: layout.input, on: &screen)
        if let banner = state.banner, banner.expiresAt > state.now {
            OverlayViews.drawBanner(banner, in: Rect(row: layout.messages.row, column: layout.messages.column,
                                                     width: layout.messages.width, height: min(1, layout.messages.height)),
                                    on: &screen, theme: theme)
        }
        if state.showsHelp {
            OverlayViews.drawHelp(state.helpText, width: width, height: max(0, height - 1), on: &screen, theme: theme)
        }
        return options.usesColor ? screen : screen.withoutColor
    }

    /// The visible window of message lines for this state and size; its
    /// ``MessageViewport/reachesOldest`` tells the client to load an older page.
    public static func messageViewport(_ state: ClientViewState, width: Int, height: Int,
                                       options: RenderOptions = RenderOptions()) -> MessageViewport {
        let layout = Layout(width: width, height: height, showsMemberList: state.showsMemberList, inputRows: state.inputRows)
        return messageViewport(state, layout: layout, options: options)
    }

    /// The scroll position after moving `lines` towards older messages (negative: newer),
    /// e.g. a page for PgUp is the message view's height.
    public static func scroll(_ state: ClientViewState, by lines: Int, width: Int, height: Int,
                              options: RenderOptions = RenderOptions()) -> ScrollPosition {
        let layout = Layout(width: width, height: height, showsMemberList: state.showsMemberList, inputRows: state.inputRows)
        let all = messageLines(state, width: layout.messages.width, options: options)
        return MessageViewport.scroll(state.scroll, by: lines, lines: all, height: layout.messages.height)
    }

    /// The scroll position that puts a message's last line at the bottom of the message view,
    /// so that what is on screen is that message and what came before it.
    public static func scroll(_ state: ClientViewState, endingAt messageID: String, width: Int, height: Int,
                              options: RenderOptions = RenderOptions()) -> ScrollPosition {
        let layout = Layout(width: width, height: height, showsMemberList: state.showsMemberList, inputRows: state.inputRows)
        let all = messageLines(state, width: layout.messages.width, options: options)
        guard let last = all.lastIndex(where: { $0.messageID == messageID }) else { return state.scroll }
        let top = max(0, last - layout.messages.height + 1)
        guard top < max(0, all.count - layout.messages.height) else { return .bottom }
        return .anchored(messageID: all[top].messageID, line: all[top].index)
    }

    /// Rows in the message view for a screen size: the page size for PgUp/PgDn.
    public static func messageRows(width: Int, height: Int, showsMemberList: Bool, inputRows: Int = 1) -> Int {
        Layout(width: width, height: height, showsMemberList: showsMemberList, inputRows: inputRows).messages.height
    }

    private static func messageViewport(_ state: ClientViewState, layout: Layout, options: RenderOptions) -> MessageViewport {
        let lines = messageLines(state, width: layout.messages.width, options: options)
        return MessageViewport(lines: lines, height: layout.messages.height, position: state.scroll)
    }

    private static func messageLines(_ state: ClientViewState, width: Int, options: RenderOptions) -> [MessageLine] {
        MessageLines(width: width, myHandle: state.myHandle, highlightWords: state.highlightWords, theme: options.theme, timeZone: options.timeZone)
            .lines(for: state.messages, firstUnreadID: state.firstUnreadMessageID, accounts: accounts(state), cache: options.lineCache)
    }

    /// How a sender reads anywhere in the client (messages, members, notices, notifications):
    /// the handle, with the account when the handle could pass for someone on screen.
    public static func sender(handle: String, user: String, in state: ClientViewState) -> String {
        accounts(state).label(handle: handle, user: user)
    }

    /// The accounts on screen: the channel's members and the senders of the loaded messages.
    static func accounts(_ state: ClientViewState) -> AccountDirectory {
        var accounts = AccountDirectory()
        for member in state.members { accounts.learn(user: member.userID, handle: member.handle) }
        for message in state.messages where !message.isNotice { accounts.learn(user: message.userID, handle: message.handle) }
        return accounts
    }

    private static func drawSeparator(column: Int, rect: Rect, on screen: inout Screen, theme: Theme) {
        for row in rect.row..<rect.row + rect.height {
            screen.write("│", row: row, column: column, style: theme.separator)
        }
    }
}
