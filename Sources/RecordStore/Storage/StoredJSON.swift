/// A JSON value as read from the `record.fields` and `change.previous` columns.
///
/// `FieldCoding` used to read these with `JSONSerialization`, which cost 60 %
/// of a query's time building and bridging Foundation objects. This parser
/// reads the UTF-8 bytes of the text directly. It accepts any valid JSON, not
/// only what `FieldCoding.encode` writes, and keeps an integer literal that
/// fits `Int64` apart from one with a fraction or exponent (`1` vs `1.0`).
enum StoredJSON {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case array([StoredJSON])
    /// Members in the order written; a repeated key keeps every occurrence (callers take the last).
    case object([Member])

    /// One `"key": value` of an object.
    struct Member {
        let key: String
        let value: StoredJSON
    }

    /// Thrown for text that is not one valid JSON value.
    struct SyntaxError: Error {}

    /// Parses `text`, which must hold one JSON value and nothing else but whitespace.
    ///
    /// With `keys`, an object's members under any other key are checked but not built, and left out:
    /// a query that asked for some fields pays only for those, and the text is refused exactly when
    /// the whole of it would be.
    static func parse(_ text: String, keeping keys: Set<String>? = nil) throws -> StoredJSON {
        try reading(text) { try $0.value(depth: 0, keeping: keys) }
    }

    /// What `read` makes of `text`, which must hold nothing after it but whitespace.
    private static func reading<T>(_ text: String, _ read: (inout Parser) throws -> T) throws -> T {
        var text = text
        return try text.withUTF8 { bytes in
            var parser = Parser(bytes: bytes)
            let result = try read(&parser)
            parser.skipWhitespace()
            guard parser.index == bytes.count else { throw SyntaxError() }
            return result
        }
    }

    /// What `FieldCoding` reads of one stored field, `{"t": tag, "v": value, "x": extra, "e": element tag}`:
    /// the last member of each of those names. Other members are checked but not built.
    struct FieldParts {
        var tag: StoredJSON?, value: StoredJSON?, extra: StoredJSON?, element: StoredJSON?
    }

    /// Parses a record's stored fields, an object of field objects, as `parse(_:keeping:)` would, but without
    /// building each field's object: a record's decoding then makes no array and no key per field. A field
    /// whose value is not an object has nil parts. The text is refused exactly when `parse` would refuse it
    /// or find no object in it.
    static func parseFields(_ text: String, keeping keys: Set<String>? = nil) throws -> [(key: String, parts: FieldParts?)] {
        try reading(text) { try $0.fields(keeping: keys) }
    }

    /// The last member named `key`, when this is an object.
    subscript(key: String) -> StoredJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// A number as a Double (true is 1, false is 0, as `NSNumber` reads them).
    var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// A number as an Int64, a fraction cut toward zero as `NSNumber.int64Value` does; nil when out of range.
    var int64Value: Int64? {
        switch self {
        case .integer(let i): i
        case .real(let d): Int64(exactly: d.rounded(.towardZero))
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }
}

extension StoredJSON {
    /// A recursive-descent reader over UTF-8 bytes (RFC 8259).
    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        /// Deeper nesting than this is damage, not data; it also keeps the recursion off the stack's end.
        private static let maximumDepth = 512

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        private mutating func expect(_ byte: UInt8) throws {
            guard index < bytes.count, bytes[index] == byte else { throw SyntaxError() }
            index += 1
        }

        private mutating func literal(_ word: StaticString, _ value: StoredJSON) throws -> StoredJSON {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw SyntaxError() }
            for i in 0..<count where bytes[index + i] != word.utf8Start[i] { throw SyntaxError() }
            index += count
            return value
        }

