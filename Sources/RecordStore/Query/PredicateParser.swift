import Foundation

/// Parses a predicate format into a `PredicateNode`, by recursive descent.
///
/// Grammar: `or := and (OR and)*`, `and := not (AND not)*`,
/// `not := NOT not | primary`, `primary := ( or ) | TRUEPREDICATE |
/// FALSEPREDICATE | comparison`. Errors name the 1-based character position.
struct PredicateParser {
    private var tokens: [PredicateToken] = []
    private var index = 0
    private let format: String
    private let arguments: [FieldValue]
    private var argumentIndex = 0
    /// Deep nesting is refused rather than allowed to exhaust the stack or SQLite's expression depth.
    private static let maximumDepth = 100
    private var depth = 0

    init(format: String, arguments: [FieldValue]) {
        self.format = format
        self.arguments = arguments
    }

    mutating func parse() throws -> PredicateNode {
        var lexer = PredicateLexer(format)
        tokens = try lexer.tokens()
        let node = try parseOr()
        guard current.kind == .end else {
            throw fail("expected AND, OR or the end of the predicate, found \(current.display)")
        }
        guard argumentIndex == arguments.count else {
            throw StoreError(.invalidArguments, "The predicate uses \(argumentIndex) arguments but \(arguments.count) were passed.")
        }
        return node
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[min(index, tokens.count - 1)] }

    private mutating func advance() { index += 1 }

    private func fail(_ what: String, at token: PredicateToken? = nil) -> StoreError {
        PredicateLexer.error(at: (token ?? current).position, what)
    }

    private func isWord(_ words: String...) -> Bool {
        if case .word(let w) = current.kind { return words.contains(w.uppercased()) }
        return false
    }

    private func isSymbol(_ symbols: String...) -> Bool {
        if case .symbol(let s) = current.kind { return symbols.contains(s) }
        return false
    }

    private mutating func expectSymbol(_ symbol: String, _ what: String) throws {
        guard isSymbol(symbol) else { throw fail("expected \(what), found \(current.display)") }
        advance()
    }

    // MARK: Logic

