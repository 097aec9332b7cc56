import XCTest
@testable import YDBView

/// Search views: a parent view's rows that a full-text query matches, in
/// the parent's groups and order; a new query logs exactly the rows that
/// enter and leave.
final class SearchViewTests: XCTestCase {
    /// Rows are `Item`s (group and rank in the object) whose words are the
    /// metadata, which the index reads.
    static let index = FullTextIndex(columns: ["body"], flavour: .metadata, versionTag: "1") { row in
        row.metadata.flatMap { String(bytes: $0, encoding: .utf8) }.map { ["body": $0] }
    }
    static let words = ["apple", "apricot", "banana", "blueberry", "cherry", "coconut", "date", "dragonfruit"]

    private var database: Database!
    private var connection: Connection!

    override func setUp() {
        database = try! Database(path: nil)
        connection = try! database.newConnection()
    }

    override func tearDown() { database.close() }

    private static func set(_ t: ReadWriteTransaction, _ key: String, _ group: String?, _ rank: Int, _ words: [String]) throws {
        try t.setObject(Item.encode(group: group, rank: rank), forKey: key, inCollection: "items",
                        metadata: Array(words.joined(separator: " ").utf8))
    }

    private func dump(_ view: String) throws -> [String: [String]] {
        try connection.read { try $0.view(view).dump() }
    }

    /// What the search view must show: the parent's rows whose words match
    /// `query` — one word, or a prefix ending in `*` — in the parent's order.
    private func expected(parent: String, query: String) throws -> [String: [String]] {
        let trimmed = query.trimmingCharacters(in: .whitespaces).lowercased()
        func matches(_ words: [String]) -> Bool {
            guard !trimmed.isEmpty else { return false }
            if trimmed.hasSuffix("*") { return words.contains { $0.hasPrefix(trimmed.dropLast()) } }
            return words.contains(trimmed)
        }
        return try connection.read { t in
            var result: [String: [String]] = [:]
            let view = try t.view(parent)
            for group in try view.allGroups() {
                var keys: [String] = []
                try view.enumerateRows(inGroup: group) { rowKey, _, metadata, _, _ in
                    let words = String(bytes: metadata ?? [], encoding: .utf8)!.split(separator: " ").map(String.init)
                    if matches(words) { keys.append(rowKey.key) }
                }
                if !keys.isEmpty { result[group] = keys }
            }
            return result
        }
    }

    func testResultsFollowQueriesAndCommits() throws {
        try database.registerView(rankView(), name: "byRank")
        try database.registerFullTextIndex(Self.index, name: "text")
        try connection.readWrite { t in
            try Self.set(t, "k0", "a", 0, ["apple", "banana"])
            try Self.set(t, "k1", "a", 1, ["apricot"])
            try Self.set(t, "k2", "b", 2, ["banana"])
            try Self.set(t, "k3", "b", 3, ["apple"])
        }
        XCTAssertEqual(try database.registerSearchView(SearchView(parent: "byRank", index: "text", query: "apple"),
                                                       name: "found"), .built)
        XCTAssertEqual(try dump("found"), ["a": ["k0"], "b": ["k3"]])
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let mappings = Mappings(groups: ["a", "b"], view: "found")
        try reader.read { try mappings.update(with: $0) }
        // "ap*": k1 enters; the others stay.
        try connection.readWrite { try $0.setSearchQuery("ap*", forView: "found") }
        var changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
        XCTAssertEqual(changeset.rowChanges.map(\.type), [.insert])
        XCTAssertEqual(changeset.rowChanges.first?.rowKey?.key, "k1")
        XCTAssertEqual(try connection.read { try $0.searchQuery(ofView: "found") }, "ap*")
        // A commit changing a row's words moves it in or out.
        try connection.readWrite { try Self.set($0, "k2", "b", 2, ["apricot", "jam"]) }
        try connection.readWrite { try Self.set($0, "k0", "a", 0, ["cherry"]) }
        changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
        XCTAssertEqual(Set(changeset.rowChanges.map { "\($0.type) \($0.rowKey!.key)" }), ["insert k2", "delete k0"])
        XCTAssertEqual(try dump("found"), try expected(parent: "byRank", query: "ap*"))
        // An empty query matches nothing; the same query again changes nothing.
        try connection.readWrite { try $0.setSearchQuery("", forView: "found") }
        XCTAssertEqual(try dump("found"), [:])
        let before = database.snapshot
        try connection.readWrite { try $0.setSearchQuery("", forView: "found") }
        XCTAssertEqual(database.snapshot, before)
    }

