import XCTest
@testable import YDBView

// Random writes and log replays shared by the tests that drive the real
// engine with random histories (EngineRandomTests, RedefinitionTests,
// FilteredViewTests).

/// The seeds of `count` random histories from `base` on; `YDB_SEED=<n>`
/// replays that one alone.
func randomSeeds(_ base: UInt64, _ count: Int) -> [UInt64] {
    if let only = ProcessInfo.processInfo.environment["YDB_SEED"], let seed = UInt64(only) { return [seed] }
    return (0 ..< UInt64(count)).map { base + $0 }
}

/// One random write: sets (new rows, moves within and across groups,
/// exclusions), metadata-only changes, touches, removes, collection
/// removes and (rarely) remove-all. Returns the rows whose object or
/// metadata changed.
func randomWrite(_ t: ReadWriteTransaction, _ rng: inout SeededGenerator,
                 touched: inout Set<RowKey>) throws {
    let collections = ["c1", "c2"]
    let groups = ["a", "b", "c", "d", "x", nil]
    let collection = collections.randomElement(using: &rng)!
    let key = "k\(Int.random(in: 0 ..< 40, using: &rng))"
    let rowKey = RowKey(collection: collection, key: key)
    switch Int.random(in: 0 ..< 100, using: &rng) {
    case 0 ..< 40:
        let group = groups.randomElement(using: &rng)!
        try t.setObject(Item.encode(group: group, rank: Int.random(in: 0 ... 15, using: &rng)),
                        forKey: key, inCollection: collection, metadata: nil)
        touched.insert(rowKey)
    case 40 ..< 55:
        if try t.exists(key: key, inCollection: collection) { touched.insert(rowKey) }
        try t.replaceMetadata([UInt8.random(in: 0 ... 255, using: &rng)], forKey: key, inCollection: collection)
    case 55 ..< 70:
        if try t.exists(key: key, inCollection: collection) { touched.insert(rowKey) }
        switch Int.random(in: 0 ..< 3, using: &rng) {
        case 0: try t.touchObject(forKey: key, inCollection: collection)
        case 1: try t.touchMetadata(forKey: key, inCollection: collection)
        default: try t.touchRow(forKey: key, inCollection: collection)
        }
    case 70 ..< 95:
        try t.removeObject(forKey: key, inCollection: collection)
    case 95 ..< 98:
        try t.removeAllObjects(inCollection: collection)
    default:
        try t.removeAllObjectsInAllCollections()
    }
}

func contentsArrays(_ contents: any ViewContents) -> [String: [Int64]] {
    var result: [String: [Int64]] = [:]
    for group in contents.groupNames {
        result[group] = (0 ..< contents.count(inGroup: group)).map { contents.rowid(at: $0, inGroup: group)! }
    }
    return result
}

/// Applies a log's entries, at their logged indexes, to its `before`.
func replay(_ log: ViewCommitLog) -> [String: [Int64]] {
    var groups = contentsArrays(log.before)
    let final = contentsArrays(log.after)
    // A reordered group's order until the commit's end is not in the log
    // (only in the engine): from its `.reordered` on, its rows are checked
    // as a set, and its order must be the final one.
    var reordered: Set<String> = []
    for entry in log.entries {
        switch entry {
        case let .insert(rowid, group, index):
            groups[group, default: []].insert(rowid, at: min(index, groups[group]?.count ?? 0))
        case let .delete(rowid, group, index):
            if reordered.contains(group) {
                groups[group]?.removeAll { $0 == rowid }
                continue
            }
            XCTAssertEqual(groups[group]?[index], rowid)
            groups[group]?.remove(at: index)
        case let .update(rowid, group, index, _):
            if !reordered.contains(group) { XCTAssertEqual(groups[group]?[index], rowid) }
        case .reset: groups = [:]
        case .reordered(let group):
            reordered.insert(group)
        case .groupCreated, .groupEmptied: break
        }
    }
    for group in reordered where Set(groups[group] ?? []) == Set(final[group] ?? []) {
        groups[group] = final[group]
    }
    return groups.filter { !$0.value.isEmpty }
}

