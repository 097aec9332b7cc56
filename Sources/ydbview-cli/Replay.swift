import YDBView

/// An error from the engine while replaying a valid scenario (exit status 1).
struct ReplayError: Error, CustomStringConvertible {
    let description: String
}

/// Runs a scenario through the real engine exactly as an application would:
/// a writer connection commits, a reader connection in a long-lived read
/// transaction follows with mappings and asks for changesets.
struct Replay {
    static let viewName = "view"
    /// The filtered view over `view`, when the scenario has one.
    static let filteredViewName = "filtered"
    /// The search view over `view` and its index, when the scenario has one.
    static let searchViewName = "search"
    static let indexName = "text"

    /// The view the mappings follow.
    static func followed(_ scenario: Scenario) -> String {
        scenario.filter != nil ? filteredViewName : scenario.search != nil ? searchViewName : viewName
    }

    let scenario: Scenario
    let database: Database
    let writer: Connection
    let reader: Connection
    let mappings: Mappings

    /// Sets up the database, view, reader and mappings (the `initial` state).
    init(_ scenario: Scenario) throws {
        let database = try engine("opening a temporary database") { try Database(path: nil) }
        let writer = try engine("opening a connection") { try database.newConnection() }
        try engine("setup") { try writer.readWrite { try Replay.apply(scenario.setup, scenario.view, in: $0) } }
        try engine("registering the view") {
            try database.registerView(scenario.view.engineView, name: Replay.viewName)
        }
        if let filter = scenario.filter {
            try engine("registering the filtered view") {
                try database.registerFilteredView(
                    FilteredView(parent: Replay.viewName, filter: filter.rule.engineFilter, versionTag: filter.versionTag,
                                 isPersistent: scenario.view.isPersistent),
                    name: Replay.filteredViewName)
            }
        }
        if let search = scenario.search {
            try engine("registering the search view") {
                try database.registerFullTextIndex(search.engineIndex, name: Replay.indexName)
                try database.registerSearchView(SearchView(parent: Replay.viewName, index: Replay.indexName,
                                                           query: search.query), name: Replay.searchViewName)
            }
        }
        let reader = try engine("opening the reader") { try database.newConnection() }
        try engine("starting the reader's long-lived read transaction") {
            try reader.beginLongLivedReadTransaction()
        }
        let mappings = Replay.makeMappings(scenario.mappings, view: Replay.followed(scenario))
        try engine("updating the mappings") { try reader.read { try mappings.update(with: $0) } }
        self.scenario = scenario
        self.database = database
        self.writer = writer
        self.reader = reader
        self.mappings = mappings
    }

    /// Closes the temporary database, which deletes its files (`exit`
    /// runs no deinit: without this each run left a directory behind).
    func close() { database.close() }

    /// Runs every step and returns the output document.
    func run() throws -> JSONValue {
        let initial = try state()
        var changes: [JSONValue] = []
        var commitsSinceChanges = 0
        for step in scenario.steps {
            switch step {
            case .commit(let operations, let path):
                try engine(path) { try writer.readWrite { try Replay.apply(operations, scenario.view, in: $0) } }
                commitsSinceChanges += 1
            case .changes(let path):
                let changeset = try engine(path) { () -> Changeset in
                    let notifications = try reader.beginLongLivedReadTransaction()
                    return try mappings.changes(for: notifications)
                }
                let state = try self.state()
                changes.append(.object([("commits", .int(Int64(commitsSinceChanges)))]
                                       + Replay.json(changeset) + [("state", state)]))
                commitsSinceChanges = 0
            }
        }
        return .object([("initial", initial), ("changes", .array(changes))])
    }

    // MARK: Engine calls

    static func apply(_ operations: [Operation], _ view: ScenarioView, in transaction: ReadWriteTransaction) throws {
        for operation in operations {
            switch operation {
            case let .set(collection, key, object, metadata):
                try transaction.setObject(Array(object.compactText.utf8), forKey: key, inCollection: collection,
                                          metadata: metadata.map { Array($0.compactText.utf8) })
            case let .setMetadata(collection, key, metadata):
                try transaction.replaceMetadata(metadata.map { Array($0.compactText.utf8) },
                                                forKey: key, inCollection: collection)
            case let .touch(collection, key): try transaction.touchRow(forKey: key, inCollection: collection)
            case let .touchObject(collection, key): try transaction.touchObject(forKey: key, inCollection: collection)
            case let .touchMetadata(collection, key):
                try transaction.touchMetadata(forKey: key, inCollection: collection)
            case let .remove(collection, key): try transaction.removeObject(forKey: key, inCollection: collection)
            case let .removeCollection(collection): try transaction.removeAllObjects(inCollection: collection)
            case .removeAll: try transaction.removeAllObjectsInAllCollections()
            case let .setFilter(rule, versionTag):
                try transaction.setFilter(rule.engineFilter, versionTag: versionTag, forView: Replay.filteredViewName)
            case let .setSort(rules, versionTag):
                var resorted = view
                resorted.sort = rules
                try transaction.setViewDefinition(name: Replay.viewName, grouping: resorted.grouping,
                                                  sorting: resorted.sorting, versionTag: versionTag)
            case let .touchGroup(group): try transaction.touchRows(inGroup: group, ofView: Replay.viewName)
            case let .setQuery(query): try transaction.setSearchQuery(query, forView: Replay.searchViewName)
            }
        }
    }

