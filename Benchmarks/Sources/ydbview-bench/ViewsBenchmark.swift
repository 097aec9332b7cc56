import Foundation
import YDBView

/// Figures of the "Views" issue for one size.
struct ViewsResult {
    var n = 0
    var groupSize = 0
    var loadEngine = 0.0, loadPlain = 0.0
    var populate: [Double] = [], createIndex: [Double] = [], populateInMemory: [Double] = []
    var populateGroupingCalls = 0, populateSortingCalls = 0
    var rssPerRow: [Double] = [], peakPerRow: [Double] = []
    /// The same view sorted by sort keys: memory kept per row.
    var keyedRSSPerRow: [Double] = []
    var insertCalls: [Int] = [], appendCalls: [Int] = [], updateCalls: [Int] = []
    var insertGroupSizes: [Int] = []
    var insert = Samples(), insertPlain = Samples()
    var append = Samples()
    var update = Samples(), updatePlain = Samples(), updatePlainFull = Samples()
    var rowKeyAt = Samples(), rowKeyAtPlain = Samples()
    var position = Samples(), positionPlain = Samples()
    var reopen: [Double] = [], reopenCalls: [Int] = []
    /// The baseline of a reopen: opening the plain file and reading every
    /// row in the index's order, as a list built from SQL would.
    var orderedScan: [Double] = []
    var reopenCount = 0
}

struct Settings {
    var sizes = [10_000, 100_000, 1_000_000]
    var groups = 10
    var repeats = 3
    /// Commits per latency figure.
    var commits = 200
    /// Lookups per lookup figure (the SQL baselines take a tenth of these).
    var lookups = 2000
    var changesetCommits = 100
    var runViews = true
    var runChangesets = true
    var runDurability = true
    var runSearch = true
    /// Commits per write-ahead-log figure (each of three runs).
    var walCommits = 10_000
    /// Views registered one after another for the registration figure.
    var registeredViews = 2000
}

/// ⌈log2(m + 1)⌉: comparisons a binary search among m rows needs.
func ceilLog2(_ m: Int) -> Int {
    var bits = 0
    while (1 << bits) < m + 1 { bits += 1 }
    return bits
}

