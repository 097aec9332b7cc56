import CSQLite

/// Queries on full-text indexes. They read the index's FTS5 table through
/// the transaction's own SQLite snapshot, so a read transaction sees the
/// index as of its snapshot and a read-write one sees its own writes.
///
/// `query` is an FTS5 query (docs/full-text-index.md): words, "phrases",
/// `AND`/`OR`/`NOT`, `prefix*`, `column: word`, `NEAR(a b, 5)`. One FTS5
/// refuses is `.invalidArgument` naming why; an empty (or blank) query
/// matches nothing. An unknown index is `.notFound`.
extension ReadTransaction {
    /// The rows matching `query`, best first (lowest bm25 rank; rows of
    /// equal rank in rowid order), at most `limit` of them.
    public func search(index: String, query: String, limit: Int? = nil) throws -> [FullTextMatch] {
        try access(.readViews) { try matches(index, query, limit) }
    }

    /// `search`, calling `body` with each match in order; set the
    /// `inout Bool` to stop. `body` runs as an enumeration's body does
    /// (it may read, and write in a read-write transaction; not end it).
    package func enumerateSearchMatches(index: String, query: String, limit: Int? = nil,
                                        _ body: (FullTextMatch, inout Bool) throws -> Void) throws {
        let found = try search(index: index, query: query, limit: limit)
        try connection.runningUserCode(.enumeration) {
            var stop = false
            for match in found where !stop { try body(match, &stop) }
        }
    }

    /// FTS5's snippet of row (collection, key) for `query`: a few words of
    /// `column` (nil: the column that matches best) around the words found,
    /// each found word between `before` and `after`, `ellipsis` where text
    /// is left out, at most `tokens` words (1...64). Nil when there is no
    /// such row or it does not match.
    public func snippet(index: String, query: String, forKey key: String, inCollection collection: String,
                        column: String? = nil, before: String = "<b>", after: String = "</b>",
                        ellipsis: String = "…", tokens: Int = 16) throws -> String? {
        try access(.readViews) {
            let instance = try fullTextIndex(index)
            let columnIndex = try column.map { try columnNumber($0, in: instance) } ?? -1
            guard (1 ... 64).contains(tokens) else {
                throw YDBError(.invalidArgument, "snippet tokens must be 1 to 64 (got \(tokens))")
            }
            try validateName(before, "snippet text before a match")
            try validateName(after, "snippet text after a match")
            try validateName(ellipsis, "snippet ellipsis")
            guard let query = try usable(query), let rowid = try rowid(forKey: key, inCollection: collection) else {
                return nil
            }
            let select = try handle.statement(instance.sql.snippet)
            defer { select.reset() }
            select.bind(1, query)
            select.bind(2, rowid)
            select.bind(3, Int64(columnIndex))
            select.bind(4, before)
            select.bind(5, after)
            select.bind(6, ellipsis)
            select.bind(7, Int64(tokens))
            return try stepQuery(select, query) ? select.string(0) : nil
        }
    }

    // MARK: For extensions built on an index (no lock: the caller holds the transaction)

    /// Every row matching `query`, by rowid, with its bm25 rank. For engine
    /// code already inside the transaction (a writer's row event, or a
    /// query holding `access`): it takes no lock of its own.
    package func fullTextMatches(index: String, query: String) throws -> [Int64: Double] {
        let instance = try fullTextIndex(index)
        guard let query = try usable(query) else { return [:] }
        let select = try handle.statement(instance.sql.matches)
        defer { select.reset() }
        select.bind(1, query)
        var found: [Int64: Double] = [:]
        while try stepQuery(select, query) { found[select.int64(0)] = sqlite3_column_double(select.raw, 1) }
        return found
    }

    /// The rowids of every row matching `query`, without their ranks (bm25
    /// costs a computation per match). The same rules as `fullTextMatches`.
    package func fullTextMatchingRowids(index: String, query: String) throws -> Set<Int64> {
        let instance = try fullTextIndex(index)
        guard let query = try usable(query) else { return [] }
        let select = try handle.statement(instance.sql.matchingRowids)
        defer { select.reset() }
        select.bind(1, query)
        var found = Set<Int64>()
        while try stepQuery(select, query) { found.insert(select.int64(0)) }
        return found
    }

    /// Whether row `rowid` matches `query`: one FTS5 lookup, not a scan.
    /// The same rules as `fullTextMatches`.
    package func fullTextRowMatches(index: String, query: String, rowid: Int64) throws -> Bool {
        let instance = try fullTextIndex(index)
        guard let query = try usable(query) else { return false }
        let select = try handle.statement(instance.sql.rowMatches)
        defer { select.reset() }
        select.bind(1, query)
        select.bind(2, rowid)
        return try stepQuery(select, query)
    }

    /// Row `rowid`'s bm25 rank for `query` (nil when it does not match):
    /// one FTS5 lookup. The same rules as `fullTextMatches`.
    package func fullTextRank(index: String, query: String, rowid: Int64) throws -> Double? {
        let instance = try fullTextIndex(index)
        guard let query = try usable(query) else { return nil }
        let select = try handle.statement(instance.sql.rowRank)
        defer { select.reset() }
        select.bind(1, query)
        select.bind(2, rowid)
        return try stepQuery(select, query) ? sqlite3_column_double(select.raw, 0) : nil
    }

    // MARK: Helpers

    private func matches(_ index: String, _ query: String, _ limit: Int?) throws -> [FullTextMatch] {
        let instance = try fullTextIndex(index)
        if let limit, limit < 0 { throw YDBError(.invalidArgument, "search limit must not be negative (got \(limit))") }
        guard let query = try usable(query) else { return [] }
        let select = try handle.statement(instance.sql.search)
        defer { select.reset() }
        select.bind(1, query)
        select.bind(2, Int64(limit ?? -1))
        var found: [FullTextMatch] = []
        var collection = ""
        while try stepQuery(select, query) {
            collection = select.string(0, reusing: collection)
            found.append(FullTextMatch(collection: collection, key: select.string(1),
                                       rank: sqlite3_column_double(select.raw, 2)))
        }
        return found
    }

    /// The registered index `name` as this transaction sees it.
    private func fullTextIndex(_ name: String) throws -> FullTextIndexInstance {
        try validateName(name, "full-text index name")
        guard let instance = registeredExtension(named: name) as? FullTextIndexInstance else {
            throw YDBError(.notFound, "no full-text index named '\(name)' is registered")
        }
        return instance
    }

    /// The query to run, or nil for one that can match nothing (blank).
    private func usable(_ query: String) throws -> String? {
        try validateName(query, "full-text query")
        return query.allSatisfy(\.isWhitespace) ? nil : query
    }

    private func columnNumber(_ column: String, in instance: FullTextIndexInstance) throws -> Int {
        guard let number = instance.definition.columns.firstIndex(of: column) else {
            throw YDBError(.invalidArgument, "full-text index '\(instance.name)' has no column '\(column)' "
                           + "(its columns: \(instance.definition.columns.joined(separator: ", ")))")
        }
        return number
    }

    /// Steps a statement whose ?1 is `query`: FTS5 reports a query it
    /// cannot parse (or a column it does not have) as a plain SQLite error
    /// when the statement runs, which is the caller's argument at fault.
    private func stepQuery(_ select: Statement, _ query: String) throws -> Bool {
        do {
            return try select.step()
        } catch let error as YDBError where (error.sqliteCode ?? 0) & 0xff == SQLITE_ERROR {
            throw YDBError(.invalidArgument, "invalid full-text query \"\(query)\": \(error.message)",
                           sqliteCode: error.sqliteCode)
        }
    }
}
