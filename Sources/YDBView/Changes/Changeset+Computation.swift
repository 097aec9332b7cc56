/// Computes one changeset from the mappings' layout before and after, the view
/// contents before and after, and the merged row histories.
///
/// The table is a function of (layout, contents); a row's change is decided by
/// where it is shown before and after (two O(log n) lookups) and by its history.
/// Only rows that can differ are examined:
/// - rows the logs name;
/// - every row shown by a group whose rows cannot "stay" (its section is deleted,
///   inserted, or switched by consolidation; or a reset removed everything);
/// - for a ranged group that stays in its section, the rows at the edges of its old
///   and new windows: rows no log names keep their relative order, so those that
///   enter or leave the window only because of shifts sit at the windows' edges,
///   and a walk from each edge stops at the first one that stays;
/// - neighbours of changed rows, for cell drawing dependencies.
/// So a changeset costs O((changed rows + rows entering/leaving windows) · log n).
struct ChangesetComputation {
    let old: MappingsLayout
    let new: MappingsLayout
    let before: any ViewContents
    let after: any ViewContents
    let histories: CommitHistories
    let rangedGroups: NameSet
    /// Display-order dependency offsets per group.
    let dependencyOffsets: NameMap<Set<Int>>

    /// A row's place in one table: where, in which section, shown by which group.
    private struct Place {
        let path: TableIndexPath
        let section: SectionID
        let sectionName: String
    }

    private var surviving: Set<SectionID> = []
    private var oldPlaces: [Int64: Place?] = [:]
    private var newPlaces: [Int64: Place?] = [:]

    init(old: MappingsLayout, new: MappingsLayout, before: any ViewContents, after: any ViewContents,
         histories: CommitHistories, rangedGroups: NameSet, dependencyOffsets: NameMap<Set<Int>>) {
        self.old = old
        self.new = new
        self.before = before
        self.after = after
        self.histories = histories
        self.rangedGroups = rangedGroups
        self.dependencyOffsets = dependencyOffsets
    }

    mutating func run() -> Changeset {
        let sectionChanges = computeSectionChanges()
        var changes: [Int64: RowChange] = [:]
        for rowid in candidateRows() {
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
        var deletes: [RowKey: RowChange] = [:]
        for change in changes.values where change.type == .delete {
            if let key = change.rowKey { deletes[key] = change }
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
            if !stays || histories.resetSeen {
                if oldSection != nil { addWindow(of: group, in: old, contents: before, to: &candidates) }
                if newSection != nil && !stays {
                    addWindow(of: group, in: new, contents: after, to: &candidates)
                }
            } else if rangedGroups.contains(group) {
                addEdgeRows(of: group, to: &candidates)
            }
        }
        return candidates
    }

    private func addWindow(of group: String, in layout: MappingsLayout, contents: any ViewContents,
                           to candidates: inout Set<Int64>) {
        guard let window = layout.windows[group] else { return }
        for index in window.lower..<window.upper {
            if let rowid = contents.rowid(at: index, inGroup: group) { candidates.insert(rowid) }
        }
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
        return Place(path: path, section: section, sectionName: layout.groupName(ofSection: path.section) ?? group)
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
        switch (from, to) {
        case (nil, nil):
            return nil
        case (.some, nil):
            return change(.delete, [.object, .metadata])
        case (nil, .some):
            return change(.insert, [.object, .metadata])
        case (.some(let from), .some(let to)):
            let staysInSection = from.section == to.section && surviving.contains(from.section)
            if let history {
                if !history.isUpdateOnly || !staysInSection { return change(.move, history.flags) }
                return change(from.path.section == to.path.section ? .update : .move, history.flags)
            }
            if histories.resetSeen || !staysInSection { return change(.move, []) }
            return nil
        }
    }

    // MARK: Cell drawing dependencies

    /// Reloads every row still shown in place whose neighbour at one of its group's
    /// dependency offsets changed: for a row inserted, deleted or moved at table row
    /// r, the rows within |offset| of r on the dependent side (in the table before
    /// for a removal, after for an insertion); for an updated row, the row exactly
    /// at the offset. Such a row gets `.dependency` added, or a new update with
    /// exactly `.dependency` (a move, if its section number changed).
    private mutating func addDependencyReloads(to changes: inout [Int64: RowChange]) {
        let offsets = Set(dependencyOffsets.values.joined())
        guard !offsets.isEmpty else { return }
        var dependents = Set<Int64>()
        for change in changes.values {
            for offset in offsets {
                // A row at `r - offset` draws using the row at r.
                if let original = change.originalPosition {
                    let span = change.type == .update ? [-offset] : Self.span(offset)
                    for delta in span {
                        let path = TableIndexPath(section: original.section, row: original.row + delta)
                        if let rowid = dependent(at: path, in: old, contents: before, offset: offset) {
                            dependents.insert(rowid)
                        }
                    }
                }
                if let final = change.finalPosition {
                    let span = change.type == .update ? [-offset] : Self.span(offset)
                    for delta in span {
                        let path = TableIndexPath(section: final.section, row: final.row + delta)
                        if let rowid = dependent(at: path, in: new, contents: after, offset: offset) {
                            dependents.insert(rowid)
                        }
                    }
                }
            }
        }
        for rowid in dependents {
            if let existing = changes[rowid] {
                if existing.type == .update { changes[rowid] = existing.adding(.dependency) }
                continue
            }
            guard let from = oldPlace(rowid), let to = newPlace(rowid) else { continue }
            // An update whose section number changes must be a move (docs/behaviour.md, "Index paths").
            let type: RowChange.Kind = from.path.section == to.path.section ? .update : .move
            changes[rowid] = RowChange(type: type, rowid: rowid, rowKey: histories.keys[rowid],
                                       changes: .dependency,
                                       original: from.path, originalGroup: from.sectionName,
                                       final: to.path, finalGroup: to.sectionName)
        }
    }

    /// Rows (relative to a changed row) whose neighbour window at `offset` includes
    /// the changed row's old or new slot: all rows up to |offset| away on the side
    /// that depends on it.
    private static func span(_ offset: Int) -> [Int] {
        offset < 0 ? Array(1...(-offset)) : Array((-offset)...(-1))
    }

    /// The row at `path` if its group draws using the row `offset` away.
    private func dependent(at path: TableIndexPath, in layout: MappingsLayout, contents: any ViewContents,
                           offset: Int) -> Int64? {
        guard let (group, index) = layout.location(of: path),
              dependencyOffsets[group]?.contains(offset) == true else { return nil }
        return contents.rowid(at: index, inGroup: group)
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
        return changes.sorted {
            rank($0.type) != rank($1.type) ? rank($0.type) < rank($1.type)
                : path($0) != path($1) ? path($0) < path($1) : $0.rowid < $1.rowid
        }
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