enum ViewsBenchmark {
    static func run(_ fixture: Fixture, _ settings: Settings) throws -> ViewsResult {
        var result = ViewsResult()
        result.n = fixture.n
        let counters = fixture.counters
        let view = Data.view(counters)

        // Population vs CREATE INDEX, alternating so both see the same load.
        for repeatIndex in 0 ..< settings.repeats {
            log("  [\(count(fixture.n))] population \(repeatIndex + 1)/\(settings.repeats)")
            if repeatIndex > 0 {
                try fixture.database.unregisterView(name: Data.viewName)
                try fixture.plain.execute("DROP INDEX t_order")
            }
            try fixture.catchUp()
            let (_, index) = try timed { try fixture.plain.execute("CREATE INDEX t_order ON t (grp, rank)") }
            result.createIndex.append(index)

            let before = residentBytes()
            resetPeakResident()
            counters.reset()
            let (_, populate) = try timed { try fixture.database.registerView(view, name: Data.viewName) }
            result.populate.append(populate)
            result.peakPerRow.append(Double(peakResidentBytes() - before) / Double(fixture.n))
            result.populateGroupingCalls = counters.grouping
            result.populateSortingCalls = counters.sorting
            try fixture.catchUp()
            let after = residentBytes()
            result.rssPerRow.append(Double(after - before) / Double(fixture.n))

            // The same view kept in memory only: the difference is what
            // writing the view's table costs.
            var inMemory = view
            inMemory.isPersistent = false
            let (_, memory) = try timed { try fixture.database.registerView(inMemory, name: "inMemory") }
            result.populateInMemory.append(memory)
            try fixture.database.unregisterView(name: "inMemory")
            try fixture.catchUp()

            // The same order by sort keys: what keeping the keys costs.
            let keyedBefore = residentBytes()
            try fixture.database.registerView(Data.keyView(), name: "keyed")
            try fixture.catchUp()
            result.keyedRSSPerRow.append(Double(residentBytes() - keyedBefore) / Double(fixture.n))
            try fixture.database.unregisterView(name: "keyed")
            try fixture.catchUp()
        }
        result.groupSize = try fixture.writer.read { try $0.view(Data.viewName).numberOfItems(inGroup: "g0") }

        let g0 = Data.groupName(0)
        let plainInsert = try fixture.plain.prepare("INSERT INTO t (key, grp, rank, object) VALUES (?1, ?2, ?3, ?4)")
        let plainUpdate = try fixture.plain.prepare("UPDATE t SET rank = ?2, object = ?3 WHERE key = ?1")
        func plainCommit(_ statement: PlainStatement, _ key: String, _ rank: Int64) throws {
            try fixture.plain.execute("BEGIN")
            statement.bind(1, key)
            if statement === plainInsert {
                statement.bind(2, g0)
                statement.bind(3, rank)
                statement.bind(4, Data.object(group: 0, rank: rank))
            } else {
                statement.bind(2, rank)
                statement.bind(3, Data.object(group: 0, rank: rank))
            }
            try statement.run()
            try fixture.plain.execute("COMMIT")
        }

        // Random inserts into g0: one commit each.
        log("  [\(count(fixture.n))] inserts, appends, updates")
        for i in 0 ..< settings.commits {
            let key = "ins\(i)", rank = Int64(fixture.random.next() % UInt64(Data.rankSpace))
            let object = Data.object(group: 0, rank: rank)
            result.insertGroupSizes.append(result.groupSize + i)
            counters.reset()
            var start = now()
            try fixture.writer.readWrite {
                try $0.setObject(object, forKey: key, inCollection: Data.collection, metadata: nil)
            }
            result.insert.add(from: start)
            result.insertCalls.append(counters.sorting)
            start = now()
            try plainCommit(plainInsert, key, rank)
            result.insertPlain.add(from: start)
            fixture.group0Keys.append(key)
            fixture.group0MaxRank = max(fixture.group0MaxRank, rank)
        }

        // Appends: each new row sorts after every row of g0.
        for i in 0 ..< settings.commits {
            let key = "app\(i)"
            fixture.group0MaxRank += 1
            let rank = fixture.group0MaxRank
            counters.reset()
            let start = now()
            try fixture.writer.readWrite {
                try $0.setObject(Data.object(group: 0, rank: rank), forKey: key,
                                 inCollection: Data.collection, metadata: nil)
            }
            result.append.add(from: start)
            result.appendCalls.append(counters.sorting)
            try plainCommit(plainInsert, key, rank)
            fixture.group0Keys.append(key)
        }
        fixture.rowCount += 2 * settings.commits

        // Updates: one row of g0 gets a new random rank (it moves).
        for _ in 0 ..< settings.commits {
            let key = fixture.group0Keys[Int(fixture.random.next() % UInt64(fixture.group0Keys.count))]
            let rank = Int64(fixture.random.next() % UInt64(Data.rankSpace))
            counters.reset()
            var start = now()
            try fixture.writer.readWrite {
                try $0.replaceObject(Data.object(group: 0, rank: rank), forKey: key, inCollection: Data.collection)
            }
            result.update.add(from: start)
            result.updateCalls.append(counters.sorting)
            start = now()
            try plainCommit(plainUpdate, key, rank)
            result.updatePlain.add(from: start)
            // The same commit again with an fsync per commit, like the engine's
            // connections do today (see README, "synchronous").
            try fixture.plain.execute("PRAGMA synchronous = FULL")
            start = now()
            try plainCommit(plainUpdate, key, rank)
            result.updatePlainFull.add(from: start)
            try fixture.plain.execute("PRAGMA synchronous = NORMAL")
        }

        try lookups(fixture, settings, &result)
        try reopen(fixture, settings, view, &result)
        return result
    }

