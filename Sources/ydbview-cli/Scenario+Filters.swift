import YDBView

/// A search view in a scenario (docs/replay-format.md, "`search`"): a
/// full-text index of the objects' top-level text `fields` and a search
/// view over `view`, which the mappings then follow; commits may set its
/// query (`set_query`).
struct SearchSpec {
    var fields: [String]
    var query: String

    /// The index: one column per field, holding the field's text (a number
    /// as its decimal text; anything else leaves the column empty).
    var engineIndex: FullTextIndex {
        let fields = fields
        return FullTextIndex(columns: fields, flavour: .object) { row in
            guard let object = try decoded(row.object) else { return nil }
            var columns: [String: String] = [:]
            for field in fields { columns[field] = try groupName(of: object[field]) }
            return columns
        }
    }
}

extension SearchSpec {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["fields", "query"])
        let fieldsNode = try object.required("fields")
        fields = try fieldsNode.array().map { try $0.string() }
        if fields.isEmpty { throw fieldsNode.fail("needs at least one field") }
        query = try object.optional("query")?.name() ?? ""
    }
}

/// A filtered view in a scenario (docs/replay-format.md, "`filter`"): the
/// mappings follow it instead of the view, and commits may change its rule
/// (`set_filter`), re-sort the view under it (`set_sort`) or touch a group
/// of the view (`touch_group`).
struct FilterSpec {
    var rule: FilterRule
    var versionTag: String
}

/// Which rows a filter keeps: a comparison of one value of the row, a key
/// prefix, or everything / nothing.
enum FilterRule {
    enum Source {
        case field(String)
        case metadataField(String)
        case key
    }
    enum Comparison: String, CaseIterable {
        case equals, notEquals = "not_equals", lessThan = "less_than", greaterThan = "greater_than"
    }
    case compare(Source, Comparison, JSONValue)
    case keyPrefix(String)
    case constant(Bool)

    var flavour: ViewFlavour {
        switch self {
        case .compare(.field, _, _): return .object
        case .compare(.metadataField, _, _): return .metadata
        case .compare(.key, _, _), .keyPrefix, .constant: return .key
        }
    }

    /// The rule as an engine filter; values compare as sorting rules do.
    var engineFilter: ViewFilter {
        let rule = self
        return ViewFilter(flavour: flavour) { _, row in
            switch rule {
            case .constant(let keep): return keep
            case .keyPrefix(let prefix): return row.key.unicodeScalars.starts(with: prefix.unicodeScalars)
            case .compare(let source, let comparison, let operand):
                let value: JSONValue?
                switch source {
                case .field(let field): value = try decoded(row.object)?[field]
                case .metadataField(let field): value = try decoded(row.metadata)?[field]
                case .key: value = .string(row.key)
                }
                let order = compareValues(value, operand)
                switch comparison {
                case .equals: return order == .same
                case .notEquals: return order != .same
                case .lessThan: return order == .ascending
                case .greaterThan: return order == .descending
                }
            }
        }
    }
}

extension FilterSpec {
    init(_ node: JSONNode) throws {
        let object = try node.object(allowing: ["rule", "version_tag"])
        rule = try FilterRule(try object.required("rule"))
        versionTag = try object.optional("version_tag")?.string() ?? ""
    }
}

extension FilterRule {
    init(_ node: JSONNode) throws {
        let comparisons = FilterRule.Comparison.allCases.map(\.rawValue)
        let object = try node.object(allowing: Set(["field", "metadata_field", "key", "key_prefix", "all", "none"]
                                                    + comparisons))
        let source = try object.exactlyOne(of: ["field", "metadata_field", "key", "key_prefix", "all", "none"])
        switch source {
        case "key_prefix": self = .keyPrefix(try object.required("key_prefix").string())
        case "all", "none":
            let flag = try object.required(source)
            guard try flag.bool() else { throw flag.fail("must be true (leave it out for another rule)") }
            self = .constant(source == "all")
        default:
            let comparison = try object.exactlyOne(of: comparisons)
            let from: Source
            switch source {
            case "field": from = .field(try object.required("field").string())
            case "metadata_field": from = .metadataField(try object.required("metadata_field").string())
            default:
                let flag = try object.required("key")
                guard try flag.bool() else { throw flag.fail("must be true (leave it out for another rule)") }
                from = .key
            }
            self = .compare(from, Comparison(rawValue: comparison)!, try object.required(comparison).value)
        }
        if case .compare = self {} else if comparisons.contains(where: object.has) {
            throw node.fail("a comparison goes with \"field\", \"metadata_field\" or \"key\"")
        }
    }
}
