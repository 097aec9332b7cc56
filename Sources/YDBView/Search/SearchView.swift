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
    /// Rows in each group by the query's bm25 rank, best first (then by
    /// collection and key), instead of in the parent's order. A row is
    /// ranked when it is placed: when the query is set, or when a commit
    /// changes it (bm25 weighs words by how rare they are in all rows, so
    /// other rows' ranks drift as rows change; they are not re-ranked).
    public var orderedByRank: Bool

    public init(parent: String, index: String, query: String = "", orderedByRank: Bool = false) {
        self.parent = parent
        self.index = index
        self.query = query
        self.orderedByRank = orderedByRank
    }
}

extension SearchQuery {
    /// The search of `query` on `index`, ordered by rank or not.
    init(index: String, query: String, orderedByRank: Bool) {
        self.init(index: index, query: query,
                  ranking: orderedByRank ? Self.ranking(index: index, query: query) : nil)
    }

    /// A rank-ordered row's sort key: its rank, then its name.
    static func rankKey(_ rank: Double, _ row: ViewRow) -> SortKey {
        var key = SortKey()
        key.append(rank)
        key.append(row.collection)
        key.append(row.key)
        return key
    }

    /// The sorting of a view ordered by rank: each row's bm25 rank as the
    /// index gives it when the row is placed.
    private static func ranking(index: String, query: String) -> ViewSorting {
        ViewSorting(.key, .any, reads: true, .key { running, _, row in
            guard let rowid = try running.rowid(forKey: row.key, inCollection: row.collection),
                  let rank = try running.fullTextRank(index: index, query: query, rowid: rowid) else {
                return rankKey(.infinity, row)   // not a match: the filter leaves it out anyway
            }
            return rankKey(rank, row)
        })
    }

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
        // Refuses an unknown index before anything is built (a malformed
        // first query fails `setSearchQuery` below, and so the registration).
        _ = try fullTextMatchingRowids(index: view.index, query: "")
        let parent = try filteredViewParent(view.parent, of: name)
        // Registered with an empty query, which matches nothing without a
        // lookup per row; the first query is then set as any new one is:
        // one full-text query, not one per row of the table.
        let search = SearchQuery(index: view.index, query: "", orderedByRank: view.orderedByRank)
        let definition = Filtering.view(over: parent.definition, named: view.parent, filter: search.filter,
                                        filterTag: search.tag, search: search, isPersistent: false, releaseHook: nil)
        let outcome = try registerView(definition, name: name)
        try setSearchQuery(view.query, forView: name)
        return outcome
    }

    /// Sets the query of search view `name` inside this transaction: the
    /// rows the new query matches and the old one did not are inserted, the
    /// others removed, and views filtered over it follow. The same query
    /// again changes nothing. Costs one full-text query plus O(log n) per
    /// row entering or leaving (the old results are looked at once). A view
    /// ordered by rank places every match again by its new rank: the
    /// changeset moves the rows whose order changed.
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
            let ranked = current.ranking != nil
            let search = SearchQuery(index: current.index, query: query, orderedByRank: ranked)
            guard search.tag != filtering.filterTag else { return }
            let parent = try filteredViewParent(filtering.parent, of: name)
            let view = Filtering.view(over: parent.definition, named: filtering.parent, filter: search.filter,
                                      filterTag: search.tag, search: search, isPersistent: false, releaseHook: nil)
            writer.takeDefinition(view)
            if ranked {
                // Every row's rank changes with the query: placed again by it.
                let ranks = try fullTextMatches(index: search.index, query: query)
                try writer.rebuild(over: parent.state, scores: ranks, key: SearchQuery.rankKey, writeContext)
            } else {
                let found = try matches ?? fullTextMatchingRowids(index: search.index, query: query)
                try writer.refilter(over: parent.state, keeping: found, writeContext)
            }
            installWriter(writer)
            try followParent(name, reordered: ranked)
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
