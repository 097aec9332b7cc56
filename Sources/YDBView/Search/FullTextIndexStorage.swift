import CSQLite

/// How full-text indexes are stored: one registry row per index in
/// `ydb_fts_indexes`, and each index's FTS5 table, `ydb_fts_<id>`, whose
/// rowid is the indexed row's rowid in `ydb_rows`. The registry is made on
/// the first registration (`CREATE TABLE IF NOT EXISTS`): the schema's
/// version does not change, and a file that never uses full-text search
/// carries no trace of it. Staleness follows the views' rules
/// (`Schema.markStoredExtensionsStale`, `StoredExtensionRegistry`).
enum FullTextIndexStorage {
    static let registryTable = """
        CREATE TABLE IF NOT EXISTS ydb_fts_indexes (
            name TEXT PRIMARY KEY,
            id INTEGER NOT NULL UNIQUE,
            version_tag TEXT NOT NULL,
            layout TEXT NOT NULL,
            fresh INTEGER NOT NULL);
        """

    struct Registration {
        let id: Int64
        let versionTag: String
        /// `FullTextIndex.layout` when it was built.
        let layout: String
        /// False once rows changed while the index was not registered.
        let isFresh: Bool
    }

    /// The stored index `name`, if any (none when the registry is missing).
    static func registration(named name: String, _ handle: SQLiteHandle) throws -> Registration? {
        guard try Schema.tableExists("ydb_fts_indexes", handle) else { return nil }
        let select = try handle.statement("SELECT id, version_tag, layout, fresh FROM ydb_fts_indexes WHERE name = ?1")
        defer { select.reset() }
        select.bind(1, name)
        guard try select.step() else { return nil }
        return Registration(id: select.int64(0), versionTag: select.string(1), layout: select.string(2),
                            isFresh: select.int(3) != 0)
    }

    /// Records a new, empty, fresh index and creates its FTS5 table;
    /// returns its id. A tokenizer FTS5 refuses is `.invalidArgument`.
    static func create(named name: String, _ index: FullTextIndex, _ handle: SQLiteHandle) throws -> Int64 {
        try handle.execute(registryTable)
        let next = try handle.statement("SELECT coalesce(max(id), 0) + 1 FROM ydb_fts_indexes")
        try next.step()
        let id = next.int64(0)
        next.reset()
        let insert = try handle.statement(
            "INSERT INTO ydb_fts_indexes (name, id, version_tag, layout, fresh) VALUES (?1, ?2, ?3, ?4, 1)")
        insert.bind(1, name)
        insert.bind(2, id)
        insert.bind(3, index.versionTag)
        insert.bind(4, index.layout)
        try insert.run()
        // Columns are checked identifiers and the tokenizer holds no double quote
        // (`FullTextIndex.validate`); both are quoted all the same.
        let columns = index.columns.map { "\"\($0)\"" }.joined(separator: ", ")
        do {
            try handle.execute("CREATE VIRTUAL TABLE \(table(id)) USING fts5(\(columns), tokenize = \"\(index.tokenizer)\")")
        } catch let error as YDBError where (error.sqliteCode ?? 0) & 0xff == SQLITE_ERROR {
            throw YDBError(.invalidArgument, "FTS5 refused the full-text index '\(name)' (tokenizer '\(index.tokenizer)'): "
                           + error.message, sqliteCode: error.sqliteCode)
        }
        return id
    }

    /// Drops an index's table and registration (no-op when not stored).
    static func drop(named name: String, _ handle: SQLiteHandle) throws {
        guard let existing = try registration(named: name, handle) else { return }
        try handle.execute("DROP TABLE IF EXISTS \(table(existing.id))")
        let delete = try handle.statement("DELETE FROM ydb_fts_indexes WHERE name = ?1")
        delete.bind(1, name)
        try delete.run()
    }

    static func table(_ id: Int64) -> String { "ydb_fts_\(id)" }
}

/// The statements of one index's table, written once per index: the
/// statement cache then finds each by where its text lies (a one-row
/// commit's statement is a pointer comparison away, not a hash of its text).
final class FullTextIndexSQL: Sendable {
    let insert: String
    let delete: String
    let deleteAll: String
    /// Matches of ?1, best first, at most ?2 (-1: all).
    let search: String
    /// Every match of ?1: rowid and rank.
    let matches: String
    /// Every match of ?1, rowid only (no rank to compute: a search view's new query).
    let matchingRowids: String
    /// Whether row ?2 matches ?1.
    let rowMatches: String
    /// Row ?2's bm25 rank for ?1 (no row when it does not match).
    let rowRank: String
    /// The snippet of row ?2 for ?1: column ?3 (-1: the best), ?4 before
    /// and ?5 after each found word, ?6 where text is left out, at most ?7 words.
    let snippet: String

    init(id: Int64, columns: [String]) {
        let table = FullTextIndexStorage.table(id)
        let names = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let values = (0 ..< columns.count).map { "?\($0 + 2)" }.joined(separator: ", ")
        insert = "INSERT INTO \(table) (rowid, \(names)) VALUES (?1, \(values))"
        delete = "DELETE FROM \(table) WHERE rowid = ?1"
        deleteAll = "DELETE FROM \(table)"
        // FTS5 drives the join (its MATCH), each match's row found by rowid;
        // ties keep rowid order, so equal ranks come out the same every time.
        search = """
            SELECT ydb_rows.collection, ydb_rows.key, bm25(\(table)) FROM \(table)
                JOIN ydb_rows ON ydb_rows.rowid = \(table).rowid
                WHERE \(table) MATCH ?1 ORDER BY 3, \(table).rowid LIMIT ?2
            """
        matches = "SELECT rowid, bm25(\(table)) FROM \(table) WHERE \(table) MATCH ?1"
        matchingRowids = "SELECT rowid FROM \(table) WHERE \(table) MATCH ?1"
        rowMatches = "SELECT 1 FROM \(table) WHERE rowid = ?2 AND \(table) MATCH ?1"
        rowRank = "SELECT bm25(\(table)) FROM \(table) WHERE rowid = ?2 AND \(table) MATCH ?1"
        snippet = "SELECT snippet(\(table), ?3, ?4, ?5, ?6, ?7) FROM \(table) WHERE rowid = ?2 AND \(table) MATCH ?1"
    }
}
