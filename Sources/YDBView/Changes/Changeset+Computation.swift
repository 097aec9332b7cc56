/// Computes one changeset from the mappings' layout before and after, the view
/// contents before and after, and the merged row histories.
///
/// The table is a function of (layout, contents); a row's change is decided by
/// where it is shown before and after (two O(log n) lookups) and by its history.
/// Only rows that can differ are examined:
/// - rows the logs name;
/// - every row shown by a group whose rows cannot "stay" (its section is deleted,
///   inserted, or switched by consolidation; it moved among the groups of the
///   consolidated section; or a reset removed everything);
/// - for a ranged group that stays in its section, the rows at the edges of its old
///   and new windows: rows no log names keep their relative order, so those that
///   enter or leave the window only because of shifts sit at the windows' edges,
///   and a walk from each edge stops at the first one that stays;
/// - rows marked for cell drawing dependencies;
/// - every row shown by a group whose rows changed order among themselves (a
///   new sorting, `.reordered`): those staying in their section keep a longest
///   run of their old order and the others are moved, so a re-sort reports as
///   few moves as a batch update allows.
/// So a changeset costs O((changed rows + rows entering/leaving windows) · log n),
/// plus O(r log r) for the r rows shown by reordered groups.
struct ChangesetComputation {
    let old: MappingsLayout
    let new: MappingsLayout
    let before: any ViewContents
    let after: any ViewContents
    let histories: CommitHistories
    let rangedGroups: NameSet
    /// Rows reloaded for cell-drawing dependencies (`DependencyMarks`).
    let markedRows: Set<Int64>

    /// A row's place in one table: where, in which section, shown by which group.
    private struct Place {
        let path: TableIndexPath
        let section: SectionID
        let sectionName: String
        /// The group the row is shown by (in a consolidated section, one of several).
        let group: String
    }

    private var surviving: Set<SectionID> = []
    /// Groups shown in the consolidated section before and after whose place
    /// among the others there changed (a dynamic group order that changed):
    /// all their rows move, though no log names them.
    private var reorderedInSection: NameSet = []
    private var oldPlaces: [Int64: Place?] = [:]
    private var newPlaces: [Int64: Place?] = [:]
    /// Rows that stay in the view but enter or leave the table (a window moved):
    /// their flags are settled by `classify`.
    private var rangeDriven: Set<Int64> = []
    /// Rows of reordered groups that stay in their section but leave the
    /// longest run of rows keeping their order: reported as moves.
    private var movedByReordering: Set<Int64> = []

    init(old: MappingsLayout, new: MappingsLayout, before: any ViewContents, after: any ViewContents,
         histories: CommitHistories, rangedGroups: NameSet, markedRows: Set<Int64>) {
        self.old = old
        self.new = new
        self.before = before
        self.after = after
        self.histories = histories
        self.rangedGroups = rangedGroups
        self.markedRows = markedRows
    }

    mutating func run() -> Changeset {
        let sectionChanges = computeSectionChanges()
        reorderedInSection = groupsReorderedInTheConsolidatedSection()
        var changes: [Int64: RowChange] = [:]
        let candidates = candidateRows()
        if !histories.reorderedGroups.isEmpty { movedByReordering = rowsMovedByReordering(candidates) }
        for rowid in candidates {
            if let change = classify(rowid) { changes[rowid] = change }
        }
        addDependencyReloads(to: &changes)
        mergeReaddedRows(&changes)
        return Changeset(sectionChanges: sectionChanges, rowChanges: ordered(Array(changes.values)))
    }

    /// A row removed and set again under the same (collection, key) has a new
    /// rowid, so it comes out as a delete (old id) and an insert (new id). A
    /// table shows one row: report one move from the delete's original path
    /// to the insert's final path — the same batch update, as docs/behaviour.md's
    /// "One change per row" (delete…insert → move) asks.
    private func mergeReaddedRows(_ changes: inout [Int64: RowChange]) {
        // Keys are hashed only for the rows that could pair up: the inserts'
        // keys first, then the deletes among them (a new search query may
        // delete thousands of rows and insert none).
        var inserted = Set<RowKey>()
        for change in changes.values where change.type == .insert {
            if let key = change.rowKey { inserted.insert(key) }
        }
        guard !inserted.isEmpty else { return }
        var deletes: [RowKey: RowChange] = [:]
        for change in changes.values where change.type == .delete {
            if let key = change.rowKey, inserted.contains(key) { deletes[key] = change }
        }
        guard !deletes.isEmpty else { return }
        for insert in changes.values where insert.type == .insert {
            guard let key = insert.rowKey, let delete = deletes.removeValue(forKey: key) else { continue }
            changes[delete.rowid] = nil
            changes[insert.rowid] = RowChange(
                type: .move, rowid: insert.rowid, originalRowid: delete.rowid, rowKey: key,
                changes: delete.changes.union(insert.changes),
                original: delete.originalPosition, originalGroup: delete.originalGroup,
                final: insert.finalPosition, finalGroup: insert.finalGroup)
        }
    }

