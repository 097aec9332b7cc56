import YDBView

/// Reading and validating a scenario. Every rule of the format is checked
/// here, before the engine sees anything, so a malformed file gets one line
/// naming the offending path and never reaches a trap.
extension Scenario {
    /// Parses raw bytes: UTF-8 (a BOM is not allowed), one JSON document.
    static func parse(bytes: [UInt8]) throws -> Scenario {
        let root = JSONNode(value: .null, path: "")
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw root.fail("empty input (expected a JSON object)")
        }
        if let offset = invalidUTF8Offset(bytes) {
            throw root.fail("not valid UTF-8 (byte \(offset))")
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw root.fail("starts with a byte order mark; scenario files are plain UTF-8")
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch let error as JSONReadError {
            throw root.fail("invalid JSON: \(error.message)")
        } catch {
            throw root.fail("invalid JSON: \(jsonErrorDetail(error))")
        }
        return try Scenario(JSONNode(value: value, path: ""))
    }

    init(_ root: JSONNode) throws {
        let object = try root.object(allowing: ["format", "description", "view", "filter", "search", "setup", "mappings", "steps"])
        let format = try object.required("format")
        guard case .int(1) = format.value else { throw format.fail("unsupported format (expected 1)") }
        if let description = object.optional("description") { _ = try description.string() }
        view = try ScenarioView(try object.required("view"))
        filter = try object.optional("filter").map(FilterSpec.init)
        search = try object.optional("search").map(SearchSpec.init)
        if filter != nil && search != nil { throw root.fail("has both \"filter\" and \"search\"; give at most one") }
        setup = try object.optional("setup").map { try $0.array().map(Operation.init) } ?? []
        mappings = try MappingsSpec(try object.required("mappings"))
        steps = try object.required("steps").array().map(Step.init)
    }
}

/// Foundation's parse errors carry the position in their description.
private func jsonErrorDetail(_ error: Error) -> String {
    let text = "\(error)"
    if let range = text.range(of: "NSDebugDescription=") {
        return String(text[range.upperBound...].prefix { $0 != "}" && $0 != "\n" })
            .trimmingSuffix(".")
    }
    return "the data is not in the correct format"
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}

/// The offset of the first byte that is not part of valid UTF-8, or nil.
private func invalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var offset = 0
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): offset += UTF8.width(scalar)
        case .emptyInput: return nil
        case .error: return offset
        }
    }
}

extension ScenarioView {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["group", "sort", "persistent", "version_tag"])
        let groupNode = try object.required("group")
        let group = try groupNode.object(allowing: ["field", "metadata_field", "constant", "collection", "collections"])
        switch try group.exactlyOne(of: ["field", "metadata_field", "constant", "collection"]) {
        case "field": self.group = .field(try group.required("field").string())
        case "metadata_field": self.group = .metadataField(try group.required("metadata_field").string())
        case "constant": self.group = .constant(try group.required("constant").name())
        default:
            let flag = try group.required("collection")
            guard try flag.bool() else { throw flag.fail("must be true (leave it out for another rule)") }
            self.group = .collection
        }
        collections = try group.optional("collections").map { try $0.array().map { try $0.name() } }
        sort = try object.optional("sort").map { try $0.array().map(SortRule.init) } ?? []
        isPersistent = try object.optional("persistent")?.bool() ?? true
        versionTag = try object.optional("version_tag")?.string() ?? ""
    }
}

extension SortRule {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["field", "metadata_field", "key", "descending"])
        switch try object.exactlyOne(of: ["field", "metadata_field", "key"]) {
        case "field": source = .field(try object.required("field").string())
        case "metadata_field": source = .metadataField(try object.required("metadata_field").string())
        default:
            let flag = try object.required("key")
            guard try flag.bool() else { throw flag.fail("must be true (leave it out for another rule)") }
            source = .key
        }
        descending = try object.optional("descending")?.bool() ?? false
    }
}

extension Operation {
    static let fields: [String: [String]] = [
        "set": ["collection", "key", "object", "metadata"],
        "set_metadata": ["collection", "key", "metadata"],
        "touch": ["collection", "key"],
        "touch_object": ["collection", "key"],
        "touch_metadata": ["collection", "key"],
        "remove": ["collection", "key"],
        "remove_collection": ["collection"],
        "remove_all": [],
        "set_filter": ["filter", "version_tag"],
        "set_sort": ["sort", "version_tag"],
        "touch_group": ["group"],
        "set_query": ["query"],
    ]

    init(_ node: JSONNode) throws {
        let opNode = try node.object(allowing: Set(node.value.keys)).required("op")
        let op = try opNode.string()
        guard let fields = Operation.fields[op] else {
            throw node.fail("unknown op \"\(op)\"")
        }
        let object = try node.object(allowing: Set(fields + ["op"]))
        func name(_ key: String) throws -> String { try object.required(key).name() }
        func metadata() -> JSONValue? {
            guard let value = object.optional("metadata")?.value, value != .null else { return nil }
            return value
        }
        switch op {
        case "set":
            self = .set(collection: try name("collection"), key: try name("key"),
                        object: try object.required("object").value, metadata: metadata())
        case "set_metadata":
            _ = try object.required("metadata")
            self = .setMetadata(collection: try name("collection"), key: try name("key"), metadata: metadata())
        case "touch": self = .touch(collection: try name("collection"), key: try name("key"))
        case "touch_object": self = .touchObject(collection: try name("collection"), key: try name("key"))
        case "touch_metadata": self = .touchMetadata(collection: try name("collection"), key: try name("key"))
        case "remove": self = .remove(collection: try name("collection"), key: try name("key"))
        case "remove_collection": self = .removeCollection(try name("collection"))
        case "set_filter":
            self = .setFilter(try FilterRule(try object.required("filter")),
                              versionTag: try object.required("version_tag").string())
        case "set_sort":
            self = .setSort(try object.required("sort").array().map(SortRule.init),
                            versionTag: try object.required("version_tag").string())
        case "touch_group": self = .touchGroup(try name("group"))
        case "set_query": self = .setQuery(try name("query"))
        default: self = .removeAll
        }
    }
}

