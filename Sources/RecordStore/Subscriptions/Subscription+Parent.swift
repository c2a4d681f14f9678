import Foundation

extension Subscription.Parent {
    /// Whether `change`, which shows the record with the parent's ID as it is now, shows the parent gone.
    ///
    /// The record read with a change is the current one, so a change from
    /// before the parent was (re-)created does not end a subscription saved for it.
    func isGone(after change: RecordChange) -> Bool {
        guard change.recordID == recordID else { return false }
        return !(change.record.map(isSame) ?? false)
    }
}

extension Subscription {
    /// The records a query subscription's predicate names: the parent that a subscription saved before parents existed implies.
    var namedRecords: Set<RecordID> {
        guard case .query(_, let predicate, _, _) = kind else { return [] }
        func references(_ value: FieldValue) -> [RecordID] {
            switch value {
            case .reference(let reference): [reference.recordID]
            case .list(let items): items.flatMap(references)
            default: []
            }
        }
        return Set(predicate.arguments.flatMap(references))
    }
}
