import Foundation
import XCTest
import YDBView

/// The engine at sizes from 10 to 100k rows, seeded: rows stored before the
/// views are registered and rows inserted after, then random inserts, rank
/// changes, moves between groups and removes over several commits. After
/// each step every view must equal a model sorted here, independently of
/// the engine, and the changeset of mappings over the views, applied to the
/// old table with the shared batch-update checker, must give the new table.
final class SizeSweepTests: XCTestCase {
    /// What one size runs.
    ///
    /// Debug builds (the test suite) check a view where each write touched
    /// it, and a small view whole (`ViewWriter+Checks.swift`), so every size
    /// writes hundreds of rows one by one after its views exist. Most rows
    /// of the large sizes are stored before registration, which places them
    /// in one pass. At 100k the sort-key view is the only view: both forms
    /// give the same order, which the smaller sizes check by comparing their
    /// changesets, and a comparator population is the slow part of a debug
    /// build.
    struct Size {
        let rows: Int
        /// Of `rows`, how many are inserted after the views are registered.
        let insertedAfter: Int
        /// Random operations after population, spread over `commits` commits.
        let operations: Int
        let commits: Int
        let forms: [SortForm]
    }

    enum SortForm: String {
        case comparator, sortKey
    }

    static let sizes = [
        Size(rows: 10, insertedAfter: 5, operations: 20, commits: 3, forms: [.comparator, .sortKey]),
        Size(rows: 100, insertedAfter: 50, operations: 100, commits: 3, forms: [.comparator, .sortKey]),
        Size(rows: 1_000, insertedAfter: 30, operations: 40, commits: 3, forms: [.comparator, .sortKey]),
        Size(rows: 10_000, insertedAfter: 200, operations: 300, commits: 3, forms: [.comparator, .sortKey]),
        Size(rows: 100_000, insertedAfter: 200, operations: 300, commits: 3, forms: [.sortKey]),
    ]

    static let groups = ["a", "b", "c", "d"]
    static let collection = "items"