    // MARK: Sections

    /// Sections shown both before and after, in the same relative order, survive;
    /// the others are deleted (at their original index) or inserted (at their final one).
    private mutating func computeSectionChanges() -> [SectionChange] {
        let oldSections = old.sections, newSections = new.sections
        let newIndex = Dictionary(uniqueKeysWithValues: newSections.enumerated().map { ($1, $0) })
        let common = oldSections.filter { newIndex[$0] != nil }
        // Dynamic group orders are normally consistent; if a sort callback is not,
        // keep the longest run in the same order and replace the rest.
        surviving = Set(longestIncreasingRun(common, key: { newIndex[$0]! }))
        var result: [SectionChange] = []
        for (index, section) in oldSections.enumerated() where !surviving.contains(section) {
            result.append(SectionChange(type: .delete, index: index, group: name(of: section)))
        }
        for (index, section) in newSections.enumerated() where !surviving.contains(section) {
            result.append(SectionChange(type: .insert, index: index, group: name(of: section)))
        }
        return result
    }

    /// In a consolidated section that stays one, the groups shown in both
    /// tables keep a longest run of their order; the others are reordered.
    /// (Each group's own rows keep their view order, so only whole groups move.)
    private func groupsReorderedInTheConsolidatedSection() -> NameSet {
        guard let oldName = old.consolidatedName, let newName = new.consolidatedName,
              bytesEqual(oldName, newName) else { return [] }
        let newIndex = new.visibleIndex
        let common = old.visibleGroups.filter { newIndex[$0] != nil }
        let kept = NameSet(longestIncreasingRun(common, key: { newIndex[$0]! }))
        return NameSet(common.filter { !kept.contains($0) })
    }

    private func name(of section: SectionID) -> String {
        switch section {
        case .group(let name), .consolidated(let name): return name
        }
    }

    // MARK: Candidates

    private mutating func candidateRows() -> Set<Int64> {
        var candidates = Set(histories.rows.keys)
        let groups = Set(old.allGroups).union(new.allGroups)
        for group in groups {
            let oldSection = old.sectionID(ofGroup: group)
            let newSection = new.sectionID(ofGroup: group)
            let stays = oldSection != nil && oldSection == newSection && surviving.contains(oldSection!)
                && !reorderedInSection.contains(group)
            // A reordered group's rows that no log names may still have moved.
            let reordered = histories.reorderedGroups.contains(group)
            if !stays || histories.resetSeen || reordered {
                if oldSection != nil { addWindow(of: group, old: true, to: &candidates) }
                if newSection != nil && (!stays || reordered) { addWindow(of: group, old: false, to: &candidates) }
            } else if rangedGroups.contains(group) {
                addEdgeRows(of: group, to: &candidates)
            }
        }
        return candidates
    }

    /// Every row `group` shows in the old or the new table. Walking the
    /// window gives each row's place too: it is kept, which spares
    /// `classify` looking the row up again (a re-sort names every row).
    private mutating func addWindow(of group: String, old isOld: Bool, to candidates: inout Set<Int64>) {
        let layout = isOld ? old : new
        guard let window = layout.windows[group], let section = layout.sectionID(ofGroup: group) else { return }
        var places = isOld ? oldPlaces : newPlaces
        if isOld { oldPlaces = [:] } else { newPlaces = [:] }   // one reference while it grows
        (isOld ? before : after).forEachRowid(inGroup: group, in: window.lower ..< window.upper) { index, rowid in
            candidates.insert(rowid)
            if places[rowid] == nil, let path = layout.indexPath(forIndex: index, inGroup: group) {
                places[rowid] = .some(Place(path: path, section: section,
                                            sectionName: layout.groupName(ofSection: path.section) ?? group,
                                            group: group))
            }
            return true
        }
        if isOld { oldPlaces = places } else { newPlaces = places }
    }

