import Foundation

/// One token of a predicate format, with the 1-based character position where it starts.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        case word(String)
        case string(String)
        case integer(Int64)
        case real(Double)
        case valueArgument
        case keyArgument
        case symbol(String)
        case end
    }

    var kind: Kind
    var position: Int

    /// How the token reads in an error message.
    var display: String {
        switch kind {
        case .word(let w): "'\(w)'"
        case .string(let s): "the string '\(s)'"
        case .integer(let i): "the number \(i)"
        case .real(let d): "the number \(d)"
        case .valueArgument: "%@"
        case .keyArgument: "%K"
        case .symbol(let s): "'\(s)'"
        case .end: "the end of the predicate"
        }
    }
}

/// Splits a predicate format into tokens.
struct PredicateLexer {
    private let chars: [Character]
    private var index = 0

    init(_ format: String) {
        chars = Array(format)
    }

    static func error(at position: Int, _ what: String) -> StoreError {
        StoreError(.invalidArguments, "Predicate error at character \(position): \(what).")
    }

    mutating func tokens() throws -> [PredicateToken] {
        var out: [PredicateToken] = []
        while true {
            let token = try next()
            out.append(token)
            if token.kind == .end { return out }
        }
    }

    private func peek(_ offset: Int = 0) -> Character? {
        index + offset < chars.count ? chars[index + offset] : nil
    }

    private mutating func next() throws -> PredicateToken {
        while let c = peek(), c.isWhitespace { index += 1 }
        let start = index + 1
        guard let c = peek() else { return PredicateToken(kind: .end, position: start) }
        if c.isLetter || c == "_" || c == "$" {
            var word = ""
            while let d = peek(), d.isLetter || d.isNumber || d == "_" || d == ":" || d == "$" || d == "." {
                word.append(d)
                index += 1
            }
            return PredicateToken(kind: .word(word), position: start)
        }
        if c.isNumber || ((c == "-" || c == "+" || c == ".") && (peek(1)?.isNumber ?? false)) {
            return try number(start: start)
        }
        if c == "'" || c == "\"" { return try string(quote: c, start: start) }
        if c == "%" {
            switch peek(1) {
            case "@": index += 2; return PredicateToken(kind: .valueArgument, position: start)
            case "K": index += 2; return PredicateToken(kind: .keyArgument, position: start)
            default: throw Self.error(at: start, "expected %@ or %K after '%'")
            }
        }
        let pair = peek(1).map { String([c, $0]) } ?? ""
        if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(pair) {
            index += 2
            let normal = ["=<": "<=", "=>": ">=", "<>": "!="][pair] ?? pair
            return PredicateToken(kind: .symbol(normal), position: start)
        }
        if "=<>!(){},[]".contains(c) {
            index += 1
            return PredicateToken(kind: .symbol(c == "=" ? "==" : String(c)), position: start)
        }
        throw Self.error(at: start, "unexpected character '\(c)'")
    }

    private mutating func number(start: Int) throws -> PredicateToken {
        var text = ""
        if let sign = peek(), sign == "-" || sign == "+" { text.append(sign); index += 1 }
        var isReal = false
        while let d = peek() {
            if d.isASCII, d.isNumber {
                text.append(d)
            } else if d == "." || d == "e" || d == "E" {
                isReal = true
                text.append(d)
                if (d == "e" || d == "E"), let s = peek(1), s == "-" || s == "+" { text.append(s); index += 1 }
            } else {
                break
            }
            index += 1
        }
        if !isReal, let value = Int64(text) { return PredicateToken(kind: .integer(value), position: start) }
        guard let value = Double(text), value.isFinite else {
            throw Self.error(at: start, "'\(text)' is not a number")
        }
        return PredicateToken(kind: .real(value), position: start)
    }

    private mutating func string(quote: Character, start: Int) throws -> PredicateToken {
        index += 1
        var text = ""
        while let c = peek() {
            index += 1
            if c == quote { return PredicateToken(kind: .string(text), position: start) }
            if c == "\\" {
                guard let escaped = peek() else { break }
                index += 1
                switch escaped {
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                default: text.append(escaped)
                }
            } else {
                text.append(c)
            }
        }
        throw Self.error(at: start, "expected a closing \(quote) for the string that starts here")
    }
}
