import Foundation

/// A Swift value that can fill a `%@` in a predicate format.
public protocol PredicateArgument: Sendable {
    /// The value as a field value; a `RecordID` becomes a reference to it, an array a list.
    var predicateValue: FieldValue { get }
}

extension String: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .string(self) }
}

extension Int: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .int64(Int64(self)) }
}

extension Int64: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .int64(self) }
}

extension Double: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .double(self) }
}

extension Date: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .date(self) }
}

extension Location: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .location(self) }
}

extension RecordID: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .reference(Reference(recordID: self)) }
}

extension Reference: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .reference(self) }
}

extension FieldValue: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { self }
}

extension Array: PredicateArgument where Element: PredicateArgument {
    /// The value this argument stands for in a predicate.
    public var predicateValue: FieldValue { .list(map(\.predicateValue)) }
}
