import Foundation
import YDBView

/// Figures of the "Changesets" issue for one size.
struct ChangesetsResult {
    var n = 0
    var groupSize = 0
    /// The commit alone (engine: row + view maintenance; plain: one UPDATE).
    var commit = Samples(), commitPlain = Samples()
    /// Reader catch-up: beginLongLivedReadTransaction returning the notifications.
    var catchUp = Samples()
    /// `changes(for:)` alone, (a) 50-row fixed range, (b) no range.
    var changesRanged = Samples(), changesFull = Samples()
    /// From the start of the commit to the finished changeset.
    var endToEndRanged = Samples(), endToEndFull = Samples()
    /// Baseline after its commit: re-query + diff, whole group and first 50 rows.
    var requery = Samples(), diff = Samples()
    var requery50 = Samples(), diff50 = Samples()
    var endToEndPlain = Samples(), endToEndPlain50 = Samples()
    /// After the commit only: engine catch-up + changes; baseline re-query + diff.
    var afterRanged = Samples(), afterFull = Samples(), afterPlain = Samples(), afterPlain50 = Samples()
    var rowChangesRanged = 0, rowChangesFull = 0, baselineEdits = 0
}

enum ChangesetsBenchmark {
    static let window = 50

    static func run(_ fixture: Fixture, _ settings: Settings) throws -> ChangesetsResult {
        log("  [\(count(fixture.n))] changesets")
        var result = ChangesetsResult()
        result.n = fixture.n
        let g0 = Data.groupName(0)

        let reader = try fixture.database.newConnection()
        defer { reader.close() }
        try reader.beginLongLivedReadTransaction()
        let ranged = Mappings(groups: [g0], view: Data.viewName)
        ranged.setRangeOptions(try .fixed(length: window, offset: 0, from: .beginning), forGroup: g0)
        let full = Mappings(groups: [g0], view: Data.viewName)
        try reader.read { transaction in
            try ranged.update(with: transaction)
            try full.update(with: transaction)
        }
        result.groupSize = full.numberOfItems(inGroup: g0) ?? 0

        let select = try fixture.plain.prepare("SELECT key FROM t WHERE grp = ?1 ORDER BY rank, key")
        let select50 = try fixture.plain.prepare("SELECT key FROM t WHERE grp = ?1 ORDER BY rank, key LIMIT \(window)")
        let update = try fixture.plain.prepare("UPDATE t SET rank = ?2, object = ?3 WHERE key = ?1")
        func keys(_ statement: PlainStatement) throws -> [String] {
            var keys: [String] = []
            statement.bind(1, g0)
            while try statement.step() { keys.append(statement.string(0)) }
            statement.reset()
            return keys
        }
        var shown = try keys(select), shown50 = try keys(select50)
        guard shown.count == result.groupSize else {
            throw SQLiteFailure(description: "baseline group has \(shown.count) rows, view \(result.groupSize)")
        }
        // A rank that lands among the first rows, so the 50-row window changes.
        let topRank = Data.rankSpace / Int64(max(1, result.groupSize)) * 25

        for iteration in 0 ..< settings.changesetCommits {
            let key = fixture.group0Keys[Int(fixture.random.next() % UInt64(fixture.group0Keys.count))]
            let rank = Int64(fixture.random.next() % UInt64(iteration % 2 == 0 ? topRank : Data.rankSpace))
            let object = Data.object(group: 0, rank: rank)

            // Engine: commit, reader catches up, both mappings compute their changeset.
            let start = now()
            try fixture.writer.readWrite { try $0.replaceObject(object, forKey: key, inCollection: Data.collection) }
            let committed = now()
            let notifications = try reader.beginLongLivedReadTransaction()
            let caughtUp = now()
            let changesetRanged = try ranged.changes(for: notifications)
            let rangedDone = now()
            let changesetFull = try full.changes(for: notifications)
            let fullDone = now()
            result.commit.add(Double(committed - start) / 1e9)
            result.catchUp.add(Double(caughtUp - committed) / 1e9)
            result.changesRanged.add(Double(rangedDone - caughtUp) / 1e9)
            result.changesFull.add(Double(fullDone - rangedDone) / 1e9)
            result.endToEndRanged.add(Double(rangedDone - start) / 1e9)
            result.endToEndFull.add(Double(caughtUp - start + fullDone - rangedDone) / 1e9)
            result.afterRanged.add(Double(rangedDone - committed) / 1e9)
            result.afterFull.add(Double(caughtUp - committed + fullDone - rangedDone) / 1e9)
            result.rowChangesRanged += changesetRanged.rowChanges.count
            result.rowChangesFull += changesetFull.rowChanges.count

            // Baseline: the same commit on the plain table, re-query, diff.
            let plainStart = now()
            try fixture.plain.execute("BEGIN")
            update.bind(1, key)
            update.bind(2, rank)
            update.bind(3, object)
            try update.run()
            try fixture.plain.execute("COMMIT")
            let plainCommitted = now()
            let newShown = try keys(select)
            let queried = now()
            let difference = newShown.difference(from: shown)
            let diffed = now()
            let newShown50 = try keys(select50)
            let queried50 = now()
            let difference50 = newShown50.difference(from: shown50)
            let diffed50 = now()
            result.commitPlain.add(Double(plainCommitted - plainStart) / 1e9)
            result.requery.add(Double(queried - plainCommitted) / 1e9)
            result.diff.add(Double(diffed - queried) / 1e9)
            result.requery50.add(Double(queried50 - diffed) / 1e9)
            result.diff50.add(Double(diffed50 - queried50) / 1e9)
            result.endToEndPlain.add(Double(diffed - plainStart) / 1e9)
            result.endToEndPlain50.add(Double(plainCommitted - plainStart + diffed50 - diffed) / 1e9)
            result.afterPlain.add(Double(diffed - plainCommitted) / 1e9)
            result.afterPlain50.add(Double(diffed50 - diffed) / 1e9)
            result.baselineEdits += difference.count
            shown = newShown
            shown50 = newShown50
            _ = difference50
        }

        // Both sides must end up showing the same rows in the same order.
        let engineKeys = try reader.read { transaction -> [String] in
            var keys: [String] = []
            try transaction.view(Data.viewName).enumerateKeys(inGroup: g0) { rowKey, _, _ in keys.append(rowKey.key) }
            return keys
        }
        guard engineKeys == shown else { throw SQLiteFailure(description: "engine and baseline disagree on g0's order") }
        return result
    }
}
