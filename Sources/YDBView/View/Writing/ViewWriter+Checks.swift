/// Debug builds check a view after every row event and before its commit
/// (`Tuning.checksInvariants`), at a cost that follows the change: a small
/// view is checked whole (trees, places and, at the commit, stored rows:
/// `Tuning.wholeCheckRowsAfterWrite` and `wholeCheckRows`); a larger one
/// only where the write touched it (each touched row's place, and its sort
/// key against its neighbours'), so a test may write to a view of 100k
/// rows row by row.
extension ViewWriter {
    /// Notes rows whose place changed, for the next check.
    func touched(_ rowid: Int64) {
        if Tuning.checksInvariants { touchedRows.append(rowid) }
    }

    func checkAfterWrite() {
        // Nothing changed since the last check (a write the view left
        // alone, or the commit right after a checked write).
        guard touchedAll || !touchedRows.isEmpty else { return }
        defer {
            touchedRows.removeAll(keepingCapacity: true)
            touchedAll = false
        }
        if checksWhole { return checkWhole() }
        for rowid in touchedRows { checkPlace(of: rowid) }
    }

    /// Whether the view is small enough, or was rebuilt (every row touched),
    /// for a whole check.
    private var checksWhole: Bool {
        touchedAll || state.totalCount <= Tuning.wholeCheckRowsAfterWrite
    }

    /// Before the commit: a small view is checked whole, with its stored
    /// rows compared to its rows in memory (unless an asynchronous
    /// registration is storing it, and it holds more rows than its table).
    func checkBeforeCommit(_ handle: SQLiteHandle, _ database: Database) throws {
        checkAfterWrite()
        if let id = instance.storageID, database.registrations.isStoring(id) { return }
        try checkStored(handle)
    }

    /// A small view is checked whole, with its stored rows (once the
    /// commit and the rows left waiting are written) compared to its rows
    /// in memory.
    func checkStored(_ handle: SQLiteHandle) throws {
        guard state.totalCount <= Tuning.wholeCheckRows else { return }
        checkWhole()
        try storage.check(state, id: instance.storageID, instance.unstored, view: instance.name, handle)
    }

    /// The whole view: its trees, places and groups agree, and a sort-key
    /// view's keys rise with the labels.
    func checkWhole() {
        if let problem = state.invariantViolation() {
            preconditionFailure("view '\(instance.name)': \(problem)")
        }
        guard definition.sorting.usesSortKeys else { return }
        state.groups.forEach { name, tree in
            precondition(tree.isKeyed, "view '\(instance.name)': group \(name) has no sort keys")
            var previous: SortKey?
            tree.keyedRows!.forEach { _, row in
                if let previous {
                    precondition(previous <= row.key, "view '\(instance.name)': group \(name) is out of key order")
                }
                previous = row.key
                return true
            }
            return true
        }
    }

    /// One row: absent, or where its place says, in key order with its
    /// neighbours.
    private func checkPlace(of rowid: Int64) {
        guard let place = state.place(of: rowid) else { return }
        let view = instance.name
        guard let tree = state.group(place.group), let index = tree.index(of: place.label),
              tree.value(for: place.label) == rowid else {
            preconditionFailure("view '\(view)': row \(rowid) is not at label \(place.label) of group \(place.group)")
        }
        guard definition.sorting.usesSortKeys else { return }
        guard let keyed = tree.keyedRows, let key = keyed.element(at: index)?.value.key else {
            preconditionFailure("view '\(view)': group \(place.group) has no sort keys")
        }
        if index > 0, let left = keyed.element(at: index - 1)?.value.key {
            precondition(left <= key, "view '\(view)': row \(rowid) sorts before its left neighbour")
        }
        if let right = keyed.element(at: index + 1)?.value.key {
            precondition(key <= right, "view '\(view)': row \(rowid) sorts after its right neighbour")
        }
    }
}