    func testRefusals() throws {
        try database.registerView(rankView(), name: "byRank")
        XCTAssertThrowsError(try database.registerSearchView(SearchView(parent: "byRank", index: "nope"), name: "s")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
        }
        try database.registerFullTextIndex(Self.index, name: "text")
        try database.registerSearchView(SearchView(parent: "byRank", index: "text"), name: "s")
        XCTAssertThrowsError(try connection.readWrite { try $0.setSearchQuery("x", forView: "byRank") }) {
            XCTAssertEqual(($0 as? YDBError)?.code, .misuse)
        }
        XCTAssertThrowsError(try connection.readWrite {
            try $0.setFilter(ViewFilter(flavour: .key) { _, _ in true }, versionTag: "2", forView: "s")
        }) { XCTAssertEqual(($0 as? YDBError)?.code, .misuse) }
        // A malformed query fails its transaction and leaves the results.
        try connection.readWrite { try Self.set($0, "k0", "a", 0, ["apple"]) }
        try connection.readWrite { try $0.setSearchQuery("apple", forView: "s") }
        XCTAssertThrowsError(try connection.readWrite { try $0.setSearchQuery("\"unclosed", forView: "s") })
        XCTAssertEqual(try dump("s"), ["a": ["k0"]])
        XCTAssertEqual(try connection.read { try $0.searchQuery(ofView: "s") }, "apple")
    }

    /// A view ordered by rank: each group's matches by bm25 rank as the
    /// index gives them right after the query is set; a new query moves the
    /// rows whose order changed.
    func testOrderedByRank() throws {
        try database.registerView(rankView(), name: "byRank")
        try database.registerFullTextIndex(Self.index, name: "text")
        var rng = SeededGenerator(seed: 5)
        try connection.readWrite { t in
            for index in 0 ..< 200 {
                try Self.set(t, "k\(index)", ["a", "b"][index % 2], index,
                             (0 ..< Int.random(in: 1 ... 6, using: &rng)).map { _ in Self.words.randomElement(using: &rng)! })
            }
        }
        try database.registerSearchView(SearchView(parent: "byRank", index: "text", query: "apple", orderedByRank: true),
                                        name: "best")
        func expectedByRank(_ query: String) throws -> [String: [String]] {
            try connection.read { t in
                var groups: [String: [(Double, String)]] = [:]
                for match in try t.search(index: "text", query: query) {
                    let group = try t.view("byRank").group(forKey: match.key, inCollection: match.collection)!
                    groups[group, default: []].append((match.rank, match.key))
                }
                return groups.mapValues { $0.sorted { $0 < $1 }.map(\.1) }
            }
        }
        XCTAssertEqual(try dump("best"), try expectedByRank("apple"))
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let mappings = Mappings(groups: ["a", "b"], view: "best")
        try reader.read { try mappings.update(with: $0) }
        for query in ["apple OR banana", "banana", "a*"] {
            let old = try reader.read { Table(mappings: mappings, contents: try $0.viewContents(named: "best")) }
            try connection.readWrite { try $0.setSearchQuery(query, forView: "best") }
            let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
            let new = try reader.read { Table(mappings: mappings, contents: try $0.viewContents(named: "best")) }
            XCTAssertEqual(try BatchUpdate(changeset).apply(to: old), new, query)
            XCTAssertEqual(try dump("best"), try expectedByRank(query), query)
        }
        // A commit places a changed row by its rank then.
        try connection.readWrite { try Self.set($0, "k7", "b", 7, ["apple", "apple", "banana", "apple"]) }
        let found = try dump("best")
        XCTAssertEqual(Set(found.values.joined()), Set(try expectedByRank("a*").values.joined()))
    }

    func testUnregisteringTheIndexUnregistersItsSearchViews() throws {
        try database.registerView(rankView(), name: "byRank")
        try database.registerFullTextIndex(Self.index, name: "text")
        try database.registerSearchView(SearchView(parent: "byRank", index: "text", query: "apple"), name: "found")
        try database.registerFilteredView(FilteredView(parent: "found", filter: ViewFilter(flavour: .key) { _, _ in true },
                                                       versionTag: "1"), name: "all")
        try database.unregisterFullTextIndex(name: "text")
        XCTAssertEqual(database.registeredViewNames, ["byRank"])
        // Writes go on as before.
        try connection.readWrite { try Self.set($0, "k0", "a", 0, ["apple"]) }
        XCTAssertEqual(try dump("byRank"), ["a": ["k0"]])
    }

