import Foundation
import RecordStore

/// A person as their public user record shows them.
public struct UserProfile: Hashable, Sendable {
    public var user: UserID
    public var handle: String
    public var firstName: String?
    public var lastName: String?

    init?(_ record: Record) {
        guard record.recordType == ChatSchema.userType, let handle = record["handle"]?.stringValue else { return nil }
        user = UserID(record.recordID)
        self.handle = handle
        firstName = record["firstName"]?.stringValue
        lastName = record["lastName"]?.stringValue
    }
}

extension ChatClient {
    private static let preferencesID = RecordID(recordName: "preferences")

    /// The handle others see: `--handle`, else the one set with `/nick`, else the OS user name.
    public var handle: String {
        if let handleOverride { return handleOverride }
        if let saved = try? container.privateDatabase.record(for: Self.preferencesID)["handle"]?.stringValue { return saved }
        return container.currentUser.userName
    }

    /// Refuses a handle nobody may take.
    public static func checkHandle(_ handle: String) throws(CommandError) {
        let ok = (1...32).contains(handle.count) && handle.unicodeScalars.allSatisfy {
            !$0.properties.isWhitespace && !CharacterSet.controlCharacters.contains($0) && $0 != "#" && $0 != "@"
        }
        guard ok else { throw CommandError("'\(handle)' is not a valid handle: use 1 to 32 visible characters, no spaces, '#' or '@'.") }
    }

    /// Saves a new handle in the private database and in the public user record.
    public func setHandle(_ handle: String) throws {
        try Self.checkHandle(handle)
        var preferences = (try? container.privateDatabase.record(for: Self.preferencesID)) ?? Record(recordType: "Preferences", recordID: Self.preferencesID)
        preferences["handle"] = .string(handle)
        try container.privateDatabase.save(preferences, savePolicy: .changedKeys)
        try updateProfile { $0["handle"] = .string(handle) }
    }

    /// Changes the public user record: handle, names, and whether others may look this user up.
    func updateProfile(_ change: (inout Record) -> Void) throws {
        let id = userRecordID
        var record = (try? container.publicDatabase.record(for: id)) ?? Record(recordType: ChatSchema.userType, recordID: id)
        if record["handle"] == nil { record["handle"] = .string(handle) }
        change(&record)
        // Only this user writes their profile, a field at a time: no conflicts with an earlier version of it.
        try engine.send(saving: [Record(recordType: record.recordType, recordID: id, fields: record.fields, changeTag: nil)],
                        savePolicy: .changedKeys)
    }

    /// Sets the public profile. `discoverable` decides whether others may find this user by handle or e-mail.
    public func setProfile(firstName: String?, lastName: String?, email: String?, discoverable: Bool?) throws {
        try updateProfile { record in
            if let firstName { record["firstName"] = firstName.isEmpty ? nil : .string(firstName) }
            if let lastName { record["lastName"] = lastName.isEmpty ? nil : .string(lastName) }
            if let email { record["email"] = email.isEmpty ? nil : .string(email.lowercased()) }
            if let discoverable { record["discoverable"] = .int64(discoverable ? 1 : 0) }
        }
    }

    /// Finds people who opted in to discovery, by handle or (if `query` has an `@`) by e-mail.
    public func lookUp(_ query: String) throws -> [UserProfile] {
        let key = query.contains("@") ? "email" : "handle"
        let value = key == "email" ? query.lowercased() : query
        let found = try container.publicDatabase.records(
            matching: Query(recordType: ChatSchema.userType,
                            predicate: try QueryPredicate(format: "\(key) == %@ AND discoverable == 1", value)),
            desiredKeys: ["handle", "firstName", "lastName"], resultsLimit: 50)
        return found.records.compactMap(UserProfile.init)
    }
}

extension ChatClient {
    /// A message read from a record, marked unverified unless its creator's published key vouches for it as it is.
    func message(from record: Record) -> Message? {
        guard var message = Message(record) else { return nil }
        message.verified = container.accountKeys?.check(record).isVerified ?? false
        return message
    }

    /// `message(from:)` of each record, their signatures checked together (on several cores for a page).
    func messages(from records: [Record]) -> [Message] {
        let verdicts = container.accountKeys?.check(records)
        return records.indices.compactMap { index in
            guard var message = Message(records[index]) else { return nil }
            message.verified = verdicts?[index].isVerified ?? false
            return message
        }
    }

    /// The fingerprint of the key `account` published in this container, or nil when it published none that can be believed.
    public func fingerprint(of account: UserID) -> String? {
        container.accountKeys?.key(of: account.rawValue)?.fingerprint
    }

    /// The accounts that published a key whose user name, or whole account name, is `name`.
    public func accounts(named name: String) -> [UserID] {
        (container.accountKeys?.accounts(named: name) ?? []).map { UserID(rawValue: $0) }
    }
}
