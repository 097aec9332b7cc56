import Foundation
import YDBView

/// Figures of the "search as you type, filters that change, re-sorting in
/// place" issue for one size, each next to what an application on plain
/// SQLite does for the same screen: run the query again (FTS5 `MATCH`, a
/// `WHERE`, an `ORDER BY` on an index) and diff the new list of row ids
/// against the old one (`keyedDiff`).
struct SearchResult {
    var n = 0
    /// One more typed character: (query, engine, FTS5 query alone, baseline, rows entering + leaving, results).
    var typed: [(query: String, engine: Double, ftsAlone: Double, baseline: Double, changes: Int, results: Int)] = []
    var filter = Samples(), filterPlain = Samples()
    var filterChanges = 0, filterPlainEdits = 0
    var resort = Samples(), resortPlain = Samples()
    var resortMoves = 0, resortPlainMoves = 0
}

enum SearchBenchmark {
    static let groups = 4
    static let index = "text"
    static let view = "byRank"
    static let search = "found"
    static let filtered = "sampled"

    /// 2,000 made-up words from syllables, the same every run: a prefix of
    /// one letter matches a few hundred of them, of four letters a handful.
    static let vocabulary: [String] = {
        let syllables = ["ba", "ko", "ri", "tu", "me", "sa", "lo", "ni", "pe", "da", "fi", "gu", "ha", "ju", "ve", "zo"]
        var random = SeededGenerator(seed: 41)
        var words = Set<String>()
        while words.count < 2000 {
            words.insert((0 ..< Int.random(in: 2 ... 4, using: &random)).map { _ in
                syllables.randomElement(using: &random)!
            }.joined())
        }
        return words.sorted()
    }()

