import Foundation
import RecordStore

/// A person as their public user record shows them.
public struct UserProfile: Hashable, Sendable {
    public var user: RecordID
    public var handle: String
    public var firstName: String?
    public var lastName: String?

    init?(_ record: Record) {
        guard record.recordType == ChatSchema.userType, let handle = record["handle"]?.stringValue else { return nil }
        user = record.recordID
        self.handle = handle
        firstName = record["firstName"]?.stringValue
        lastName = record["lastName"]?.stringValue
    }
}

extension ChatClient {
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
