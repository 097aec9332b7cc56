/// One step of an edit script: a single change to a table, valid against
/// the table as it stands after the steps before it.
///
/// List toolkits outside UIKit take no batches: Qt's `QAbstractItemModel`
/// wants one `beginRemoveRows`/`beginInsertRows`/`beginMoveRows` … `end…`
/// pair at a time, GTK's `Gio.ListModel` one `items-changed`, RecyclerView
/// one `notifyItem…`. `Changeset.steps()` turns a batch into such a list.
///
/// - `section`/`row`: where the step applies now. For a move, where the row
///   is before it moves; `row` is nil for a section step.
/// - `toSection`/`toRow` (moves only): where the row goes, counted in the
///   table after it was taken out (UITableView's and RecyclerView's meaning;
///   Qt's `beginMoveRows` wants `toRow + 1` when moving down in one parent).
/// - `originalPosition`: the row's place in the old table (removes, moves);
///   `finalPosition`: its place in the new table (inserts, moves, reloads).
///   With them a consumer can read the row from either snapshot.
public struct EditStep: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case removeSection
        case insertSection
        case removeRow
        case insertRow
        case moveRow
        case reloadRow
    }

    public let kind: Kind
    public let section: Int
    public let row: Int?
    public let toSection: Int?
    public let toRow: Int?
    /// Section steps: the group the section shows.
    public let group: String?
    public let originalPosition: TableIndexPath?
    public let finalPosition: TableIndexPath?
    /// What changed: the row change's flags (object and metadata for inserts
    /// and most removes, see `RowChange.changes`).
    public let changes: RowChangeFlags
    /// The row's (collection, key), when the changeset knows it (see `RowChange.rowKey`).
    public let rowKey: RowKey?
    /// Row steps: the row's id in the new table (inserts, moves, reloads) or the old one (removes).
    public let rowid: Int64?
    /// Row steps: the row's id in the old table (differs from `rowid` only
    /// for a row removed and set again under the same key).
    public let originalRowid: Int64?

    static func section(_ kind: Kind, _ section: Int, _ group: String) -> EditStep {
        EditStep(kind: kind, section: section, row: nil, toSection: nil, toRow: nil, group: group,
                 originalPosition: nil, finalPosition: nil, changes: [], rowKey: nil, rowid: nil, originalRowid: nil)
    }

    static func row(_ kind: Kind, at path: TableIndexPath, to destination: TableIndexPath? = nil,
                    _ change: RowChange) -> EditStep {
        EditStep(kind: kind, section: path.section, row: path.row,
                 toSection: destination?.section, toRow: destination?.row, group: nil,
                 originalPosition: kind == .removeRow || kind == .moveRow ? change.originalPosition : nil,
                 finalPosition: kind == .removeRow ? nil : change.finalPosition,
                 changes: change.changes, rowKey: change.rowKey,
                 rowid: kind == .removeRow ? change.originalRowid : change.rowid,
                 originalRowid: change.originalRowid)
    }

    public var description: String {
        let what = rowKey.map { " \($0)" } ?? ""
        switch kind {
        case .removeSection: return "remove section \(section) (\(group ?? ""))"
        case .insertSection: return "insert section \(section) (\(group ?? ""))"
        case .removeRow: return "remove row [\(section), \(row!)]\(what)"
        case .insertRow: return "insert row [\(section), \(row!)]\(what)"
        case .moveRow: return "move row [\(section), \(row!)] -> [\(toSection!), \(toRow!)]\(what)"
        case .reloadRow: return "reload row [\(section), \(row!)]\(what)"
        }
    }
}