        /// Reads one value; `keys`, when this value is an object, are the members to build (`nil`: all).
        mutating func value(depth: Int, keeping keys: Set<String>? = nil) throws -> StoredJSON {
            guard depth < Self.maximumDepth else { throw SyntaxError() }
            skipWhitespace()
            guard index < bytes.count else { throw SyntaxError() }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth, keeping: keys)
            case UInt8(ascii: "["): return try array(depth: depth, building: true)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default: return try number()
            }
        }

        /// Steps over one value, refusing what `value` would refuse, without building it.
        private mutating func skip(depth: Int) throws {
            guard depth < Self.maximumDepth else { throw SyntaxError() }
            skipWhitespace()
            guard index < bytes.count else { throw SyntaxError() }
            switch bytes[index] {
            case UInt8(ascii: "{"): _ = try object(depth: depth, keeping: [])
            case UInt8(ascii: "["): _ = try array(depth: depth, building: false)
            case UInt8(ascii: "\""): try skipString()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): _ = try value(depth: depth)
            default: _ = try numberSyntax()
            }
        }

        /// An object's members under `keys` (`nil`: all); the others are stepped over.
        private mutating func object(depth: Int, keeping keys: Set<String>?) throws -> StoredJSON {
            var members: [Member] = []
            try forEachMember(depth: depth) { parser, key in
                if keys?.contains(key) ?? true {
                    members.append(Member(key: key, value: try parser.value(depth: depth + 1)))
                } else {
                    try parser.skip(depth: depth + 1)
                }
            }
            return .object(members)
        }

        /// The fields of a record's stored text (see `parseFields`): those under `keys` (`nil`: all).
        mutating func fields(keeping keys: Set<String>?) throws -> [(key: String, parts: FieldParts?)] {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw SyntaxError() }
            var fields: [(key: String, parts: FieldParts?)] = []
            try forEachMember(depth: 0) { parser, key in
                if keys?.contains(key) ?? true {
                    fields.append((key, try parser.fieldParts(depth: 1)))
                } else {
                    try parser.skip(depth: 1)
                }
            }
            return fields
        }

        /// One field's object, read into its parts; nil, with the value stepped over, when it is no object.
        private mutating func fieldParts(depth: Int) throws -> FieldParts? {
            guard depth < Self.maximumDepth else { throw SyntaxError() }
            skipWhitespace()
            guard index < bytes.count else { throw SyntaxError() }
            guard bytes[index] == UInt8(ascii: "{") else {
                try skip(depth: depth)
                return nil
            }
            var parts = FieldParts()
            try forEachMember(depth: depth) { parser, key in
                switch key {
                case "t": parts.tag = try parser.value(depth: depth + 1)
                case "v": parts.value = try parser.value(depth: depth + 1)
                case "x": parts.extra = try parser.value(depth: depth + 1)
                case "e": parts.element = try parser.value(depth: depth + 1)
                default: try parser.skip(depth: depth + 1)
                }
            }
            return parts
        }

        /// Reads the object whose opening brace is at `index`, handing each member's key to `member`,
        /// which must read or step over the value that follows it.
        private mutating func forEachMember(depth: Int, _ member: (inout Parser, String) throws -> Void) throws {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw SyntaxError() }
                let key = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                try member(&self, key)
                skipWhitespace()
                guard index < bytes.count else { throw SyntaxError() }
                let next = bytes[index]
                index += 1
                if next == UInt8(ascii: "}") { return }
                guard next == UInt8(ascii: ",") else { throw SyntaxError() }
            }
        }

        /// An array; when not `building`, its elements are stepped over and it reads as empty.
        private mutating func array(depth: Int, building: Bool) throws -> StoredJSON {
            index += 1
            var elements: [StoredJSON] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                if building { elements.append(try value(depth: depth + 1)) } else { try skip(depth: depth + 1) }
                skipWhitespace()
                guard index < bytes.count else { throw SyntaxError() }
                let next = bytes[index]
                index += 1
                if next == UInt8(ascii: "]") { return .array(elements) }
                guard next == UInt8(ascii: ",") else { throw SyntaxError() }
            }
        }

        /// Moves over the bytes of a string that need no unescaping: true when it stopped at the closing quote,
        /// false at a backslash or the end of the text.
        private mutating func scanPlain() throws -> Bool {
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { return true }
                if byte == UInt8(ascii: "\\") { return false }
                guard byte >= 0x20 else { throw SyntaxError() }
                index += 1
            }
            return false
        }

        /// Steps over a string whose opening quote is at `index`; one with escapes is read whole, to check them.
        private mutating func skipString() throws {
            let opening = index
            index += 1
            if try scanPlain() {
                index += 1
                return
            }
            index = opening
            _ = try string()
        }

        /// Reads a string whose opening quote is at `index`.
        private mutating func string() throws -> String {
            index += 1
            let start = index
            // Fast path: no escapes, so the text is the bytes between the quotes.
            if try scanPlain() {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            var scalars = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: scalars, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    try escape(into: &scalars)
                case ..<0x20:
                    throw SyntaxError()
                default:
                    scalars.append(byte)
                }
            }
            throw SyntaxError()
        }

        /// Reads the escape after a backslash and appends its UTF-8 bytes.
        private mutating func escape(into out: inout [UInt8]) throws {
            guard index < bytes.count else { throw SyntaxError() }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    try expect(UInt8(ascii: "\\"))
                    try expect(UInt8(ascii: "u"))
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw SyntaxError() }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw SyntaxError() }
                UTF8.encode(scalar) { out.append($0) }
            default:
                throw SyntaxError()
            }
        }

        private mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw SyntaxError() }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw SyntaxError()
                }
                code = code << 4 | UInt32(digit)
            }
            return code
        }

        /// Reads a number: an integer literal that fits Int64 stays an integer, anything else is a Double.
        private mutating func number() throws -> StoredJSON {
            let (start, isInteger) = try numberSyntax()
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if isInteger, let i = Int64(text) { return .integer(i) }
            guard let d = Double(text) else { throw SyntaxError() }
            return .real(d)
        }

        /// Moves over a number's text, checking it against JSON's grammar: where it began, and whether it has
        /// neither a fraction nor an exponent.
        private mutating func numberSyntax() throws -> (start: Int, isInteger: Bool) {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            try digits()
            // JSON allows no leading zero before more digits.
            if bytes[digitsStart] == UInt8(ascii: "0"), index - digitsStart > 1 { throw SyntaxError() }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                try digits()
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                try digits()
            }
            return (start, isInteger)
        }

        private mutating func digits() throws {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > start else { throw SyntaxError() }
        }
    }
}
