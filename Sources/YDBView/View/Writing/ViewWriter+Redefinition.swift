/// A view given a new grouping or sorting in place (`setViewDefinition`, a
/// filtered view's new filter over a large change): it is populated again,
/// but its log says only what changed, never "every row removed, every row
/// inserted" — so a table showing it animates the re-sort instead of
/// reloading (docs/behaviour.md, "Re-sorting and regrouping in place").
extension ViewWriter {
    /// Replaces grouping/sorting/tag and repopulates, in the same
    /// transaction and storage; logs the difference (`logDifference`).
    func redefine(_ view: View, _ context: ExtensionWriteContext) throws {
        takeDefinition(view)
        try loggingDifference { try repopulate(context) }
    }

    /// Runs `rebuild`, which replaces the view's contents (a population,
    /// or an asynchronous one adopted), and logs the difference from the
    /// view before it instead of what `rebuild` logged (a reset and every
    /// row).
    func loggingDifference(_ rebuild: () throws -> Void) rethrows {
        let old = state
        let logged = entries, created = loggedCreated, emptied = emptiedGroups, reset = wasReset
        try rebuild()
        entries = logged
        loggedCreated = created
        emptiedGroups = emptied
        wasReset = reset
        logDifference(from: old)
    }

    /// Logs how the view went from `old` to `state`, as operations valid one
    /// after the other (docs/behaviour.md, "What a transaction logs"):
    /// 1. per group, the rows that leave it, from the bottom up (each index is
    ///    the row's index at that moment);
    /// 2. `.reordered(group)` for each group whose remaining rows changed
    ///    order among themselves;
    /// 3. per group, the rows that enter it, by ascending final index (each
    ///    row's final index is then its index at that moment).
    /// The changeset turns (2) into as few moves as a batch update allows.
    /// `keys` already names every row (the population scanned them).
    func logDifference(from old: ViewState) {
        for group in old.groupNames {
            var leaving: [(rowid: Int64, index: Int)] = []
            var index = 0
            old.group(group)!.forEach { _, rowid in
                if state.place(of: rowid).map({ !bytesEqual($0.group, group) }) ?? true {
                    leaving.append((rowid, index))
                }
                index += 1
                return true
            }
            for row in leaving.reversed() {
                entries.append(.delete(rowid: row.rowid, group: group, index: row.index))
            }
            if state.group(group) == nil { emptiedGroups.insert(Name(group)) }
        }
        for group in state.groupNames {
            let tree = state.group(group)!
            guard let oldTree = old.group(group) else {
                logCreatedIfNew(group)
                var rowids: [Int64] = []
                rowids.reserveCapacity(tree.count)
                tree.forEach { _, rowid in
                    rowids.append(rowid)
                    return true
                }
                entries.appendInserts(into: group, rowids: rowids)   // a run: 8 bytes a row
                continue
            }
            // The rows staying, in their old order: reordered unless their
            // new indexes rise.
            var lastIndex = -1, reordered = false
            oldTree.forEach { _, rowid in
                guard let place = state.place(of: rowid), bytesEqual(place.group, group) else { return true }
                let index = tree.index(of: place.label)!
                if index < lastIndex { reordered = true }
                lastIndex = index
                return !reordered
            }
            if reordered { entries.append(.reordered(group)) }
            logInserts(of: tree, into: group) { rowid in
                old.place(of: rowid).map { !bytesEqual($0.group, group) } ?? true
            }
        }
    }

    /// Logs the rows of `tree` (the group as it ends) that `enters` selects,
    /// by ascending index.
    private func logInserts(of tree: GroupTree, into group: String, _ enters: (Int64) -> Bool) {
        var index = 0
        tree.forEach { _, rowid in
            if enters(rowid) { entries.append(.insert(rowid: rowid, group: group, index: index)) }
            index += 1
            return true
        }
    }
}