extension Changeset {
    /// The changeset as an ordered edit script (docs/behaviour.md, "Edit
    /// scripts"): applying the steps one by one to the old table gives the
    /// new one, and each step is valid at its moment. In order:
    ///
    /// 1. row removals, bottom-up, at their original paths;
    /// 2. section inserts, ascending, each section inserted empty;
    /// 3. row inserts and moves, in ascending final path, each placed right
    ///    after the row that precedes it in the new table (a move stays one
    ///    step; one that would leave the row where it is is left out);
    /// 4. section removals, bottom-up — every section is empty by then;
    /// 5. reloads, at final paths, ascending: updated rows, and moved rows
    ///    whose content changed (or that were removed and set again).
    ///
    /// O(k log k) in the number of changes, whatever the table's size.
    public func steps() -> [EditStep] {
        EditScript(self).steps
    }
}

/// Computes `Changeset.steps()` from the changes alone. The table itself is
/// never materialised: every index is counted from the changes' original
/// and final positions (the rows no change names keep their relative order).
///
/// Row changes are named by their index in `changes` and sorted as small
/// (position, index) pairs: a `RowChange` carries strings, and sorting or
/// copying thousands of them cost more than the rest of the script.
private struct EditScript {
    var steps: [EditStep] = []

    private let changes: [RowChange]
    private let sections: SectionLayout
    /// Per original section: the rows it loses (deletes and moves-out),
    /// ascending original index, and which of them are moves.
    private var leaving: [[(row: Int, isMove: Bool)]]
    /// Per original section: its moves-out still to be made, counted by
    /// original index.
    private var pendingMoves: [PendingCounter?]
    /// Per final section: the arrivals (inserts and moves-in) in final order,
    /// each with its anchor — the original index of the nearest row before it
    /// in the new table that was there all along (-1: the section's start).
    private var arrivals: [[(change: Int, anchor: Int)]]

    init(_ changeset: Changeset) {
        changes = changeset.rowChanges
        sections = SectionLayout(changeset.sectionChanges)
        // Sections are numbered densely from 0: every index a change names is below the larger table's count.
        var originalCount = 0, finalCount = 0
        for change in changes {
            if let path = change.indexPath { originalCount = max(originalCount, path.section + 1) }
            if let path = change.newIndexPath { finalCount = max(finalCount, path.section + 1) }
        }
        leaving = Array(repeating: [], count: originalCount)
        pendingMoves = Array(repeating: nil, count: originalCount)
        var arriving = [[(row: Int, change: Int)]](repeating: [], count: finalCount)
        for (index, change) in changes.enumerated() {
            if change.type == .delete || change.type == .move {
                leaving[change.indexPath!.section].append((change.indexPath!.row, change.type == .move))
            }
            if change.type == .insert || change.type == .move {
                arriving[change.newIndexPath!.section].append((change.newIndexPath!.row, index))
            }
        }
        for section in leaving.indices where !leaving[section].isEmpty {
            leaving[section].sort { $0.row < $1.row }
            pendingMoves[section] = PendingCounter(leaving[section].filter(\.isMove).map(\.row))
        }
        arrivals = Array(repeating: [], count: finalCount)
        for section in arriving.indices where !arriving[section].isEmpty {
            arriving[section].sort { $0.row < $1.row }
            arrivals[section] = anchored(arriving[section], in: section)
        }

        removeRows()
        insertSections()
        placeArrivals()
        removeSections()
        reload()
    }

    private func leaving(_ original: Int) -> [(row: Int, isMove: Bool)] {
        original < leaving.count ? leaving[original] : []
    }

    private func pendingCount(in original: Int, below row: Int) -> Int {
        original < pendingMoves.count ? pendingMoves[original]?.count(below: row) ?? 0 : 0
    }

    /// Each arrival's anchor: the nearest final index before it that no
    /// arrival takes is a row that stayed; its original index is the k-th
    /// original index its section did not lose, k counted from the final index.
    private func anchored(_ arriving: [(row: Int, change: Int)], in finalSection: Int) -> [(change: Int, anchor: Int)] {
        guard let original = sections.original(ofFinal: finalSection) else {
            return arriving.map { ($0.change, -1) }   // an inserted section: nothing stayed
        }
        let lost = leaving(original)
        var result: [(change: Int, anchor: Int)] = []
        result.reserveCapacity(arriving.count)
        var anchor = -1
        var lostBefore = 0   // lost rows with original index <= the candidate
        for (position, arrival) in arriving.enumerated() {
            let row = arrival.row
            if position == 0 || arriving[position - 1].row != row - 1, row > 0 {
                // Final index row - 1 is a row that stayed: the k-th of them.
                let k = row - 1 - position
                var candidate = k + lostBefore
                while lostBefore < lost.count && lost[lostBefore].row <= candidate {
                    lostBefore += 1
                    candidate = k + lostBefore
                }
                anchor = candidate
            }
            result.append((arrival.change, anchor))
        }
        return result
    }

