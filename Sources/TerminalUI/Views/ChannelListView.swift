/// The channel list pane: channels by creation date, then direct conversations as given, with unread
/// counts and a mention mark.
enum ChannelListView {
    /// The entries shown in a pane `height` rows high, top first: channels oldest first, then the
    /// direct conversations as given, scrolled so the current one shows.
    static func visible(_ channels: [ChannelItem], height: Int) -> [ChannelItem] {
        let sorted = channels.filter { !$0.isDirect }.sorted { ($0.createdAt, $0.name) < ($1.createdAt, $1.name) }
            + channels.filter(\.isDirect)
        let current = sorted.firstIndex { $0.isCurrent } ?? 0
        // Keep the current channel visible when the list is longer than the pane.
        let first = current >= height ? current - height + 1 : 0
        return Array(sorted.dropFirst(first).prefix(max(0, height)))
    }

    static func draw(_ channels: [ChannelItem], in rect: Rect, on screen: inout Screen, theme: Theme) {
        for (offset, channel) in visible(channels, height: rect.height).enumerated() {
            let row = rect.row + offset
            var style = Style.plain
            if channel.unreadCount > 0 { style = theme.unreadChannel }
            if channel.hasMention { style = theme.mentionChannel }
            if channel.isCurrent { style = theme.currentChannel }
            var badge = ""
            if channel.unreadCount > 0 { badge = channel.unreadCount > 999 ? "999+" : String(channel.unreadCount) }
            if channel.hasMention { badge = "@" + badge }
            screen.fill(row: row, column: rect.column, width: rect.width, height: 1, style: style)
            let nameLimit = rect.column + rect.width - (badge.isEmpty ? 0 : badge.count + 1)
            screen.write(channel.name, row: row, column: rect.column, style: style, limit: nameLimit)
            if !badge.isEmpty {
                screen.write(badge, row: row, column: rect.column + rect.width - badge.count, style: style, limit: rect.column + rect.width)
            }
        }
    }
}
