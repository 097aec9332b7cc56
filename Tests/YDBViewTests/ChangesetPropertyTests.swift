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
        for caseNumber in 0..<4_000 {
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
            try checkRowRules(changeset, old: oldTable, new: newTable, view: view, mappings: mappings, context: context)
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
            guard position.length <= options.maxLength, position.length >= min(options.minLength, count),
                  position.offsetFromBeginning + position.length + position.offsetFromEnd == count else {
                throw OracleFailure(description: "flexible window of \(group) out of bounds: \(position) count \(count)\n\(context)")
            }
        }
    }

    private func checkRowRules(_ changeset: Changeset, old: Table, new: Table, view: FakeView,
                               mappings: Mappings, context: String) throws {
        func fail(_ message: String) -> OracleFailure { OracleFailure(description: "\(message)\n\(context)") }
        var changeOf: [Int64: RowChange] = [:]
        for change in changeset.rowChanges { changeOf[change.rowid] = change }
        let deletedSections = Set(changeset.sectionChanges.filter { $0.type == .delete }.map(\.index))
        let insertedSections = Set(changeset.sectionChanges.filter { $0.type == .insert }.map(\.index))
        for change in changeset.rowChanges {
            let touched = view.touched[change.rowid] != nil
            if (change.type == .insert || change.type == .delete) && change.changes != [.object, .metadata] {
                throw fail("insert/delete flags \(change)")
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
        // Dependencies: rows kept in place whose drawing neighbour changed are reloaded.
        for (section, rows) in new.sections.enumerated() {
            for (row, rowid) in rows.enumerated() {
                guard let from = old.position(of: rowid) else { continue }
                if let change = changeOf[rowid], change.type != .update { continue }
                guard let group = view.contents.locate(rowid: rowid)?.group else { continue }
                for offset in mappings.cellDrawingDependencyOffsets(forGroup: group) {
                    let oldNeighbour = old.row(at: TableIndexPath(section: from.section, row: from.row + offset))
                    let newNeighbour = new.row(at: TableIndexPath(section: section, row: row + offset))
                    let neighbourChanged = newNeighbour.flatMap { changeOf[$0] }.map { !$0.changes.subtracting(.dependency).isEmpty } ?? false
                    if oldNeighbour != newNeighbour || neighbourChanged {
                        guard let change = changeOf[rowid], change.changes.contains(.dependency) else {
                            throw fail("row \(rowid) at [\(section), \(row)] not reloaded for its neighbour at \(offset)")
                        }
                    }
                }
            }
        }
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
