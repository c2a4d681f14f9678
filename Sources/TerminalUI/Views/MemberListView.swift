import FatchatCore

/// The member list pane: handles in their colours, sorted by name.
enum MemberListView {
    /// Draws each member as messages show its sender: with its account when the handle could pass for another.
    static func draw(_ members: [MemberItem], accounts: AccountDirectory, in rect: Rect, on screen: inout Screen) {
        let sorted = members.sorted { $0.handle.lowercased() < $1.handle.lowercased() }
        for (offset, member) in sorted.prefix(rect.height).enumerated() {
            var style = Style(foreground: HandleColor.of(userID: member.userID))
            if member.presence != nil, member.presence != .online { style = style.adding(.dim) }
            screen.write(mark(member.presence) + accounts.label(handle: member.handle, user: member.userID), row: rect.row + offset,
                         column: rect.column, style: style, limit: rect.column + rect.width)
        }
        if sorted.count > rect.height, rect.height > 0 {
            let more = "+\(sorted.count - rect.height + 1) more"
            screen.fill(row: rect.row + rect.height - 1, column: rect.column, width: rect.width, height: 1)
            screen.write(more, row: rect.row + rect.height - 1, column: rect.column, style: Style(attributes: [.dim]), limit: rect.column + rect.width)
        }
    }

    /// The mark before a member: `●` online, `◐` away, `○` offline; none when unknown (an account that never wrote one).
    static func mark(_ presence: PresenceState?) -> String {
        switch presence {
        case .online: "● "
        case .away: "◐ "
        case .offline: "○ "
        case nil: ""
        }
    }
}