    func testBackgroundSearchesSupersedeOlderQueries() throws {
        try database.registerView(rankView(), name: "byRank")
        try database.registerFullTextIndex(Self.index, name: "text")
        try connection.readWrite { t in
            for index in 0 ..< 500 {
                try Self.set(t, "k\(index)", ["a", "b"][index % 2], index, [Self.words[index % Self.words.count]])
            }
        }
        try database.registerSearchView(SearchView(parent: "byRank", index: "text"), name: "found")
        let outcomes = Locked<[String: Bool]>([:])
        let done = DispatchSemaphore(value: 0)
        let typed = ["b", "bl", "blu", "blue", "blueb"]
        for prefix in typed {
            try database.search("\(prefix)*", inView: "found") { result in
                outcomes.mutate { $0[prefix] = try? result.get() }
                done.signal()
            }
        }
        for _ in typed { done.wait() }
        // The last query always runs; some before it may have been superseded.
        XCTAssertEqual(outcomes.value["blueb"], true)
        XCTAssertEqual(outcomes.value.count, typed.count)
        XCTAssertEqual(try connection.read { try $0.searchQuery(ofView: "found") }, "blueb*")
        XCTAssertEqual(try dump("found"), try expected(parent: "byRank", query: "blueb*"))
    }

    func testAsyncSearch() async throws {
        try database.registerView(rankView(), name: "byRank")
        try database.registerFullTextIndex(Self.index, name: "text")
        try connection.readWrite { try Self.set($0, "k0", "a", 0, ["cherry"]) }
        try database.registerSearchView(SearchView(parent: "byRank", index: "text"), name: "found")
        let applied = try await database.search("cherry", inView: "found")
        XCTAssertTrue(applied)
        XCTAssertEqual(try dump("found"), ["a": ["k0"]])
        do {
            try await database.search("x", inView: "nope")
            XCTFail("an unknown view")
        } catch let error as YDBError {
            XCTAssertEqual(error.code, .notFound)
        }
    }

    /// The words a random row gets: one to three of `words`.
    private static func randomWords(_ rng: inout SeededGenerator) -> [String] {
        (0 ..< Int.random(in: 1 ... 3, using: &rng)).map { _ in words.randomElement(using: &rng)! }
    }

    /// Checks a changeset of search view `name` against the tables before
    /// and after, and the results against a from-scratch search.
    private func check(_ changeset: Changeset, _ mappings: Mappings, old: Table, reader: Connection, name: String,
                       query: String, _ context: String) throws -> Table {
        let new = try reader.read { Table(mappings: mappings, contents: try $0.viewContents(named: name)) }
        let full = "\(context)\nold \(old)\nnew \(new)\nchangeset \(changeset.sectionChanges) \(changeset.rowChanges)"
        let applied = try BatchUpdate(changeset).apply(to: old)
        XCTAssertEqual(applied, new, full)
        try BatchUpdate<Int64>.check(steps: changeset.steps(), from: old, to: new, naming: BatchUpdate<Int64>.rowid)
        return new
    }

