import Foundation

/// A JSON value with its object keys kept in order: what scenario files are
/// read into (from Foundation's parser) and what the tool prints (with its
/// own encoder, so the output's key order is stable and readable).
enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The value of `key` in an object (nil for a missing key or a non-object).
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// A short name of the value's type, for error messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: Reading

extension JSONValue {
    /// Converts what `JSONSerialization` returns. Booleans are told from
    /// numbers by their Objective-C type code ("c"), as Foundation on Linux
    /// returns both as `NSNumber`; integers too large for Int64 become doubles.
    init(foundation value: Any) throws {
        switch value {
        case is NSNull:
            self = .null
        case let string as String:
            self = .string(string)
        case let number as NSNumber:
            let type = String(cString: number.objCType)
            if type == "c" {
                self = .bool(number.boolValue)
            } else if type == "d" || type == "f" || type == "Q" {
                self = .double(number.doubleValue)
            } else {
                self = .int(number.int64Value)
            }
        case let array as [Any]:
            self = .array(try array.map { try JSONValue(foundation: $0) })
        case let dictionary as [String: Any]:
            // Foundation's dictionaries forget the order of keys; sorting them
            // makes every later step (and error messages) deterministic.
            self = .object(try dictionary.keys.sorted().map { ($0, try JSONValue(foundation: dictionary[$0]!)) })
        default:
            throw JSONReadError(message: "unsupported JSON value \(type(of: value))")
        }
    }

    /// Parses one JSON document from UTF-8 bytes.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        let parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        return try JSONValue(foundation: parsed)
    }
}

struct JSONReadError: Error {
    let message: String
}

// MARK: Writing

extension JSONValue {
    /// Compact JSON text with keys in their stored order (the bytes stored
    /// for scenario objects and metadata).
    var compactText: String {
        var output = ""
        write(to: &output, style: .compact, level: 0)
        return output
    }

    /// Indented JSON text. Arrays and objects holding only scalars (or short
    /// arrays of scalars) stay on one line, so index paths, [collection, key]
    /// pairs and each row change read at a glance.
    var prettyText: String {
        var output = ""
        write(to: &output, style: .pretty, level: 0)
        return output + "\n"
    }

    private enum Style { case compact, inline, pretty }

    private var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }

    private var isFlat: Bool {
        switch self {
        case .array(let items): return items.allSatisfy(\.isScalar)
        case .object(let members): return members.allSatisfy { $0.1.isScalar || $0.1.isFlatArray }
        default: return true
        }
    }

    private var isFlatArray: Bool {
        if case .array(let items) = self { return items.allSatisfy(\.isScalar) }
        return false
    }

    private func write(to output: inout String, style: Style, level: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value): output += JSONValue.numberText(value)
        case .string(let value): JSONValue.writeString(value, to: &output)
        case .array(let items):
            let childStyle: Style = style == .pretty && (isFlat || items.allSatisfy(\.isFlatArray)) ? .inline : style
            writeContainer(items.map { (nil, $0) }, open: "[", close: "]", style: childStyle,
                           to: &output, level: level)
        case .object(let members):
            let childStyle: Style = style == .pretty && (isFlat || members.isEmpty) ? .inline : style
            writeContainer(members.map { ($0.0, $0.1) }, open: "{", close: "}", style: childStyle,
                           to: &output, level: level)
        }
    }

    private func writeContainer(_ entries: [(String?, JSONValue)], open: String, close: String, style: Style,
                                to output: inout String, level: Int) {
        output += open
        for (position, (key, value)) in entries.enumerated() {
            if position > 0 { output += style == .inline ? ", " : "," }
            if style == .pretty { output += "\n" + String(repeating: "  ", count: level + 1) }
            if let key {
                JSONValue.writeString(key, to: &output)
                output += style == .compact ? ":" : ": "
            }
            value.write(to: &output, style: style, level: level + 1)
        }
        if style == .pretty, !entries.isEmpty { output += "\n" + String(repeating: "  ", count: level) }
        output += close
    }

    /// A finite double in JSON form: integral values without ".0" when exact.
    static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func writeString(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue {
    /// The keys of an object (empty for anything else).
    var keys: [String] {
        guard case .object(let members) = self else { return [] }
        return members.map(\.0)
    }
}
