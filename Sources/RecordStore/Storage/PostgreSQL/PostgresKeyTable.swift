import Foundation

/// Accounts' public keys in `fatchat.identity`: one row per account, owned by the role whose name the account carries.
///
/// The server stamps each row's `role` from `current_user` and refuses an
/// account whose name is not that role's (`_<uid>_<role>`), and row-level
/// security lets only that role replace it; the reader checks the role
/// again, so a row the table's owner wrote by hand for someone else is not believed.
struct PostgresKeyTable: PublishedKeyTable {
    let session: PostgresSession

    func publish(account: String, text: Data) throws {
        try session.withLink { try Self.publish(account: account, text: text, on: $0) }
    }

    /// Inserts or replaces `account`'s key row on `link`, inside whatever transaction it holds.
    static func publish(account: String, text: Data, on link: PostgresLink) throws {
        var arguments = PostgresArguments()
        let sql = """
            INSERT INTO fatchat.identity (account, key, published)
            VALUES (\(arguments.bind(account)), \(arguments.bind(String(decoding: text, as: UTF8.self))), \(arguments.bind(Date().timeIntervalSince1970)))
            ON CONFLICT (account) DO UPDATE SET key = excluded.key, published = excluded.published
            WHERE fatchat.identity.key IS DISTINCT FROM excluded.key
            """
        try link.execute(sql, arguments.binds)
    }

    func text(of account: String) throws -> Data? {
        try session.withLink { link in
            var arguments = PostgresArguments()
            guard let row = try link.rows("SELECT key, role::text FROM fatchat.identity WHERE account = \(arguments.bind(account))", arguments.binds).first else {
                return nil
            }
            let columns = PostgresColumns(row)
            guard account.hasSuffix("_" + (try columns.text(1, "role"))) else { return nil }
            return Data(try columns.text(0, "key").utf8)
        }
    }

    func accounts(endingWith userName: String) throws -> [String] {
        try session.withLink { link in
            var arguments = PostgresArguments()
            let name = arguments.bind(userName)
            let sql = "SELECT account FROM fatchat.identity WHERE account = \(name) OR right(account, length(\(name)) + 1) = '_' || \(name) ORDER BY account"
            return try link.rows(sql, arguments.binds).map { try PostgresColumns($0).text(0, "account") }
        }
    }
}