extension MappingsSpec {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["groups", "dynamic_groups", "config"])
        switch try object.exactlyOne(of: ["groups", "dynamic_groups"]) {
        case "groups":
            // Names are bytes: two spellings of "é" are two groups, not duplicates.
            var seen = Set<[UInt8]>()
            var groups: [String] = []
            for item in try object.required("groups").array() {
                let group = try item.name()
                guard seen.insert(Array(group.utf8)).inserted else { throw item.fail("duplicate group \"\(group)\"") }
                groups.append(group)
            }
            self.groups = .fixed(groups)
        default:
            let dynamic = try object.required("dynamic_groups").object(allowing: ["filter", "order"])
            let filterNode = try dynamic.required("filter")
            var prefix: String?
            if case .string = filterNode.value {
                _ = try filterNode.choice(["all"], what: "filter")
            } else {
                prefix = try filterNode.object(allowing: ["prefix"]).required("prefix").string()
            }
            let order = try dynamic.optional("order")?.choice(["ascending", "descending"], what: "order")
            self.groups = .dynamic(prefix: prefix, descending: order == "descending")
        }
        config = try object.optional("config").map { try $0.array().map(ConfigEntry.init) } ?? []
    }
}

extension ConfigEntry {
    static let fields: [String: [String]] = [
        "dynamic_sections": ["group", "value"],
        "reversed": ["group", "value"],
        "range": ["group", "range"],
        "dependencies": ["group", "offsets"],
        "consolidate": ["threshold", "name"],
    ]

    init(_ node: JSONNode) throws {
        let setNode = try node.object(allowing: Set(node.value.keys)).required("set")
        let kind = try setNode.string()
        guard let fields = ConfigEntry.fields[kind] else {
            let list = ConfigEntry.fields.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            throw setNode.fail("unknown setting \"\(kind)\" (expected one of \(list))")
        }
        let object = try node.object(allowing: Set(fields + ["set"]))
        switch kind {
        case "dynamic_sections":
            let group = try object.required("group").name()
            self = .dynamicSections(group: group == "*" ? nil : group, value: try object.required("value").bool())
        case "reversed":
            self = .reversed(group: try object.required("group").name(), value: try object.required("value").bool())
        case "range":
            let group = try object.required("group").name()
            let rangeNode = try object.required("range")
            self = .range(group: group, options: rangeNode.value == .null ? nil : try RangeOptions(rangeNode))
        case "dependencies":
            let offsets = try object.required("offsets").array().map {
                try $0.integer(-1_000_000...1_000_000, "an integer between -1000000 and 1000000")
            }
            self = .dependencies(group: try object.required("group").name(), offsets: Set(offsets))
        default:
            self = .consolidate(threshold: try object.required("threshold").nonNegativeInteger(),
                                name: try object.required("name").name())
        }
    }
}

extension RangeOptions {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["kind", "length", "offset", "pin", "max_length", "min_length", "grow"])
        let kind = try object.required("kind").choice(["fixed", "flexible"], what: "kind")
        let length = try object.required("length").positiveInteger()
        let offset = try object.optional("offset")?.integer(0...RangeOptions.maximumOffset,
                                                             "an integer from 0 to 2^53 - 1") ?? 0
        let pin: RangePin = try object.optional("pin")?.choice(["beginning", "end"], what: "pin") == "end"
            ? .end : .beginning
        if kind == "fixed" {
            for key in ["max_length", "min_length", "grow"] {
                if let extra = object.optional(key) { throw extra.fail("applies to flexible ranges only") }
            }
            do {
                self = try RangeOptions.fixed(length: length, offset: offset, from: pin)
            } catch {
                throw node.fail("invalid range: \(error)")
            }
            return
        }
        let maxNode = object.optional("max_length")
        let maxLength = try maxNode?.positiveInteger() ?? .max
        let minNode = object.optional("min_length")
        let minLength = try minNode?.nonNegativeInteger() ?? 0
        if let minNode, minLength > maxLength { throw minNode.fail("must not exceed max_length (\(maxLength))") }
        let grow: RangeGrowOptions
        switch try object.optional("grow")?.choice(["pin_side", "non_pin_side", "both"], what: "grow") {
        case "non_pin_side": grow = .nonPinSide
        case "both": grow = .bothSides
        default: grow = .pinSide
        }
        do {
            self = try RangeOptions.flexible(length: length, offset: offset, from: pin,
                                             maxLength: maxLength, minLength: minLength, grow: grow)
        } catch {
            throw node.fail("invalid range: \(error)")
        }
    }
}

extension Step {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["commit", "changes"])
        switch try object.exactlyOne(of: ["commit", "changes"]) {
        case "commit":
            let commit = try object.required("commit")
            self = .commit(try commit.array().map(Operation.init), path: commit.path)
        default:
            let flag = try object.required("changes")
            guard try flag.bool() else { throw flag.fail("must be true") }
            self = .changes(path: node.path)
        }
    }
}
