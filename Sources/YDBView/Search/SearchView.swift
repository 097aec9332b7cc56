/// Search results as a view: the rows of a parent view that match a
/// full-text query on a `FullTextIndex`, in the parent's groups and order
/// (YapDatabase's search-results view). Register it with
/// `Database.registerSearchView`; set a new query inside a read-write
/// transaction (`setSearchQuery`) or in the background, where a newer
/// query supersedes one not yet applied (`Database.search`). A new query
/// logs exactly the rows that enter and leave the results, so a list
/// showing them animates as the user types.
///
/// ```swift
/// try database.registerFullTextIndex(bodies, name: "text")
/// try database.registerSearchView(SearchView(parent: "messages", index: "text"), name: "found")
/// try await database.search("hel*", inView: "found")
/// ```
///
/// Rows are matched as the index holds them in the running transaction,
/// so a commit that changes a row's text moves it in or out of the
/// results. The results are not stored (they depend on the query): a
/// search view is registered with an empty query at each start.
public struct SearchView: Sendable {
    /// The registered view whose rows are searched.
    public var parent: String
    /// The registered full-text index the query runs on.
    public var index: String
    /// The first query ("" matches nothing).
    public var query: String

    public init(parent: String, index: String, query: String = "") {
        self.parent = parent
        self.index = index
        self.query = query
    }
}

extension SearchQuery {
    /// The filter that keeps a row when the query matches it in the index
    /// (nothing for an empty query). It runs when any part of the row
    /// changes: the index may have re-read it.
    var filter: ViewFilter {
        let index = index, query = query
        return ViewFilter(flavour: .key, options: .any) { running, _, row in
            guard !query.allSatisfy(\.isWhitespace),
                  let rowid = try running.rowid(forKey: row.key, inCollection: row.collection) else { return false }
            return try running.fullTextRowMatches(index: index, query: query, rowid: rowid)
        }
    }

    /// The filter's tag: the query itself (the same query again changes nothing).
    var tag: String { "search\u{1F}\(query)" }
}

extension Database {
    /// Registers `view` under `name`, in its own read-write transaction:
    /// the parent's rows that match its query. Not stored: built at each
    /// registration, from the index.
    @discardableResult
    public func registerSearchView(_ view: SearchView, name: String) throws -> ViewRegistrationOutcome {
        try validateName(name, "view name")
        registrations.supersede(name, by: "a later registration")
        return try withInternalConnection { connection in
            try connection.readWrite { try $0.registerSearchView(view, name: name) }
        }
    }
}

extension ReadWriteTransaction {
    func registerSearchView(_ view: SearchView, name: String) throws -> ViewRegistrationOutcome {
        try validateName(view.parent, "parent view name")
        try validateName(view.index, "full-text index name")
        // Refuses an unknown index, and a malformed first query, before
        // anything is built: the filter would report the query's error as
        // its own failure, and only once some row reached it.
        _ = try fullTextMatchingRowids(index: view.index, query: view.query)
        let parent = try filteredViewParent(view.parent, of: name)
        let search = SearchQuery(index: view.index, query: view.query)
        let definition = Filtering.view(over: parent.definition, named: view.parent, filter: search.filter,
                                        filterTag: search.tag, search: search, isPersistent: false, releaseHook: nil)
        return try registerView(definition, name: name)
    }

    /// Sets the query of search view `name` inside this transaction: the
    /// rows the new query matches and the old one did not are inserted, the
    /// others removed, and views filtered over it follow. The same query
    /// again changes nothing. Costs one full-text query plus O(log n) per
    /// row entering or leaving (the old results are looked at once).
    public func setSearchQuery(_ query: String, forView name: String) throws {
        try setSearchQuery(query, forView: name, matches: nil)
    }

    /// `setSearchQuery` with the matches already found at this transaction's
    /// snapshot (a background search that read them before taking the
    /// write lock), or nil to find them now.
    func setSearchQuery(_ query: String, forView name: String, matches: Set<Int64>?) throws {
        try extensionWork {
            try validateName(query, "query")
            guard let writer = viewWriter(named: name) else {
                throw YDBError(.notFound, "no view named '\(name)' is registered")
            }
            guard let filtering = writer.definition.filtering, let current = filtering.search else {
                throw YDBError(.misuse, "view '\(name)' is not a search view")
            }
            let search = SearchQuery(index: current.index, query: query)
            guard search.tag != filtering.filterTag else { return }
            let parent = try filteredViewParent(filtering.parent, of: name)
            let found = try matches ?? fullTextMatchingRowids(index: search.index, query: query)
            let view = Filtering.view(over: parent.definition, named: filtering.parent, filter: search.filter,
                                      filterTag: search.tag, search: search, isPersistent: false, releaseHook: nil)
            writer.takeDefinition(view)
            try writer.refilter(over: parent.state, keeping: found, writeContext)
            installWriter(writer)
            try followParent(name)
        }
    }
}

extension ReadTransaction {
    /// The query search view `name` shows the results of.
    public func searchQuery(ofView name: String) throws -> String {
        guard let search = viewInstance(named: name)?.definition.filtering?.search else {
            throw YDBError(.notFound, "no search view named '\(name)' is registered")
        }
        return search.query
    }
}