    private static func lookups(_ fixture: Fixture, _ settings: Settings, _ result: inout ViewsResult) throws {
        log("  [\(count(fixture.n))] lookups")
        let g0 = Data.groupName(0)
        let size = try fixture.writer.read { try $0.view(Data.viewName).numberOfItems(inGroup: g0) }
        var sink = 0
        try fixture.writer.read { transaction in
            let view = try transaction.view(Data.viewName)
            for _ in 0 ..< settings.lookups {
                let index = Int(fixture.random.next() % UInt64(size))
                let start = now()
                let key = try view.rowKey(at: index, inGroup: g0)
                result.rowKeyAt.add(from: start)
                sink &+= key!.key.utf8.count
            }
            for _ in 0 ..< settings.lookups {
                let key = "k\(fixture.random.next() % UInt64(fixture.n))"
                let start = now()
                let position = try view.position(forKey: key, inCollection: Data.collection)
                result.position.add(from: start)
                sink &+= position!.index
            }
        }
        // The baseline: the same lookups with SQL on the indexed plain table.
        let byIndex = try fixture.plain.prepare("SELECT key FROM t WHERE grp = ?1 ORDER BY rank, key LIMIT 1 OFFSET ?2")
        let rowOf = try fixture.plain.prepare("SELECT grp, rank FROM t WHERE key = ?1")
        let rankOf = try fixture.plain.prepare(
            "SELECT count(*) FROM t WHERE grp = ?1 AND (rank < ?2 OR (rank = ?2 AND key < ?3))")
        try fixture.plain.execute("BEGIN")
        for _ in 0 ..< max(20, settings.lookups / 10) {
            let index = Int64(fixture.random.next() % UInt64(size))
            let start = now()
            byIndex.bind(1, g0)
            byIndex.bind(2, index)
            _ = try byIndex.step()
            sink &+= byIndex.string(0).utf8.count
            byIndex.reset()
            result.rowKeyAtPlain.add(from: start)
        }
        for _ in 0 ..< max(20, settings.lookups / 10) {
            let key = "k\(fixture.random.next() % UInt64(fixture.n))"
            let start = now()
            rowOf.bind(1, key)
            _ = try rowOf.step()
            let group = rowOf.string(0), rank = rowOf.int64(1)
            rowOf.reset()
            rankOf.bind(1, group)
            rankOf.bind(2, rank)
            rankOf.bind(3, key)
            _ = try rankOf.step()
            sink &+= Int(rankOf.int64(0))
            rankOf.reset()
            result.positionPlain.add(from: start)
        }
        try fixture.plain.execute("COMMIT")
        if sink == 42 { print("") }   // keeps the lookups from being optimised away
    }

    /// Closes and reopens the database, registering the same view with the
    /// same version tag: the stored view is loaded, no callback runs.
    private static func reopen(_ fixture: Fixture, _ settings: Settings, _ view: View,
                               _ result: inout ViewsResult) throws {
        for repeatIndex in 0 ..< settings.repeats {
            log("  [\(count(fixture.n))] reopen \(repeatIndex + 1)/\(settings.repeats)")
            fixture.writer.close()
            fixture.database.close()
            _ = residentBytes()
            fixture.counters.reset()
            let (_, seconds) = try timed {
                fixture.database = try Database(path: fixture.databasePath)
                try fixture.database.registerView(view, name: Data.viewName)
            }
            fixture.writer = try fixture.database.newConnection()
            result.reopen.append(seconds)
            result.reopenCalls.append(fixture.counters.total)
            result.reopenCount = try fixture.writer.read { try $0.view(Data.viewName).numberOfItemsInAllGroups() }
            guard result.reopenCount == fixture.rowCount else {
                throw SQLiteFailure(description: "reopened view holds \(result.reopenCount) rows, expected \(fixture.rowCount)")
            }
            var scanned = 0
            let (_, scanSeconds) = try timed {
                let plain = try PlainSQLite(path: fixture.directory + "/plain.sqlite")
                let scan = try plain.prepare("SELECT key, rank FROM t ORDER BY grp, rank, key")
                while try scan.step() { scanned += 1 }
            }
            guard scanned == fixture.rowCount else {
                throw SQLiteFailure(description: "the ordered scan read \(scanned) rows, expected \(fixture.rowCount)")
            }
            result.orderedScan.append(scanSeconds)
        }
    }
}