    static func makeMappings(_ spec: MappingsSpec, view viewName: String) -> Mappings {
        let mappings: Mappings
        switch spec.groups {
        case .fixed(let groups):
            mappings = Mappings(groups: groups, view: viewName)
        case let .dynamic(prefix, descending):
            mappings = Mappings(filter: { group in prefix.map { group.hasPrefix($0) } ?? true },
                                sortedBy: { descending ? compareScalars($1, $0) == .ascending
                                                       : compareScalars($0, $1) == .ascending },
                                view: viewName)
        }
        for entry in spec.config {
            switch entry {
            case let .dynamicSections(group?, value): mappings.setIsDynamicSection(value, forGroup: group)
            case let .dynamicSections(nil, value): mappings.setIsDynamicSectionForAllGroups(value)
            case let .reversed(group, value): mappings.setIsReversed(value, forGroup: group)
            case let .range(group, options): mappings.setRangeOptions(options, forGroup: group)
            case let .dependencies(group, offsets): mappings.setCellDrawingDependencyOffsets(offsets, forGroup: group)
            case let .consolidate(threshold, name): mappings.setAutoConsolidateGroups(threshold: threshold, name: name)
            }
        }
        return mappings
    }

    // MARK: Output

    /// What the table shows now, read through the mappings and the view helpers.
    func state() throws -> JSONValue {
        try engine("reading the table") {
            try reader.read { transaction -> JSONValue in
                let view = try transaction.view(Replay.followed(scenario))
                var sections: [JSONValue] = []
                for section in 0..<mappings.numberOfSections {
                    let count = mappings.numberOfItems(inSection: section) ?? 0
                    var items: [JSONValue] = []
                    for row in 0..<count {
                        let path = TableIndexPath(section: section, row: row)
                        guard let rowKey = try view.rowKey(at: path, mappings: mappings) else {
                            throw ReplayError(description: "mappings show a row at \(path) but the view has none")
                        }
                        items.append(.array([.string(rowKey.collection), .string(rowKey.key)]))
                    }
                    sections.append(.object([
                        ("group", .string(mappings.group(forSection: section) ?? "")),
                        ("count", .int(Int64(count))),
                        ("items", .array(items)),
                    ]))
                }
                var groups: [(String, JSONValue)] = []
                for group in mappings.allGroups {
                    var entry: [(String, JSONValue)] = [("count", .int(Int64(try view.numberOfItems(inGroup: group))))]
                    if mappings.rangeOptions(forGroup: group) != nil, let position = mappings.rangePosition(forGroup: group) {
                        entry.append(("range", .object([
                            ("offset_from_beginning", .int(Int64(position.offsetFromBeginning))),
                            ("offset_from_end", .int(Int64(position.offsetFromEnd))),
                            ("length", .int(Int64(position.length))),
                        ])))
                    }
                    groups.append((group, .object(entry)))
                }
                let snapshot: JSONValue = mappings.snapshotOfLastUpdate.map { .int(Int64($0)) } ?? .null
                return .object([
                    ("snapshot", snapshot),
                    ("consolidated", .bool(mappings.isUsingConsolidatedGroup)),
                    ("sections", .array(sections)),
                    ("groups", .object(groups)),
                ])
            }
        }
    }

    static func json(_ changeset: Changeset) -> [(String, JSONValue)] {
        let sections = changeset.sectionChanges.map { change -> JSONValue in
            .object([("type", .string(change.type == .insert ? "insert" : "delete")),
                     ("index", .int(Int64(change.index))),
                     ("group", .string(change.group))])
        }
        let rows = changeset.rowChanges.map { change -> JSONValue in
            var flags: [JSONValue] = []
            if change.changes.contains(.object) { flags.append(.string("object")) }
            if change.changes.contains(.metadata) { flags.append(.string("metadata")) }
            if change.changes.contains(.dependency) { flags.append(.string("dependency")) }
            return .object([
                ("type", .string(typeName(change.type))),
                ("index_path", path(change.indexPath)),
                ("new_index_path", path(change.newIndexPath)),
                ("original_group", change.originalGroup.map(JSONValue.string) ?? .null),
                ("final_group", change.finalGroup.map(JSONValue.string) ?? .null),
                ("collection", change.collection.map(JSONValue.string) ?? .null),
                ("key", change.key.map(JSONValue.string) ?? .null),
                ("changes", .array(flags)),
            ])
        }
        return [("section_changes", .array(sections)), ("row_changes", .array(rows))]
    }

    private static func typeName(_ kind: RowChange.Kind) -> String {
        switch kind {
        case .insert: return "insert"
        case .delete: return "delete"
        case .move: return "move"
        case .update: return "update"
        }
    }

    private static func path(_ indexPath: TableIndexPath?) -> JSONValue {
        guard let indexPath else { return .null }
        return .array([.int(Int64(indexPath.section)), .int(Int64(indexPath.row))])
    }
}

/// Runs an engine call, turning any error into a one-line `ReplayError`
/// that says what the tool was doing.
@discardableResult
func engine<T>(_ what: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ReplayError {
        throw ReplayError(description: "\(what): \(error.description)")
    } catch let error as YDBError {
        throw ReplayError(description: "\(what): \(error.message)")
    } catch {
        throw ReplayError(description: "\(what): \(error)")
    }
}