    func testSizesFromTenToOneHundredThousand() throws {
        for size in Self.sizes {
            let started = Date()
            var sweep = try Sweep(size: size, seed: 12_000 + UInt64(size.rows))
            try sweep.run()
            print("SizeSweepTests: \(size.rows) rows in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
    }

    /// One size's database, views, mappings and model.
    struct Sweep {
        let size: Size
        var random: SeededGenerator
        let database: Database
        let writer: Connection
        let reader: Connection
        /// One per view, all configured alike: every group, one of them through
        /// a range window (which rows the commits never touched enter and
        /// leave), one reversed.
        let mappings: [Mappings]
        /// Every row: key -> (group, rank).
        var model: [String: (group: String, rank: Int)] = [:]
        var keys: [String] = []
        var nextKey = 0

        init(size: Size, seed: UInt64) throws {
            self.size = size
            random = SeededGenerator(seed: seed)
            database = try Database(path: nil)
            writer = try database.newConnection()
            reader = try database.newConnection()
            mappings = try size.forms.map { form in
                let mappings = Mappings(groups: SizeSweepTests.groups, view: form.rawValue)
                mappings.setRangeOptions(try RangeOptions.fixed(length: 25, offset: 3, from: .end), forGroup: "c")
                mappings.setIsReversed(true, forGroup: "b")
                return mappings
            }
        }

        mutating func run() throws {
            let context = "\(size.rows) rows"
            try writer.readWrite { t in
                for _ in 0 ..< size.rows - size.insertedAfter { try insert(t) }
            }
            for form in size.forms {
                try database.registerView(rankView(keyed: form == .sortKey), name: form.rawValue)
            }
            try reader.beginLongLivedReadTransaction()
            try reader.read { t in try mappings.forEach { try $0.update(with: t) } }
            try checkViewsAgainstModel("\(context), registered")

            if size.insertedAfter > 0 {
                let registered = try table()
                try writer.readWrite { t in
                    for _ in 0 ..< size.insertedAfter { try insert(t) }
                }
                try checkChanges(since: registered, "\(context), inserted after registration")
            }

            let populated = try table()
            for commit in 0 ..< size.commits {
                let count = size.operations / size.commits + (commit < size.operations % size.commits ? 1 : 0)
                try writer.readWrite { t in
                    for _ in 0 ..< count { try randomOperation(t) }
                }
            }
            try checkChanges(since: populated, "\(context), random operations")
        }

        // MARK: Writes

        mutating func insert(_ t: ReadWriteTransaction) throws {
            nextKey += 1
            let key = String(format: "k%06d", nextKey)
            try set(key, group: SizeSweepTests.groups.randomElement(using: &random)!, in: t)
            keys.append(key)
        }

        /// Sets the row with a new rank, drawn from a range a quarter the size
        /// of the table so that ranks tie often and the key decides.
        mutating func set(_ key: String, group: String, in t: ReadWriteTransaction) throws {
            let rank = Int.random(in: 0 ... max(1, size.rows / 4), using: &random)
            try t.setObject(Item.encode(group: group, rank: rank), forKey: key, inCollection: SizeSweepTests.collection,
                            metadata: nil)
            model[key] = (group, rank)
        }

        mutating func randomOperation(_ t: ReadWriteTransaction) throws {
            guard !keys.isEmpty else { return try insert(t) }
            let index = Int.random(in: 0 ..< keys.count, using: &random)
            let key = keys[index]
            switch Int.random(in: 0 ..< 4, using: &random) {
            case 0:
                try insert(t)
            case 1:   // a new rank in the same group: a move within it
                try set(key, group: model[key]!.group, in: t)
            case 2:
                let group = SizeSweepTests.groups.filter { $0 != model[key]!.group }.randomElement(using: &random)!
                try set(key, group: group, in: t)
            default:
                try t.removeObject(forKey: key, inCollection: SizeSweepTests.collection)
                model[key] = nil
                keys.swapAt(index, keys.count - 1)
                keys.removeLast()
            }
        }

        // MARK: Checks

        /// The table the first view's mappings show at the reader's snapshot.
        func table() throws -> Table {
            let contents = try reader.read { try $0.viewContents(named: size.forms[0].rawValue) }
            return Table(mappings: mappings[0], contents: contents)
        }

        /// Moves the reader to the newest commit, then checks the views against
        /// the model and the changeset against the tables before and after.
        func checkChanges(since oldTable: Table, _ context: String) throws {
            let notifications = try reader.beginLongLivedReadTransaction()
            let changesets = try mappings.map { try $0.changes(for: notifications) }
            try checkViewsAgainstModel(context)
            XCTAssertFalse(changesets[0].isEmpty, context)
            for (form, changeset) in zip(size.forms, changesets).dropFirst() {
                XCTAssertEqual(changeset, changesets[0], "\(context): the \(form) view's changeset differs")
            }
            do {
                let newTable = try table()
                try BatchUpdate(changesets[0]).check(from: oldTable, to: newTable)
                try BatchUpdate<Int64>.check(steps: changesets[0].steps(), from: oldTable, to: newTable,
                                             naming: BatchUpdate<Int64>.rowid)
            } catch {
                XCTFail("\(context): \(error)")
            }
        }

        /// Every view holds exactly the model's rows, each group sorted by
        /// (rank, key) here rather than by the engine.
        func checkViewsAgainstModel(_ context: String) throws {
            var rows: [String: [(rank: Int, key: String)]] = [:]
            for (key, row) in model { rows[row.group, default: []].append((row.rank, key)) }
            let expected = rows.mapValues { $0.sorted { ($0.rank, $0.key) < ($1.rank, $1.key) }.map(\.key) }
            try reader.read { t in
                for form in size.forms {
                    XCTAssertEqual(try t.view(form.rawValue).dump(), expected, "\(context): the \(form) view")
                }
            }
        }
    }
}
