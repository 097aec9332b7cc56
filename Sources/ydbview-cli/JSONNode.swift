/// A malformed scenario: the JSON path of the offending value and what is
/// wrong with it, printed as one line `path: message` (exit status 2).
struct ScenarioError: Error, CustomStringConvertible {
    let path: String
    let message: String

    var description: String { "\(path.isEmpty ? "input" : path): \(message)" }
}

/// A JSON value together with its path in the document, with typed
/// accessors that fail with a `ScenarioError` naming that path.
struct JSONNode {
    let value: JSONValue
    let path: String

    func fail(_ message: String) -> ScenarioError { ScenarioError(path: path, message: message) }

    func child(_ key: String, _ value: JSONValue) -> JSONNode {
        JSONNode(value: value, path: path.isEmpty ? key : "\(path).\(key)")
    }

    // MARK: Objects

    /// The members of an object, after checking that every key is one of
    /// `allowed` (unknown keys are rejected: a typo must not silently change
    /// what a test vector means).
    func object(allowing allowed: Set<String>) throws -> JSONObjectNode {
        guard case .object(let members) = value else { throw fail("expected an object, found \(value.typeName)") }
        for (key, _) in members where !allowed.contains(key) {
            throw child(key, .null).fail("unknown field")
        }
        return JSONObjectNode(node: self, members: members)
    }

    // MARK: Scalars

    func string() throws -> String {
        guard case .string(let string) = value else { throw fail("expected a string, found \(value.typeName)") }
        return string
    }

    /// A string usable as a collection, key or group name (NUL cannot reach the engine).
    func name() throws -> String {
        let string = try string()
        if string.unicodeScalars.contains("\0") { throw fail("must not contain a NUL character") }
        return string
    }

    func bool() throws -> Bool {
        guard case .bool(let bool) = value else { throw fail("expected true or false, found \(value.typeName)") }
        return bool
    }

    /// An integer written without a fraction or exponent, within `range`.
    func integer(_ range: ClosedRange<Int>, _ requirement: String) throws -> Int {
        guard case .int(let number) = value, number >= Int64(range.lowerBound), number <= Int64(range.upperBound)
        else { throw fail("must be \(requirement)") }
        return Int(number)
    }

    func nonNegativeInteger() throws -> Int { try integer(0...Int.max, "a non-negative integer") }
    func positiveInteger() throws -> Int { try integer(1...Int.max, "a positive integer") }

    func array() throws -> [JSONNode] {
        guard case .array(let items) = value else { throw fail("expected an array, found \(value.typeName)") }
        return items.enumerated().map { JSONNode(value: $1, path: "\(path)[\($0)]") }
    }

    /// One of `choices`, spelled exactly.
    func choice(_ choices: [String], what: String) throws -> String {
        let string = try string()
        guard choices.contains(string) else {
            let list = choices.map { "\"\($0)\"" }.joined(separator: ", ")
            throw fail("unknown \(what) \"\(string)\" (expected one of \(list))")
        }
        return string
    }
}

/// An object's members with their paths.
struct JSONObjectNode {
    let node: JSONNode
    let members: [(String, JSONValue)]

    func has(_ key: String) -> Bool { members.contains { $0.0 == key } }

    func optional(_ key: String) -> JSONNode? {
        members.first { $0.0 == key }.map { node.child(key, $0.1) }
    }

    func required(_ key: String) throws -> JSONNode {
        guard let child = optional(key) else { throw node.child(key, .null).fail("required field is missing") }
        return child
    }

    /// Exactly one of `keys` must be present; returns which.
    func exactlyOne(of keys: [String]) throws -> String {
        let present = keys.filter(has)
        if present.count == 1 { return present[0] }
        let list = keys.map { "\"\($0)\"" }.joined(separator: ", ")
        if present.isEmpty { throw node.fail("needs one of \(list)") }
        throw node.fail("has both \"\(present[0])\" and \"\(present[1])\"; give only one of \(list)")
    }
}