    // MARK: 1. Row removals, bottom-up

    private mutating func removeRows() {
        var deletes: [(path: TableIndexPath, change: Int)] = []
        for (index, change) in changes.enumerated() where change.type == .delete {
            deletes.append((change.indexPath!, index))
        }
        deletes.sort { $0.path > $1.path }
        for delete in deletes { steps.append(.row(.removeRow, at: delete.path, changes[delete.change])) }
    }

    // MARK: 2. Section inserts

    private mutating func insertSections() {
        for (final, group) in sections.inserted {
            steps.append(.section(.insertSection, sections.current(ofInserted: final), group))
        }
    }

    // MARK: 3. Arrivals, in final order

    private mutating func placeArrivals() {
        for final in arrivals.indices where !arrivals[final].isEmpty {
            let original = sections.original(ofFinal: final)
            let target = original.map { sections.current(ofOriginal: $0) } ?? sections.current(ofInserted: final)
            for (placed, (index, anchor)) in arrivals[final].enumerated() {
                let change = changes[index]
                var from: TableIndexPath?
                if change.type == .move {
                    let source = change.indexPath!
                    from = TableIndexPath(section: sections.current(ofOriginal: source.section),
                                          row: currentRow(ofOriginal: source, final: final, placedHere: placed))
                    pendingMoves[source.section]!.remove(source.row)
                }
                let pendingBefore = original.map { pendingCount(in: $0, below: anchor) } ?? 0
                let to = TableIndexPath(section: target, row: change.newIndexPath!.row + pendingBefore)
                if let from {
                    if from != to { steps.append(.row(.moveRow, at: from, to: to, change)) }
                } else {
                    steps.append(.row(.insertRow, at: to, change))
                }
            }
        }
    }

    /// Where a row of the old table that is still waiting to move stands now:
    /// the rows before it that stayed, the moves-out before it still
    /// waiting, and the arrivals already placed in front of it.
    private func currentRow(ofOriginal path: TableIndexPath, final: Int, placedHere: Int) -> Int {
        let lost = leaving(path.section)
        let lostBefore = lowerBound(lost.count) { lost[$0].row < path.row }
        let stayedBefore = path.row - lostBefore
        let waitingBefore = pendingCount(in: path.section, below: path.row)
        var arrivedBefore = 0
        if let finalSection = sections.final(ofOriginal: path.section), finalSection < arrivals.count {
            // Arrivals are placed in final order and their anchors never
            // decrease: the placed ones in front are a prefix.
            let here = arrivals[finalSection]
            let placed = finalSection < final ? here.count : finalSection == final ? placedHere : 0
            arrivedBefore = min(placed, lowerBound(here.count) { here[$0].anchor < path.row })
        }
        return stayedBefore + waitingBefore + arrivedBefore
    }

    // MARK: 4. Section removals

    private mutating func removeSections() {
        for (original, group) in sections.deleted.reversed() {
            steps.append(.section(.removeSection, sections.current(ofOriginal: original), group))
        }
    }

    // MARK: 5. Reloads

    private mutating func reload() {
        // A row removed and set again under its key is reloaded too: its
        // move may have been left out, and the row it shows is a new one.
        var reloaded: [(path: TableIndexPath, change: Int)] = []
        for (index, change) in changes.enumerated()
        where change.type == .update || (change.type == .move && (!change.changes.isEmpty || change.originalRowid != change.rowid)) {
            reloaded.append((change.finalPosition!, index))
        }
        reloaded.sort { $0.path < $1.path }
        for reload in reloaded { steps.append(.row(.reloadRow, at: reload.path, changes[reload.change])) }
    }
}

