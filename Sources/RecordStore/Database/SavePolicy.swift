/// What a save does when the database already has the record, as CloudKit's `CKModifyRecordsOperation.RecordSavePolicy`.
public enum SavePolicy: String, Sendable, CaseIterable {
    /// Save only if the stored change tag is the one this copy was fetched with; else `serverRecordChanged`.
    case ifServerRecordUnchanged
    /// Write only the keys this copy changed, over whatever is stored.
    case changedKeys
    /// Replace the stored fields with all of this copy's fields.
    case allKeys
}

/// The outcome of a modify operation: one result per item.
public struct ModifyResult: Sendable {
    public var saveResults: [RecordID: Result<Record, StoreError>] = [:]
    public var deleteResults: [RecordID: Result<Void, StoreError>] = [:]
    /// Records deleted because they held a `deleteSelf` reference to a deleted record.
    public var cascadedDeletions: [RecordID] = []

    /// An empty result, to merge the results of several operations into.
    public init() {}

    /// `partialFailure` carrying each failed item's error, or `nil` if every item succeeded.
    public var partialFailure: StoreError? {
        var errors: [RecordID: StoreError] = [:]
        for (id, result) in saveResults { if case .failure(let e) = result { errors[id] = e } }
        for (id, result) in deleteResults { if case .failure(let e) = result { errors[id] = e } }
        guard !errors.isEmpty else { return nil }
        let count = saveResults.count + deleteResults.count
        let summary = errors.count == 1 ? errors.values.first.map(\.description) ?? "" : "\(errors.count) of \(count) items failed"
        return StoreError(.partialFailure, "Some items failed: \(summary)", partialErrors: errors)
    }

    /// Throws `partialFailure` if any item failed.
    public func check() throws {
        if let partialFailure { throw partialFailure }
    }
}
