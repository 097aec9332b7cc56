import XCTest
@testable import YDBView

/// THE changeset property, over thousands of random histories and configurations:
/// applying a changeset to the old table with UITableView batch-update rules gives
/// exactly the new table; every changed row still shown is updated or moved; no
/// unchanged row appears except to enter/leave the table, to follow a replaced
/// section, or as a dependency-only reload; every row whose drawing neighbour
/// changed is reloaded. Seeded: a failure prints the seed that replays it.
final class ChangesetPropertyTests: XCTestCase {
    func testChangesetsAreValidBatchUpdates() {
        let baseSeed = UInt64(9_000_000)
        var changesets = 0, nonEmpty = 0
        for caseNumber in 0..<TestScale.pick(1_000, long: 4_000) {
            let seed = baseSeed &+ UInt64(caseNumber)
            if let only = ProcessInfo.processInfo.environment["YDB_SEED"], UInt64(only) != seed { continue }
            do {
                let (made, changed) = try runScenario(seed: seed)
                changesets += made
                nonEmpty += changed
            } catch {
                XCTFail("seed \(seed): \(error)")
                return
            }
        }
        print("ChangesetPropertyTests: \(changesets) changesets, \(nonEmpty) non-empty")
        XCTAssertGreaterThan(nonEmpty, changesets / 2)
    }