    /// Random histories mixing commits that change rows' words, new queries
    /// (typed forward and back), re-sorts of the parent and touches, under
    /// random mappings: every changeset is a valid batch update and edit
    /// script, and the results equal a from-scratch search of the parent.
    func testRandomHistoriesGiveValidChangesets() throws {
        var queries = 0
        let typed = Self.words.flatMap { word in (1 ... word.count).map { "\(word.prefix($0))*" } } + ["apple", "date", ""]
        for seed in randomSeeds(47_000, TestScale.pick(500, long: 5_000)) {
            var rng = SeededGenerator(seed: seed)
            database.close()
            database = try Database(path: nil)
            connection = try database.newConnection()
            let keyed = Bool.random(using: &rng)
            let (grouping, sorting) = RedefinitionTests.definition(.rank, .byGroup, keyed: keyed)
            try database.registerView(View(grouping: grouping, sorting: sorting, versionTag: "0"), name: "root")
            try database.registerFullTextIndex(Self.index, name: "text")
            func write(_ t: ReadWriteTransaction, _ rng: inout SeededGenerator) throws {
                let key = "k\(Int.random(in: 0 ..< 40, using: &rng))"
                switch Int.random(in: 0 ..< 10, using: &rng) {
                case 0 ..< 6:
                    try Self.set(t, key, ["a", "b", "c", nil].randomElement(using: &rng)!, Int.random(in: 0 ... 15, using: &rng),
                            Self.randomWords(&rng))
                case 6: try t.replaceMetadata(Array(Self.randomWords(&rng).joined(separator: " ").utf8), forKey: key,
                                              inCollection: "items")
                case 7: try t.touchRow(forKey: key, inCollection: "items")
                default: try t.removeObject(forKey: key, inCollection: "items")
                }
            }
            try connection.readWrite { t in for _ in 0 ..< Int.random(in: 0 ... 40, using: &rng) { try write(t, &rng) } }
            var query = typed.randomElement(using: &rng)!
            let byRank = Int.random(in: 0 ..< 3, using: &rng) == 0
            try database.registerSearchView(SearchView(parent: "root", index: "text", query: query,
                                                       orderedByRank: byRank), name: "found")
            let reader = try database.newConnection()
            try reader.beginLongLivedReadTransaction()
            let config = RandomScenario.config(using: &rng)
            let mappings = config.make(view: "found")
            try reader.read { try mappings.update(with: $0) }
            var table = try reader.read { Table(mappings: mappings, contents: try $0.viewContents(named: "found")) }
            var tag = 0
            for round in 0 ..< Int.random(in: 1 ... 5, using: &rng) {
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    try connection.readWrite { t in
                        for _ in 0 ..< Int.random(in: 0 ... 4, using: &rng) {
                            tag += 1
                            switch Int.random(in: 0 ..< 8, using: &rng) {
                            case 0, 1:
                                query = typed.randomElement(using: &rng)!
                                try t.setSearchQuery(query, forView: "found")
                                queries += 1
                            case 2:
                                let (grouping, sorting) = RedefinitionTests.definition(
                                    RedefinitionTests.Order.allCases.randomElement(using: &rng)!, .byGroup, keyed: keyed)
                                try t.setViewDefinition(name: "root", grouping: grouping, sorting: sorting, versionTag: "\(tag)")
                            default:
                                try write(t, &rng)
                            }
                        }
                    }
                }
                let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
                table = try check(changeset, mappings, old: table, reader: reader, name: "found", query: query,
                                  "seed \(seed) round \(round) query \(query)\nconfig \(config)")
                let expectedRows = try expected(parent: "root", query: query)
                if byRank {   // ranks drift as rows change: the rows, not their order
                    XCTAssertEqual(try dump("found").mapValues(Set.init), expectedRows.mapValues(Set.init),
                                   "seed \(seed) round \(round)")
                } else {
                    XCTAssertEqual(try dump("found"), expectedRows, "seed \(seed) round \(round)")
                }
            }
        }
        print("SearchViewTests: \(queries) queries set")
        XCTAssertGreaterThan(queries, 50)
    }

    /// A query typed one character at a time in the background over a large
    /// parent while another connection commits: every changeset the reader
    /// gets is a valid batch update and edit script, and the last results
    /// equal a from-scratch search. 100k rows in the long mode.
    func testTypingWhileAnotherConnectionCommits() throws {
        let rows = TestScale.pick(20_000, long: 100_000)
        try database.registerView(rankView(keyed: true), name: "byRank")
        try database.registerFullTextIndex(Self.index, name: "text")
        var rng = SeededGenerator(seed: 4_100)
        try connection.readWrite { t in
            for index in 0 ..< rows {
                try Self.set(t, "k\(index)", ["a", "b", "c"][index % 3], index, Self.randomWords(&rng))
            }
        }
        try database.registerSearchView(SearchView(parent: "byRank", index: "text"), name: "found")
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let mappings = Mappings(groups: ["a", "b", "c"], view: "found")
        try reader.read { try mappings.update(with: $0) }
        var table = try reader.read { Table(mappings: mappings, contents: try $0.viewContents(named: "found")) }
        // Another connection commits on its own thread all along.
        let stop = Locked(false)
        let writerDone = DispatchSemaphore(value: 0)
        let writer = try database.newConnection()
        Thread.detachNewThread {
            var rng = SeededGenerator(seed: 4_101)
            while !stop.value {
                try? writer.readWrite { t in
                    for _ in 0 ..< 5 {
                        let index = Int.random(in: 0 ..< rows, using: &rng)
                        try Self.set(t, "k\(index)", ["a", "b", "c"][index % 3], index, Self.randomWords(&rng))
                    }
                }
            }
            writerDone.signal()
        }
        var steps = 0
        for word in ["blueberry", "coconut"] {
            for length in [0] + Array(1 ... word.count) + Array((0 ..< word.count).reversed()) {
                let query = length == 0 ? "" : "\(word.prefix(length))*"
                let done = DispatchSemaphore(value: 0)
                try database.search(query, inView: "found") { _ in done.signal() }
                done.wait()
                let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
                table = try check(changeset, mappings, old: table, reader: reader, name: "found", query: query,
                                  "typed \(query)")
                steps += 1
            }
        }
        stop.mutate { $0 = true }
        writerDone.wait()
        try reader.beginLongLivedReadTransaction()
        try connection.readWrite { try $0.setSearchQuery("co*", forView: "found") }
        XCTAssertEqual(try dump("found"), try expected(parent: "byRank", query: "co*"))
        XCTAssertGreaterThan(steps, 30)
    }
}
