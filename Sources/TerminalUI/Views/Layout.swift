/// A rectangle of screen cells.
public struct Rect: Sendable, Equatable {
    /// Top row.
    public var row: Int
    /// Left column.
    public var column: Int
    /// Width in cells.
    public var width: Int
    /// Height in rows.
    public var height: Int

    /// Creates a rectangle; negative sizes become zero.
    public init(row: Int, column: Int, width: Int, height: Int) {
        self.row = row
        self.column = column
        self.width = max(0, width)
        self.height = max(0, height)
    }
}

/// Where each pane goes for a terminal size.
///
/// The title is the top row, the status line and the input line the two bottom rows. Between
/// them: the channel list on the left (from 60 columns), the messages, and the member list on
/// the right when asked for, the channel list shows and the messages keep 40 columns: it goes first.
public struct Layout: Sendable, Equatable {
    /// The channel list, or nil when the screen is too narrow.
    public var channelList: Rect?
    /// The member list, or nil when off or too narrow.
    public var memberList: Rect?
    /// The title line.
    public var title: Rect
    /// The message view.
    public var messages: Rect
    /// The status line.
    public var status: Rect
    /// The input line.
    public var input: Rect

    /// Width of the channel and member panes, without their separator column.
    public static let paneWidth = 16
    /// Narrowest screen that still shows the channel list.
    public static let channelListMinimumWidth = 60
    /// Narrowest message view the member list may leave.
    public static let messagesMinimumWidth = 40

    /// Computes the layout for a `width`×`height` screen, the input taking `inputRows` rows
    /// (a multi-line draft) as long as the messages keep at least 3.
    public init(width: Int, height: Int, showsMemberList: Bool, inputRows: Int = 1) {
        let rows = max(1, min(inputRows, height - 6))
        let middleTop = min(1, height)
        let middleHeight = max(0, height - 2 - rows)
        title = Rect(row: 0, column: 0, width: width, height: min(1, height))
        status = Rect(row: max(0, height - 1 - rows), column: 0, width: width, height: height >= 3 ? 1 : 0)
        input = Rect(row: max(0, height - rows), column: 0, width: width, height: height >= 2 ? rows : 0)

        var left = 0
        var right = width
        channelList = nil
        memberList = nil
        if width >= Self.channelListMinimumWidth {
            channelList = Rect(row: middleTop, column: 0, width: Self.paneWidth, height: middleHeight)
            left = Self.paneWidth + 1
        }
        if showsMemberList, channelList != nil, right - left - Self.paneWidth - 1 >= Self.messagesMinimumWidth {
            memberList = Rect(row: middleTop, column: width - Self.paneWidth, width: Self.paneWidth, height: middleHeight)
            right = width - Self.paneWidth - 1
        }
        messages = Rect(row: middleTop, column: left, width: right - left, height: middleHeight)
    }
}