    /// Runs one random scenario; returns (changesets computed, non-empty ones).
    func runScenario(seed: UInt64) throws -> (Int, Int) {
        var rng = SeededGenerator(seed: seed)
        let view = RandomScenario.view(using: &rng, maxRows: 25)
        let config = RandomScenario.config(using: &rng)
        let mappings = config.make()
        mappings.update(with: view.contents, snapshot: view.snapshot)
        var nextRowid = Int64(1_000)
        var made = 0, changed = 0
        for round in 0..<Int.random(in: 1...4, using: &rng) {
            let oldContents = view.contents
            let oldTable = Table(mappings: mappings, contents: oldContents)
            let oldGroups = mappings.allGroups
            view.clearTouched()
            var logs: [ViewCommitLog] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                randomOperations(on: view, nextRowid: &nextRowid, using: &rng)
                logs.append(view.commit())
            }
            if Int.random(in: 0..<10, using: &rng) == 0 {
                mappings.update(with: view.contents, snapshot: view.snapshot)   // no changeset this time
                if !config.hasFlexibleRange { try expectModel(config, mappings, view, "plain update round \(round)") }
                continue
            }
            let hasChanges = mappings.hasChanges(for: logs)
            let changeset = try mappings.changes(for: logs)
            made += 1
            if !changeset.isEmpty { changed += 1 }
            let context = "round \(round)\nconfig \(config)\nold \(oldTable)\nlogs \(logs.map(\.entries))\nchangeset \(changeset.sectionChanges) \(changeset.rowChanges)"
            let newTable = Table(mappings: mappings, contents: view.contents)
            guard mappings.snapshotOfLastUpdate == view.snapshot else { throw OracleFailure(description: "snapshot not moved\n\(context)") }
            if !changeset.isEmpty && !hasChanges { throw OracleFailure(description: "hasChanges false\n\(context)") }
            let applied: Table
            do { applied = try BatchUpdate(changeset).apply(to: oldTable) } catch {
                throw OracleFailure(description: "\(error)\n\(context)")
            }
            guard applied == newTable else {
                throw OracleFailure(description: "applied \(applied)\nnew     \(newTable)\n\(context)")
            }
            // The same changeset as an ordered edit script, step by step.
            do {
                try BatchUpdate<Int64>.check(steps: changeset.steps(), from: oldTable, to: newTable,
                                             naming: BatchUpdate<Int64>.rowid)
            } catch {
                throw OracleFailure(description: "edit script: \(error)\nsteps \(changeset.steps())\n\(context)")
            }
            try checkRowRules(changeset, old: oldTable, new: newTable, view: view, mappings: mappings,
                              logs: logs, before: oldContents, oldGroups: oldGroups, context: context)
            if !config.hasFlexibleRange { try expectModel(config, mappings, view, context) }
            try checkFlexibleBounds(config, mappings, view, context)
        }
        return (made, changed)
    }

    private func randomOperations(on view: FakeView, nextRowid: inout Int64, using rng: inout SeededGenerator) {
        for _ in 0..<Int.random(in: 1...5, using: &rng) {
            let rows = view.allRowids
            let group = RandomScenario.groupPool.randomElement(using: &rng)!
            let value = Int.random(in: 0...20, using: &rng)
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<30:
                view.set(nextRowid, group: group, value: value)
                nextRowid += 1
            case 30..<50:
                if let row = rows.randomElement(using: &rng) {
                    let sameGroup = Bool.random(using: &rng)
                    view.set(row, group: sameGroup ? (view.locate(row)?.group ?? group) : group, value: value)
                }
            case 50..<72:
                if let row = rows.randomElement(using: &rng) {
                    let flags: RowChangeFlags = [[.object], [.metadata], [.object, .metadata]].randomElement(using: &rng)!
                    view.touch(row, flags)
                }
            case 72..<97:
                if let row = rows.randomElement(using: &rng) { view.remove(row) }
            default:
                view.reset()
            }
        }
    }

    private func expectModel(_ config: MappingsConfig, _ mappings: Mappings, _ view: FakeView, _ context: String) throws {
        let expected = MappingsModel(config: config, contents: view.contents).table
        let actual = Table(mappings: mappings, contents: view.contents)
        guard expected == actual else {
            throw OracleFailure(description: "table \(actual)\nmodel \(expected)\n\(context)")
        }
    }

    private func checkFlexibleBounds(_ config: MappingsConfig, _ mappings: Mappings, _ view: FakeView, _ context: String) throws {
        for group in mappings.allGroups {
            guard let options = mappings.rangeOptions(forGroup: group), options.isFlexible,
                  let position = mappings.rangePosition(forGroup: group) else { continue }
            let count = view.contents.count(inGroup: group)
            if position.offsetFromBeginning > count || position.offsetFromEnd > count {
                // Past the end of the group: nothing shown, and only while min length cannot pull rows in.
                guard position.length == 0, min(position.offsetFromBeginning, position.offsetFromEnd) == 0,
                      options.minLength == 0 || count == 0 else {
                    throw OracleFailure(description: "flexible window of \(group) past the end: \(position) count \(count)\n\(context)")
                }
                continue
            }
            guard position.length <= options.maxLength, position.length >= min(options.minLength, count),
                  position.offsetFromBeginning + position.length + position.offsetFromEnd == count else {
                throw OracleFailure(description: "flexible window of \(group) out of bounds: \(position) count \(count)\n\(context)")
            }
        }
    }

    private func checkRowRules(_ changeset: Changeset, old: Table, new: Table, view: FakeView,
                               mappings: Mappings, logs: [ViewCommitLog], before: FakeContents,
                               oldGroups: [String], context: String) throws {
        func fail(_ message: String) -> OracleFailure { OracleFailure(description: "\(message)\n\(context)") }
        var changeOf: [Int64: RowChange] = [:]
        for change in changeset.rowChanges { changeOf[change.rowid] = change }
        let deletedSections = Set(changeset.sectionChanges.filter { $0.type == .delete }.map(\.index))
        let insertedSections = Set(changeset.sectionChanges.filter { $0.type == .insert }.map(\.index))
        let marked = Self.dependencyMarks(logs: logs, before: before, oldGroups: oldGroups, mappings: mappings)
        for change in changeset.rowChanges {
            let touched = view.touched[change.rowid] != nil
            let inViewThroughout = before.locate(rowid: change.rowid) != nil
                && view.contents.locate(rowid: change.rowid) != nil
            switch change.type {
            case .insert:
                if change.changes.subtracting(.dependency) != [.object, .metadata] { throw fail("insert flags \(change)") }
            case .delete where !inViewThroughout || !touched:
                // A row that left the view, or one a window moved off with nothing else changed.
                if change.changes.subtracting(.dependency) != [.object, .metadata]
                    && change.changes != .dependency { throw fail("delete flags \(change)") }
            case .delete:
                if change.changes.isEmpty { throw fail("delete without flags \(change)") }
            default:
                break
            }
            if change.changes.contains(.dependency) && !marked.contains(change.rowid) {
                throw fail("dependency flag on a row no operation marked: \(change)")
            }
            if change.type == .update && change.finalPosition?.section != change.indexPath?.section {
                throw fail("update whose section changes: \(change)")
            }
            if touched && change.rowKey != FakeView.key(change.rowid) { throw fail("missing key \(change)") }
            if !touched && change.rowKey != nil { throw fail("key for untouched row \(change)") }
            guard !touched, let from = old.position(of: change.rowid), let to = new.position(of: change.rowid) else { continue }
            // An untouched row shown before and after.
            switch change.type {
            case .update:
                if change.changes != .dependency { throw fail("untouched row updated with \(change.changes.rawValue): \(change)") }
            case .move:
                if !deletedSections.contains(from.section) && !insertedSections.contains(to.section)
                    && change.changes != .dependency {
                    throw fail("untouched row moved inside a kept section: \(change)")
                }
            default:
                throw fail("untouched row inserted/deleted while shown before and after: \(change)")
            }
        }
        for (rowid, _) in view.touched {
            guard old.position(of: rowid) != nil, new.position(of: rowid) != nil else { continue }
            guard let change = changeOf[rowid], change.type == .update || change.type == .move else {
                throw fail("changed row \(rowid) shown before and after has no update/move")
            }
        }
        // Dependencies: a marked row shown before and after is reloaded; one that
        // changes anyway carries the flag (unless a window moved it onto the table).
        for rowid in marked {
            if let change = changeOf[rowid] {
                let movedOnByAWindow = change.type == .insert && before.locate(rowid: rowid) != nil
                if !change.changes.contains(.dependency) && !movedOnByAWindow {
                    throw fail("marked row \(rowid) changed without the dependency flag: \(change)")
                }
            } else if old.position(of: rowid) != nil && new.position(of: rowid) != nil {
                throw fail("marked row \(rowid) shown before and after is not reloaded")
            }
        }
    }

    /// The rows cell-drawing dependencies mark, computed by replaying the logs on
    /// plain arrays: after each operation at index i of a group with view-order
    /// offset o, the row then at i − o (for o < 0 after a delete, at i − o − 1: the
    /// rows below moved up) is marked. A reset clears everything.
    private static func dependencyMarks(logs: [ViewCommitLog], before: FakeContents, oldGroups: [String],
                                        mappings: Mappings) -> Set<Int64> {
        var arrays: [String: [Int64]] = [:]
        for group in before.groupNames {
            arrays[group] = (0..<before.count(inGroup: group)).map { before.rowid(at: $0, inGroup: group)! }
        }
        var marked = Set<Int64>()
        func mark(_ group: String, _ index: Int, afterDelete: Bool) {
            // Only in the mappings' groups: before the changeset for a delete, after it otherwise.
            guard (afterDelete ? oldGroups : mappings.allGroups).contains(group),
                  let offsets = mappings.dependencyOffsets[group], let rows = arrays[group] else { return }
            for offset in offsets {
                let target = index - offset - (afterDelete && offset < 0 ? 1 : 0)
                if offset > 0 && index < offset { continue }
                if rows.indices.contains(target) { marked.insert(rows[target]) }
            }
        }
        for log in logs {
            for entry in log.entries {
                switch entry {
                case .insert(let rowid, let group, let index):
                    arrays[group, default: []].insert(rowid, at: index)
                    mark(group, index, afterDelete: false)
                case .delete(_, let group, let index):
                    arrays[group]!.remove(at: index)
                    mark(group, index, afterDelete: true)
                case .update(_, let group, let index, _):
                    mark(group, index, afterDelete: false)
                case .reset:
                    arrays.removeAll()
                    marked.removeAll()
                case .groupCreated, .groupEmptied, .reordered:   // the fake view never reorders
                    break
                }
            }
        }
        return marked
    }

    /// A changeset asked for logs that do not start at the mappings' snapshot fails
    /// and leaves the mappings untouched.
    func testMismatchedLogsThrowAndLeaveMappingsUnchanged() throws {
        let view = FakeView()
        view.set(1, group: "a", value: 1)
        view.commit()
        let mappings = Mappings(groups: ["a"], view: "view")
        let unrelated = view.commit()
        XCTAssertThrowsError(try mappings.changes(for: [unrelated]))   // never updated
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.set(2, group: "a", value: 2)
        let first = view.commit()
        view.set(3, group: "a", value: 3)
        let second = view.commit()
        XCTAssertThrowsError(try mappings.changes(for: [second])) { error in
            XCTAssertEqual((error as? YDBError)?.reason,
                           .mismatchedMappingsAndNotifications(mappingsSnapshot: 2, logsStart: 3))
            XCTAssertEqual((error as? YDBError)?.code, .mismatch)
        }
        XCTAssertThrowsError(try mappings.changes(for: [second, first]))
        XCTAssertEqual(mappings.snapshotOfLastUpdate, 2)
        XCTAssertEqual(mappings.numberOfItems(inSection: 0), 1)
        let changeset = try mappings.changes(for: [first, second])
        XCTAssertEqual(changeset.rowChanges.map(\.type), [.insert, .insert])
        XCTAssertEqual(mappings.snapshotOfLastUpdate, 4)
        XCTAssertEqual(try mappings.changes(for: [] as [ViewCommitLog]), Changeset())
        XCTAssertThrowsError(try Mappings(groups: ["a"], view: "other").changes(for: [first]))
    }
}

/// A broken changeset property, with the seed's context.
struct OracleFailure: Error, CustomStringConvertible {
    let description: String
}