    /// Unnamed rows entering or leaving a window that stays in its section: walk in
    /// from each edge of each window while the rows met are not shown on the other side.
    private mutating func addEdgeRows(of group: String, to candidates: inout Set<Int64>) {
        guard let oldWindow = old.windows[group], let newWindow = new.windows[group] else { return }
        for fromLower in [true, false] {
            walk(oldWindow, group: group, contents: before, fromLower: fromLower, into: &candidates) {
                self.after.locate(rowid: $0).map { newWindow.contains($0.index) } ?? false
            }
            walk(newWindow, group: group, contents: after, fromLower: fromLower, into: &candidates) {
                self.before.locate(rowid: $0).map { oldWindow.contains($0.index) } ?? false
            }
        }
    }

    private func walk(_ window: GroupWindow, group: String, contents: any ViewContents, fromLower: Bool,
                      into candidates: inout Set<Int64>, shownOnOtherSide: (Int64) -> Bool) {
        var index = fromLower ? window.lower : window.upper - 1
        while window.contains(index) {
            defer { index += fromLower ? 1 : -1 }
            guard let rowid = contents.rowid(at: index, inGroup: group) else { continue }
            if histories.rows[rowid] != nil { continue }   // named rows are candidates anyway
            if shownOnOtherSide(rowid) { break }
            candidates.insert(rowid)
        }
    }

    // MARK: Classification

    private mutating func oldPlace(_ rowid: Int64) -> Place? {
        if let cached = oldPlaces[rowid] { return cached }
        let place = Self.place(of: rowid, in: old, contents: before)
        oldPlaces[rowid] = .some(place)
        return place
    }

    private mutating func newPlace(_ rowid: Int64) -> Place? {
        if let cached = newPlaces[rowid] { return cached }
        let place = Self.place(of: rowid, in: new, contents: after)
        newPlaces[rowid] = .some(place)
        return place
    }

    private static func place(of rowid: Int64, in layout: MappingsLayout, contents: any ViewContents) -> Place? {
        guard let (group, index) = contents.locate(rowid: rowid),
              let path = layout.indexPath(forIndex: index, inGroup: group),
              let section = layout.sectionID(ofGroup: group) else { return nil }
        return Place(path: path, section: section, sectionName: layout.groupName(ofSection: path.section) ?? group,
                     group: group)
    }

    /// The row's change from where it is shown before and after and its history.
    /// Positions decide insert/delete; the history decides move vs. update vs. nothing.
    private mutating func classify(_ rowid: Int64) -> RowChange? {
        let from = oldPlace(rowid), to = newPlace(rowid)
        let history = histories.rows[rowid]
        let key = histories.keys[rowid]
        func change(_ type: RowChange.Kind, _ flags: RowChangeFlags) -> RowChange {
            RowChange(type: type, rowid: rowid, rowKey: key, changes: flags,
                      original: from?.path, originalGroup: from?.sectionName,
                      final: to?.path, finalGroup: to?.sectionName)
        }
        // In the view before and after, never leaving its place: shown or not
        // shown only because a range window moved.
        let staysInView = history?.isUpdateOnly ?? !histories.resetSeen
        switch (from, to) {
        case (nil, nil):
            return nil
        case (.some, nil):
            guard staysInView else { return change(.delete, [.object, .metadata]) }
            // A window moved off it: the delete carries what changed in the
            // row, as YapDatabase's does — its own updates and a dependency
            // mark — or object and metadata when nothing did.
            rangeDriven.insert(rowid)
            var flags = history?.flags ?? []
            if markedRows.contains(rowid) { flags.insert(.dependency) }
            return change(.delete, flags.isEmpty ? [.object, .metadata] : flags)
        case (nil, .some):
            // A row a window moved onto is new to the table whatever changed in
            // it: object and metadata, never a dependency flag (YapDatabase's rule).
            if staysInView { rangeDriven.insert(rowid) }
            return change(.insert, [.object, .metadata])
        case (.some(let from), .some(let to)):
            if movedByReordering.contains(rowid) { return change(.move, history?.flags ?? []) }
            let staysInSection = staysInSection(from, to)
            if let history {
                if !history.isUpdateOnly || !staysInSection { return change(.move, history.flags) }
                return change(updateKind(from: from.path, to: to.path), history.flags)
            }
            if histories.resetSeen || !staysInSection { return change(.move, []) }
            return nil
        }
    }

    private func staysInSection(_ from: Place, _ to: Place) -> Bool {
        from.section == to.section && surviving.contains(from.section) && !reorderedInSection.contains(to.group)
    }