    private mutating func parseOr() throws -> PredicateNode {
        var terms = [try parseAnd()]
        while isWord("OR") || isSymbol("||") {
            advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws -> PredicateNode {
        var terms = [try parseNot()]
        while isWord("AND") || isSymbol("&&") {
            advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws -> PredicateNode {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw fail("the predicate nests more than \(Self.maximumDepth) levels deep") }
        if isWord("NOT") || isSymbol("!") {
            advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> PredicateNode {
        if isSymbol("(") {
            advance()
            let inner = try parseOr()
            try expectSymbol(")", "')' to close the parenthesis")
            return inner
        }
        if isWord("TRUEPREDICATE") { advance(); return .constant(true) }
        if isWord("FALSEPREDICATE") { advance(); return .constant(false) }
        return try parseComparison()
    }

    // MARK: Comparisons

    /// The left side of a comparison.
    private enum Left {
        case key(PredicateKey)
        case selfText
        case distance(String, Location)
        case value(FieldValue, PredicateToken)
    }

    private mutating func parseLeft() throws -> Left {
        let token = current
        switch token.kind {
        case .word(let word) where word.hasPrefix("distanceToLocation:"):
            guard word == "distanceToLocation:fromLocation:" else {
                throw fail("expected distanceToLocation:fromLocation:(key, location)")
            }
            advance()
            try expectSymbol("(", "'(' after distanceToLocation:fromLocation:")
            guard case .field(let key) = try parseKey() else {
                throw fail("expected a location field, not a system field", at: token)
            }
            try expectSymbol(",", "',' between the field and the location")
            let locationToken = current
            guard case .location(let location) = try parseValue() else {
                throw fail("expected a location (pass a Location as %@)", at: locationToken)
            }
            try expectSymbol(")", "')' after the location")
            return .distance(key, location)
        case .word(let word) where word.uppercased() == "SELF":
            advance()
            return .selfText
        case .word, .keyArgument:
            return .key(try parseKey())
        case .string, .integer, .real, .valueArgument:
            return .value(try parseValue(), token)
        default:
            throw fail("expected a field name, SELF, distanceToLocation:fromLocation: or '(', found \(token.display)")
        }
    }

    private mutating func parseKey() throws -> PredicateKey {
        let token = current
        var name: String
        switch token.kind {
        case .word(let word):
            name = word
        case .keyArgument:
            guard argumentIndex < arguments.count else { throw fail("%K has no argument to fill it") }
            guard case .string(let key) = arguments[argumentIndex] else {
                throw fail("%K needs a String argument naming a field, got \(arguments[argumentIndex].typeName)")
            }
            argumentIndex += 1
            name = key
        default:
            throw fail("expected a field name, found \(token.display)")
        }
        advance()
        if name.contains(".") {
            throw fail("key paths such as '\(name)' are not supported; compare the field itself", at: token)
        }
        let reserved = ["AND", "OR", "NOT", "IN", "BETWEEN", "CONTAINS", "BEGINSWITH", "TRUEPREDICATE", "FALSEPREDICATE"]
        guard !reserved.contains(name.uppercased()), let key = PredicateKey(name: name) else {
            throw fail("expected a field name, found '\(name)' (a field name is a letter followed by letters, digits or '_')", at: token)
        }
        return key
    }

    private mutating func parseValue() throws -> FieldValue {
        let token = current
        switch token.kind {
        case .string(let s): advance(); return .string(s)
        case .integer(let i): advance(); return .int64(i)
        case .real(let d): advance(); return .double(d)
        case .valueArgument:
            guard argumentIndex < arguments.count else {
                throw fail("%@ number \(argumentIndex + 1) has no argument; \(arguments.count) were passed")
            }
            argumentIndex += 1
            advance()
            return arguments[argumentIndex - 1]
        case .word(let w) where ["NIL", "NULL", "TRUE", "FALSE", "YES", "NO"].contains(w.uppercased()):
            throw fail("\(w) is not supported as a value; compare with a string, number, date or record ID")
        default:
            throw fail("expected a value (a string, a number or %@), found \(token.display)")
        }
    }

    /// Parses `{a, b, ...}` or a single value that must be a list.
    private mutating func parseList() throws -> [FieldValue] {
        if isSymbol("{") {
            advance()
            var items: [FieldValue] = []
            if isSymbol("}") { advance(); return items }
            while true {
                items.append(try parseValue())
                if isSymbol("}") { advance(); return items }
                try expectSymbol(",", "',' or '}' in the list")
            }
        }
        let token = current
        guard case .list(let items) = try parseValue() else {
            throw fail("expected a list: {a, b} or an array passed as %@", at: token)
        }
        return items
    }

    private mutating func parseComparison() throws -> PredicateNode {
        let left = try parseLeft()
        let opToken = current
        var op: String
        switch opToken.kind {
        case .symbol(let s) where ["==", "!=", "<", "<=", ">", ">="].contains(s): op = s
        case .word(let w) where ["BETWEEN", "IN", "BEGINSWITH", "CONTAINS"].contains(w.uppercased()): op = w.uppercased()
        case .word(let w) where ["LIKE", "MATCHES", "ENDSWITH", "ANY", "ALL", "SOME", "NONE"].contains(w.uppercased()):
            throw fail("\(w.uppercased()) is not supported; use ==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH or CONTAINS")
        default:
            throw fail("expected an operator (==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, CONTAINS), found \(opToken.display)")
        }
        advance()
        if isSymbol("[") {
            throw fail("options such as [c] or [cd] are not supported; BEGINSWITH is case-sensitive, and SELF CONTAINS already ignores case and accents")
        }
        let valueToken = current
        let build = ComparisonBuilder(opToken: opToken, valueToken: valueToken)
        switch left {
        case .key(let key):
            switch op {
            case "BETWEEN":
                let bounds = try parseList()
                guard bounds.count == 2 else { throw fail("BETWEEN needs two bounds, {low, high}", at: valueToken) }
                return .and([try build.compare(key, .greaterOrEqual, bounds[0]), try build.compare(key, .lessOrEqual, bounds[1])])
            case "IN":
                return try build.among(key, try parseList())
            case "BEGINSWITH":
                guard case .string(let prefix) = try parseValue() else { throw fail("BEGINSWITH needs a string", at: valueToken) }
                if key.isDate { throw fail("BEGINSWITH applies to text, not to a date", at: opToken) }
                return .beginsWith(key, prefix)
            case "CONTAINS":
                guard case .field(let name) = key else { throw fail("CONTAINS applies to a list field, not to a system field", at: opToken) }
                return .listContains(name, try build.scalar(try parseValue()))
            default:
                let value = try parseValue()
                if op == "!=" { return .not(try build.compare(key, .equal, value)) }
                return try build.compare(key, ComparisonOperator(rawValue: op) ?? .equal, value)
            }
        case .selfText:
            guard op == "CONTAINS" else { throw fail("SELF supports only CONTAINS (token search)", at: opToken) }
            guard case .string(let text) = try parseValue() else { throw fail("SELF CONTAINS needs a string", at: valueToken) }
            return .tokens(TextTokens.tokens(of: text))
        case .distance(let key, let location):
            guard let comparison = ComparisonOperator(rawValue: op), comparison != .equal else {
                throw fail("a distance compares with <, <=, > or >=", at: opToken)
            }
            let meters = try parseValue()
            guard let value = meters.doubleValue, value.isFinite else { throw fail("a distance compares with a number of meters", at: valueToken) }
            return .distance(key, location, comparison, value)
        case .value(let value, _):
            guard op == "IN" else { throw fail("a value on the left needs IN and a list field on the right (value IN key)", at: opToken) }
            guard case .field(let name) = try parseKey() else { throw fail("value IN key needs a list field on the right", at: valueToken) }
            return .listContains(name, try build.scalar(value))
        }
    }
}

/// Checks a comparison's value against its key and operator, and builds the node.
private struct ComparisonBuilder {
    let opToken: PredicateToken
    let valueToken: PredicateToken

    private func fail(_ what: String) -> StoreError { PredicateLexer.error(at: valueToken.position, what) }

    func scalar(_ value: FieldValue) throws -> PredicateValue {
        switch value {
        case .string(let s): return .text(s)
        case .int64(let i): return .integer(i)
        case .double(let d):
            guard d.isFinite else { throw fail("expected a finite number") }
            return .real(d)
        case .date(let d): return .real(d.timeIntervalSince1970)
        case .reference(let r): return .record(r.recordID)
        case .location: throw fail("a location can only be used in distanceToLocation:fromLocation:")
        case .list: throw fail("a list can only follow IN or BETWEEN")
        case .bytes, .asset: throw fail("\(value.typeName) values cannot be compared in a predicate")
        }
    }

    func compare(_ key: PredicateKey, _ op: ComparisonOperator, _ value: FieldValue) throws -> PredicateNode {
        let scalar = try scalar(value)
        try check(key, op, scalar)
        return .compare(key, op, scalar)
    }

    func among(_ key: PredicateKey, _ values: [FieldValue]) throws -> PredicateNode {
        let scalars = try values.map { try scalar($0) }
        for value in scalars { try check(key, .equal, value) }
        return .among(key, scalars)
    }

    private func check(_ key: PredicateKey, _ op: ComparisonOperator, _ value: PredicateValue) throws {
        if case .record = value, op != .equal {
            throw PredicateLexer.error(at: opToken.position, "a record ID or reference compares only with ==, != or IN")
        }
        if key.isIdentity, op != .equal {
            throw PredicateLexer.error(at: opToken.position, "recordID and creatorUserRecordID compare only with ==, != or IN")
        }
        if key.isIdentity, case .integer = value { throw fail("expected a record ID for \(key == .recordID ? "recordID" : "creatorUserRecordID")") }
        if key.isIdentity, case .real = value { throw fail("expected a record ID for \(key == .recordID ? "recordID" : "creatorUserRecordID")") }
        if key.isDate {
            switch value {
            case .integer, .real: break
            default: throw fail("expected a date for \(key == .creationDate ? "creationDate" : "modificationDate")")
            }
        }
    }
}
