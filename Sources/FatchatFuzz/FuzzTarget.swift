import Foundation

/// One fuzz target: a decoder of untrusted input and the harness that feeds it bytes.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// `FieldCoding.decode` over `StoredJSON.parse`: a record's `fields` or a change's `previous` column.
    case storedFields = "stored-fields"
    /// `changes(after:)` on rows of the `change` and `record` tables holding any values their schema lets in.
    case changeRows = "change-rows"
    /// The same, with NULL allowed anywhere: a member rewrote the schema, which only its check on open (issue 11 item 8) refuses.
    case changeRowsAnySchema = "change-rows-any-schema"
    /// `QueryPredicate(format:argumentArray:)`, then the predicate evaluated in memory and run as SQL.
    case predicate
    /// `BotInput.json` and `BotInput.plain` on the lines of the bot's standard input.
    case botInput = "bot-input"

    /// The target named by `FATCHAT_FUZZ_TARGET`, which `main` sets from its first argument.
    static var chosen: FuzzTarget? {
        getenv(FatchatFuzz.targetVariable).flatMap { FuzzTarget(rawValue: String(cString: $0)) }
    }

    /// Feeds `bytes` to the target; returns what happened, for replay. Only a trap is a finding.
    func run(_ bytes: [UInt8]) -> String {
        switch self {
        case .storedFields: StoredFieldsTarget.run(bytes)
        case .changeRows: ChangeRowsTarget.run(bytes, schema: .asMade)
        case .changeRowsAnySchema: ChangeRowsTarget.run(bytes, schema: .withoutNotNull)
        case .predicate: PredicateTarget.run(bytes)
        case .botInput: BotInputTarget.run(bytes)
        }
    }
}