    /// The candidates that would be reported in place (no change, or an
    /// update) although a reordering may have changed their order: per
    /// section, a longest run of them in the same order before and after
    /// stays; the rest are returned, to be reported as moves. Rows that stay
    /// and no log names keep their order (they are not in reordered groups,
    /// whose every shown row is a candidate, and whole groups keep their
    /// order in a section unless `reorderedInSection` moves them).
    private mutating func rowsMovedByReordering(_ candidates: Set<Int64>) -> Set<Int64> {
        var staying: [SectionID: [(from: Int, to: Int, rowid: Int64)]] = [:]
        for rowid in candidates {
            guard let from = oldPlace(rowid), let to = newPlace(rowid), staysInSection(from, to) else { continue }
            if let history = histories.rows[rowid] {
                guard history.isUpdateOnly, updateKind(from: from.path, to: to.path) == .update else { continue }
            } else if histories.resetSeen {
                continue
            }
            staying[to.section, default: []].append((from.path.row, to.path.row, rowid))
        }
        var moved = Set<Int64>()
        for (_, rows) in staying {
            let inOldOrder = rows.sorted { $0.from < $1.from }
            let kept = Set(longestIncreasingRun(inOldOrder, key: { $0.to }).map(\.rowid))
            for row in inOldOrder where !kept.contains(row.rowid) { moved.insert(row.rowid) }
        }
        return moved
    }

    /// How a row changed in place is reported: an update, unless its section
    /// number changes (docs/behaviour.md, "Index paths"), or — in a consolidated
    /// section that stays consolidated — its row number changes (YapDatabase's
    /// rule): then a move.
    private func updateKind(from: TableIndexPath, to: TableIndexPath) -> RowChange.Kind {
        if from.section != to.section { return .move }
        if old.isConsolidated && new.isConsolidated && from.row != to.row { return .move }
        return .update
    }

    // MARK: Cell drawing dependencies

    /// Adds `.dependency` to the change of every row `markedRows` names (see
    /// `DependencyMarks`); a marked row still shown with no change of its own
    /// gets a change with exactly `.dependency` (an update, or a move where
    /// `updateKind` says so).
    private mutating func addDependencyReloads(to changes: inout [Int64: RowChange]) {
        for rowid in markedRows where !rangeDriven.contains(rowid) {
            if let existing = changes[rowid] {
                changes[rowid] = existing.adding(.dependency)
                continue
            }
            guard let from = oldPlace(rowid), let to = newPlace(rowid) else { continue }
            changes[rowid] = RowChange(type: updateKind(from: from.path, to: to.path), rowid: rowid,
                                       rowKey: histories.keys[rowid], changes: .dependency,
                                       original: from.path, originalGroup: from.sectionName,
                                       final: to.path, finalGroup: to.sectionName)
        }
    }

    // MARK: Order

    private func ordered(_ changes: [RowChange]) -> [RowChange] {
        func rank(_ type: RowChange.Kind) -> Int {
            switch type {
            case .delete: return 0
            case .insert: return 1
            case .move: return 2
            case .update: return 3
            }
        }
        func path(_ change: RowChange) -> TableIndexPath {
            (change.type == .insert ? change.finalPosition : change.originalPosition)!
        }
        // Sorted by a key computed once per change, not per comparison.
        let keys = changes.indices.map { index -> (Int, Int, Int, Int64, Int) in
            let change = changes[index], at = path(change)
            return (rank(change.type), at.section, at.row, change.rowid, index)
        }
        return keys.sorted { $0 < $1 }.map { changes[$0.4] }
    }
}

/// The elements of `items` forming a longest run whose keys strictly increase
/// (patience sorting, O(k log k)).
func longestIncreasingRun<T>(_ items: [T], key: (T) -> Int) -> [T] {
    var tails: [Int] = []          // index into items of the smallest tail per length
    var previous = [Int](repeating: -1, count: items.count)
    for (i, item) in items.enumerated() {
        let k = key(item)
        var low = 0, high = tails.count
        while low < high {
            let mid = (low + high) / 2
            if key(items[tails[mid]]) < k { low = mid + 1 } else { high = mid }
        }
        if low > 0 { previous[i] = tails[low - 1] }
        if low == tails.count { tails.append(i) } else { tails[low] = i }
    }
    var run: [T] = []
    var cursor = tails.last ?? -1
    while cursor >= 0 {
        run.append(items[cursor])
        cursor = previous[cursor]
    }
    return run.reversed()
}