    static func run(n: Int) throws -> SearchResult {
        var result = SearchResult()
        result.n = n
        var template = Array((NSTemporaryDirectory() + "ydbview-search-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw SQLiteFailure(description: "mkdtemp failed") }
        let directory = String(cString: made)
        defer {
            for name in ["engine.sqlite", "plain.sqlite"] {
                for suffix in ["", "-wal", "-shm"] { unlink(directory + "/" + name + suffix) }
            }
            rmdir(directory)
        }
        let database = try Database(path: directory + "/engine.sqlite")
        defer { database.close() }
        let plain = try PlainSQLite(path: directory + "/plain.sqlite")
        let writer = try database.newConnection()

        // The same rows on both sides: a group, a rank, three words.
        log("  [\(count(n))] search: loading rows")
        var random = SeededGenerator(seed: 0x5EA2C4)
        try plain.execute("""
            CREATE TABLE t (rowid INTEGER PRIMARY KEY, key TEXT NOT NULL, grp TEXT NOT NULL, rank INTEGER NOT NULL,
                            body TEXT NOT NULL);
            BEGIN;
            """)
        let insert = try plain.prepare("INSERT INTO t (rowid, key, grp, rank, body) VALUES (?1, ?2, ?3, ?4, ?5)")
        try writer.readWrite { t in
            for i in 0 ..< n {
                let group = Int(random.next() % UInt64(groups)), rank = Int64(random.next() % UInt64(Data.rankSpace))
                let body = (0 ..< 3).map { _ in vocabulary.randomElement(using: &random)! }.joined(separator: " ")
                try t.setObject(Data.object(group: group, rank: rank), forKey: "k\(i)", inCollection: Data.collection,
                                metadata: Array(body.utf8))
                insert.bind(1, Int64(i + 1))
                insert.bind(2, "k\(i)")
                insert.bind(3, Data.groupName(group))
                insert.bind(4, rank)
                insert.bind(5, body)
                try insert.run()
            }
        }
        try plain.execute("""
            COMMIT;
            CREATE INDEX t_rank ON t (grp, rank, key);
            CREATE INDEX t_key ON t (grp, key);
            CREATE VIRTUAL TABLE fts USING fts5(body, content='t', content_rowid='rowid',
                                                tokenize='unicode61 remove_diacritics 2');
            INSERT INTO fts (fts) VALUES ('rebuild');
            """)
        try database.registerView(Data.keyView(), name: view)
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let groupNames = (0 ..< groups).map(Data.groupName)

        // Re-sorting in place, first, with no view over this one.
        log("  [\(count(n))] search: re-sorting")
        let sorted = Mappings(groups: groupNames, view: view)
        try reader.read { try sorted.update(with: $0) }
        var plainOrder = try rowids(plain, "SELECT rowid FROM t ORDER BY grp, rank, key")
        let byKey = ViewSorting(flavour: .key, key: { _, row in
            var key = SortKey()
            key.append(row.key)
            return key
        })
        for (step, sorting) in [byKey, Data.keyView().sorting, byKey].enumerated() {
            let (changeset, seconds) = try changesetAfter("resort", writer, reader, sorted) {
                try $0.setViewDefinition(name: view, grouping: Data.keyView().grouping, sorting: sorting,
                                         versionTag: "sorted \(step)")
            }
            result.resort.add(seconds)
            result.resortMoves = changeset.rowChanges.count
            let plainStart = now()
            let order = try rowids(plain, step % 2 == 0 ? "SELECT rowid FROM t ORDER BY grp, key"
                                                       : "SELECT rowid FROM t ORDER BY grp, rank, key")
            result.resortPlainMoves = keyedDiff(from: plainOrder, to: order)
            result.resortPlain.add(from: plainStart)
            plainOrder = order
        }

        // A filter changed back and forth: 1% of the rows leave, then enter.
        log("  [\(count(n))] search: filter changes")
        @Sendable func keeping(from threshold: Int64) -> ViewFilter {
            ViewFilter(flavour: .object) { _, row in Data.rank(row.object!) % 100 >= threshold }
        }
        try database.registerFilteredView(FilteredView(parent: view, filter: keeping(from: 0), versionTag: "0"),
                                          name: filtered)
        try reader.beginLongLivedReadTransaction()
        let sampled = Mappings(groups: groupNames, view: filtered)
        try reader.read { try sampled.update(with: $0) }
        let filterQuery = try plain.prepare("SELECT rowid FROM t WHERE rank % 100 >= ?1 ORDER BY grp, rank, key")
        var shown = try rowids(filterQuery, 0)
        for step in 1 ... 6 {
            let threshold = Int64(step % 2)
            let (changeset, seconds) = try changesetAfter("filter", writer, reader, sampled) {
                try $0.setFilter(keeping(from: threshold), versionTag: "\(step)", forView: filtered)
            }
            result.filter.add(seconds)
            result.filterChanges = changeset.rowChanges.count
            let plainStart = now()
            let newShown = try rowids(filterQuery, threshold)
            result.filterPlainEdits = keyedDiff(from: shown, to: newShown)
            result.filterPlain.add(from: plainStart)
            shown = newShown
        }
        try database.unregisterView(name: filtered)

        // Typing a word, one character at a time.
        log("  [\(count(n))] search: typing")
        try database.registerFullTextIndex(FullTextIndex(columns: ["body"], flavour: .metadata, versionTag: "1") { row in
            row.metadata.flatMap { String(bytes: $0, encoding: .utf8) }.map { ["body": $0] }
        }, name: index)
        try database.registerSearchView(SearchView(parent: view, index: index), name: search)
        try reader.beginLongLivedReadTransaction()
        let found = Mappings(groups: groupNames, view: search)
        try reader.read { try found.update(with: $0) }
        let match = try plain.prepare("""
            SELECT t.rowid FROM fts JOIN t ON t.rowid = fts.rowid WHERE fts MATCH ?1 ORDER BY t.grp, t.rank, t.key
            """)
        let matchAlone = try plain.prepare("SELECT rowid FROM fts WHERE fts MATCH ?1")
        var results: [Int64] = []
        let word = vocabulary.first { $0.count >= 7 } ?? vocabulary[0]
        for length in 1 ... min(word.count, 7) {
            let query = "\(word.prefix(length))*"
            let (changeset, engine) = try changesetAfter(query, writer, reader, found) {
                try $0.setSearchQuery(query, forView: search)
            }
            let (_, alone) = try timed { try rowids(matchAlone, query) }
            let plainStart = now()
            let matched = try rowids(match, query)
            _ = keyedDiff(from: results, to: matched)
            let baseline = Double(now() - plainStart) / 1e9
            results = matched
            result.typed.append((query, engine, alone, baseline, changeset.rowChanges.count, matched.count))
        }
        let engineCount = try reader.read { try $0.view(search).numberOfItemsInAllGroups() }
        guard engineCount == results.count else {
            throw SQLiteFailure(description: "search view holds \(engineCount) rows, FTS5 found \(results.count)")
        }
        return result
    }

    /// Commits `change`, then catches `reader` up and computes the changeset
    /// of `mappings` and its edit steps: the engine's side of a figure, in
    /// seconds. `PHASES=1` prints the four parts on standard error.
    private static func changesetAfter(_ label: String, _ writer: Connection, _ reader: Connection,
                                       _ mappings: Mappings,
                                       _ change: (ReadWriteTransaction) throws -> Void) throws -> (Changeset, Double) {
        let start = now()
        try writer.readWrite(change)
        let committed = now()
        let notifications = try reader.beginLongLivedReadTransaction()
        let caughtUp = now()
        let changeset = try mappings.changes(for: notifications)
        let computed = now()
        _ = changeset.steps()
        let end = now()
        if ProcessInfo.processInfo.environment["PHASES"] != nil {
            func part(_ from: UInt64, _ to: UInt64) -> String { ms(Double(to - from) / 1e9) }
            log("phases \(label): commit \(part(start, committed)) catch-up \(part(committed, caughtUp)) "
                + "changes \(part(caughtUp, computed)) steps \(part(computed, end))")
        }
        return (changeset, Double(end - start) / 1e9)
    }

    private static func rowids(_ plain: PlainSQLite, _ sql: String) throws -> [Int64] {
        try rowids(try plain.prepare(sql)) { _ in }
    }

    private static func rowids(_ statement: PlainStatement, _ value: Int64) throws -> [Int64] {
        try rowids(statement) { $0.bind(1, value) }
    }

    private static func rowids(_ statement: PlainStatement, _ value: String) throws -> [Int64] {
        try rowids(statement) { $0.bind(1, value) }
    }

    /// The first column of every row `statement` gives, once `bind` bound it.
    private static func rowids(_ statement: PlainStatement, bind: (PlainStatement) -> Void) throws -> [Int64] {
        bind(statement)
        defer { statement.reset() }
        var result: [Int64] = []
        while try statement.step() { result.append(statement.int64(0)) }
        return result
    }

    /// The edits a list needs to go from `old` to `new` (ids): deletes,
    /// inserts, and moves for the kept ids outside a longest run in the
    /// same order — what an application diffing by id computes, in
    /// O(n log n) (a text diff of a re-sort is quadratic).
    static func keyedDiff(from old: [Int64], to new: [Int64]) -> Int {
        var oldIndex = [Int64: Int](minimumCapacity: old.count)
        for (index, id) in old.enumerated() { oldIndex[id] = index }
        var kept: [Int] = []
        kept.reserveCapacity(new.count)
        for id in new { if let index = oldIndex[id] { kept.append(index) } }
        var tails: [Int] = []
        for index in kept {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if tails[mid] < index { low = mid + 1 } else { high = mid }
            }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        return (old.count - kept.count) + (new.count - kept.count) + (kept.count - tails.count)
    }

    static func report(_ results: [SearchResult]) {
        var typing = Table("Search: one more typed character, until the changeset is ready (search view over all rows, 4 groups)",
                           ["rows", "query", "engine", "FTS5 query alone", "baseline: FTS5 + ORDER BY + diff",
                            "engine ÷ baseline", "rows entering + leaving", "results"])
        var filters = Table("Filters: a new filter, 1% of the rows leave or enter (median of 6)",
                            ["rows", "engine (setFilter + changeset)", "baseline: WHERE + ORDER BY + diff",
                             "engine ÷ baseline", "row changes (engine / diff)"])
        var resorts = Table("Re-sorting in place: rank order ↔ key order (median of 3)",
                            ["rows", "engine (setViewDefinition + changeset)", "baseline: ORDER BY on an index + diff",
                             "engine ÷ baseline", "moves (engine / diff)"])
        for r in results {
            for step in r.typed {
                typing.add([count(r.n), step.query, ms(step.engine), ms(step.ftsAlone), ms(step.baseline),
                            ratio(step.engine, step.baseline), "\(step.changes)", "\(step.results)"])
            }
            filters.add([count(r.n), ms(r.filter.median), ms(r.filterPlain.median),
                         ratio(r.filter.median, r.filterPlain.median), "\(r.filterChanges) / \(r.filterPlainEdits)"])
            resorts.add([count(r.n), sec(r.resort.median), sec(r.resortPlain.median),
                         ratio(r.resort.median, r.resortPlain.median), "\(r.resortMoves) / \(r.resortPlainMoves)"])
        }
        for table in [typing, filters, resorts] { print(table.render(), terminator: "") }
    }
}
