import YDBView

/// A scenario file, validated (see `docs/replay-format.md` and
/// `Tests/Scenarios/README.md`): one view, one mappings configuration and
/// a sequence of commits and changeset requests.
struct Scenario {
    var view: ScenarioView
    /// A filtered view over `view`, which the mappings then follow.
    var filter: FilterSpec?
    /// Or a search view over `view`, which the mappings then follow.
    var search: SearchSpec?
    var setup: [Operation]
    var mappings: MappingsSpec
    var steps: [Step]
}

/// The view's rules; turned into engine callbacks by `ScenarioView+Callbacks.swift`.
struct ScenarioView {
    var group: GroupRule
    var collections: [String]?
    var sort: [SortRule]
    var isPersistent: Bool
    var versionTag: String
}

enum GroupRule {
    case field(String)
    case metadataField(String)
    case constant(String)
    case collection
}

struct SortRule {
    enum Source {
        case field(String)
        case metadataField(String)
        case key
    }
    var source: Source
    var descending: Bool
}

enum Operation {
    case set(collection: String, key: String, object: JSONValue, metadata: JSONValue?)
    case setMetadata(collection: String, key: String, metadata: JSONValue?)
    case touch(collection: String, key: String)
    case touchObject(collection: String, key: String)
    case touchMetadata(collection: String, key: String)
    case remove(collection: String, key: String)
    case removeCollection(String)
    case removeAll
    /// A new rule for the filtered view (`FilterSpec`).
    case setFilter(FilterRule, versionTag: String)
    /// New sorting rules for the view, same grouping (`setViewDefinition`).
    case setSort([SortRule], versionTag: String)
    /// Touches every row of one group of the view.
    case touchGroup(String)
    /// A new query for the search view (`SearchSpec`).
    case setQuery(String)
}

struct MappingsSpec {
    enum Groups {
        case fixed([String])
        case dynamic(prefix: String?, descending: Bool)
    }
    var groups: Groups
    var config: [ConfigEntry]
}

enum ConfigEntry {
    /// `group == nil` means every group ("*").
    case dynamicSections(group: String?, value: Bool)
    case reversed(group: String, value: Bool)
    case range(group: String, options: RangeOptions?)
    case dependencies(group: String, offsets: Set<Int>)
    case consolidate(threshold: Int, name: String)
}

enum Step {
    /// One read-write transaction; `path` locates it for error messages.
    case commit([Operation], path: String)
    case changes(path: String)
}