/// Where sections stand while the rows move: every old section (the
/// deleted ones too, until step 4), with each inserted section right after
/// the section that precedes it in the new table.
private struct SectionLayout {
    /// Ascending original index / final index, with the group shown.
    let deleted: [(Int, String)]
    let inserted: [(Int, String)]
    /// Per inserted section (by final index): the original index of the
    /// nearest kept section before it (-1: the table's start).
    private var anchors: [Int: Int] = [:]

    init(_ changes: [SectionChange]) {
        deleted = changes.filter { $0.type == .delete }.map { ($0.index, $0.group) }.sorted { $0.0 < $1.0 }
        inserted = changes.filter { $0.type == .insert }.map { ($0.index, $0.group) }.sorted { $0.0 < $1.0 }
        for (final, _) in inserted {
            var before = final - 1
            while before >= 0 && isInserted(before) { before -= 1 }
            anchors[final] = before < 0 ? -1 : original(ofFinal: before)!
        }
    }

    private func isInserted(_ final: Int) -> Bool { inserted.contains { $0.0 == final } }
    private func isDeleted(_ original: Int) -> Bool { deleted.contains { $0.0 == original } }

    /// The original index of a kept section, from its final index (nil for an inserted one).
    func original(ofFinal final: Int) -> Int? {
        guard !isInserted(final) else { return nil }
        var original = final - inserted.filter { $0.0 < final }.count
        for (index, _) in deleted where index <= original { original += 1 }
        return original
    }

    /// The final index of a kept section (nil for a deleted one).
    func final(ofOriginal original: Int) -> Int? {
        guard !isDeleted(original) else { return nil }
        var final = original - deleted.filter { $0.0 < original }.count
        for (index, _) in inserted where index <= final { final += 1 }
        return final
    }

    /// Index now of an old section (after the inserts of step 2).
    func current(ofOriginal original: Int) -> Int {
        original + anchors.values.filter { $0 < original }.count
    }

    /// Index now of an inserted section; also where step 2 inserts it, as
    /// the sections inserted after it all land after it.
    func current(ofInserted final: Int) -> Int {
        let anchor = anchors[final]!
        let start = anchor < 0 ? 0 : current(ofOriginal: anchor) + 1
        return start + inserted.filter { $0.0 < final && anchors[$0.0] == anchor }.count
    }
}

/// Counts the moves-out of one section still waiting, below an original
/// index: a Fenwick tree over the moves' original rows, so that a changeset
/// moving many rows stays O(k log k).
private struct PendingCounter {
    private let rows: [Int]        // ascending
    private var tree: [Int]

    init(_ rows: [Int]) {
        self.rows = rows
        tree = Array(repeating: 0, count: rows.count + 1)
        for index in rows.indices { add(index, 1) }
    }

    mutating func remove(_ row: Int) {
        let index = lowerBound(rows.count) { rows[$0] < row }
        if index < rows.count && rows[index] == row { add(index, -1) }
    }

    /// Waiting moves with original row < `row`.
    func count(below row: Int) -> Int {
        var index = lowerBound(rows.count) { rows[$0] < row }
        var total = 0
        while index > 0 {
            total += tree[index]
            index -= index & -index
        }
        return total
    }

    private mutating func add(_ index: Int, _ delta: Int) {
        var position = index + 1
        while position < tree.count {
            tree[position] += delta
            position += position & -position
        }
    }
}

/// The first index in 0..<count where `isBefore` is false (it must be true
/// on a prefix and false after).
private func lowerBound(_ count: Int, _ isBefore: (Int) -> Bool) -> Int {
    var low = 0, high = count
    while low < high {
        let mid = (low + high) / 2
        if isBefore(mid) { low = mid + 1 } else { high = mid }
    }
    return low
}
