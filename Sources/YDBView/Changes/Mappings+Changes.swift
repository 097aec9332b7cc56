/// Changesets: turning a view's commit logs into table changes.
extension Mappings {
    /// The section and row changes that turn the table these mappings show now into
    /// the table they show after `logs`, and moves the mappings there (to
    /// `logs.last.snapshot`, as `update(with: logs.last.after, …)` would, except that
    /// flexible ranges follow their rows through the logged operations).
    ///
    /// Several commits give one changeset, as if they had been one transaction.
    /// Empty `logs` give an empty changeset and leave the mappings alone.
    ///
    /// ```swift
    /// let logs = reader.moveToNewestSnapshot()[viewName]   // oldest first
    /// let changeset = try mappings.changes(for: logs)
    /// ```
    ///
    /// - Throws: `YDBError` `.mismatch` (reason `.mismatchedMappingsAndNotifications`) when the mappings
    ///   are not at `logs.first.snapshotBefore` (or were never updated), the logs do
    ///   not chain, or the mappings' cached counts disagree with `logs.first.before`;
    ///   reason `.wrongView` for logs of another view. The mappings are then
    ///   left unchanged.
    ///
    /// Dynamic groups' filter and sort that take the transaction get a
    /// read-only handle of `transaction`, which must read `logs.last.snapshot`
    /// (the reader's, once moved forward); without one they throw `.misuse`.
    public func changes(for logs: [ViewCommitLog], in transaction: ReadTransaction? = nil) throws -> Changeset {
        guard let first = logs.first, let last = logs.last else { return Changeset() }
        let oldLayout = try validatedLayout(for: logs)
        let histories = CommitHistories(logs: logs, before: first.before)

        if let transaction, transaction.snapshot != last.snapshot {
            throw YDBError(.mismatch, "the transaction reads snapshot \(transaction.snapshot), not \(last.snapshot), where the changes end")
        }
        let newGroups = try groups(in: last.after, reading: transaction)
        var newCounts: NameMap<Int> = [:]
        for group in newGroups { newCounts[group] = last.after.count(inGroup: group) }
        let newStates = followFlexibleRanges(through: logs, from: oldLayout, after: last.after)
        let newLayout = makeLayout(allGroups: newGroups, counts: newCounts, flexibleStates: newStates)

        var computation = ChangesetComputation(
            old: oldLayout, new: newLayout, before: first.before, after: last.after,
            histories: histories, rangedGroups: NameSet(ranges.keys),
            markedRows: DependencyMarks(offsets: dependencyOffsets, originalGroups: NameSet(oldLayout.allGroups),
                                        finalGroups: NameSet(newGroups))
                .markedRows(in: logs, before: first.before, after: last.after))
        let changeset = computation.run()

        flexibleStates = newStates
        layout = newLayout
        lastSnapshot = last.snapshot
        lastContents = last.after
        return changeset
    }

    /// Whether `logs` touch any group of these mappings (or remove everything, or a
    /// flexible range waits for its max/min length, which the next changeset
    /// applies) — a cheap check that reads only the log entries and does not move
    /// the mappings.
    /// It may answer true for changes the table does not show (outside a range
    /// window); it never answers false for a change the table shows.
    public func hasChanges(for logs: [ViewCommitLog]) -> Bool {
        if !logs.isEmpty && flexibleRangeAwaitsBounds() { return true }
        let fixedGroups: NameSet?
        switch groupSource {
        case .fixed(let groups): fixedGroups = NameSet(groups)
        case .dynamic: fixedGroups = nil
        }
        func concerns(_ group: String) -> Bool {
            if let fixedGroups { return fixedGroups.contains(group) }
            if case .dynamic(let source) = groupSource { return source.mayShow(group) }
            return false
        }
        for log in logs {
            for entry in log.entries {
                switch entry {
                case .insert(_, let group, _), .delete(_, let group, _), .update(_, let group, _, _):
                    if concerns(group) { return true }
                case .groupCreated(let group), .groupEmptied(let group), .reordered(let group):
                    if concerns(group) { return true }
                case .reset:
                    return true
                }
            }
        }
        return false
    }

    /// Whether a flexible range shows more rows than its max length, or fewer
    /// than its min length while its group has more: the next changeset adjusts
    /// it even if no row of its group changed.
    private func flexibleRangeAwaitsBounds() -> Bool {
        guard let layout else { return false }
        for (group, options) in ranges where options.isFlexible {
            let count = layout.counts[group] ?? 0
            let state = flexibleStates[group]?.clipped(count: count) ?? options.initialFlexibleState(count: count)
            if options.boundedState(state, count: count) != state { return true }
        }
        return false
    }

    /// The current layout, after checking that `logs` start where the mappings are.
    private func validatedLayout(for logs: [ViewCommitLog]) throws -> MappingsLayout {
        let start = logs[0].snapshotBefore
        let mismatch = YDBError(.mismatchedMappingsAndNotifications(mappingsSnapshot: lastSnapshot, logsStart: start))
        guard let layout, lastSnapshot == start else { throw mismatch }
        for log in logs where !bytesEqual(log.viewName, viewName) {
            throw YDBError(.wrongView(expected: viewName, found: log.viewName))
        }
        for (older, newer) in zip(logs, logs.dropFirst()) where older.snapshot != newer.snapshotBefore {
            throw mismatch
        }
        let before = logs[0].before
        guard try groupsMatch(in: before, cached: layout.allGroups) else { throw mismatch }
        for group in layout.allGroups where before.count(inGroup: group) != layout.counts[group] {
            throw mismatch
        }
        return layout
    }

    /// Replays the logged inserts and deletes on every flexible window, then applies
    /// max/min length once, at the end of the changeset.
    private func followFlexibleRanges(through logs: [ViewCommitLog], from oldLayout: MappingsLayout,
                                      after: any ViewContents) -> NameMap<FlexibleState> {
        var trackers: NameMap<FlexibleWindowTracker> = [:]
        for (group, options) in ranges where options.isFlexible {
            let count = oldLayout.counts[group] ?? 0
            let state = flexibleStates[group]?.clipped(count: count) ?? options.initialFlexibleState(count: count)
            trackers[group] = FlexibleWindowTracker(window: options.unclippedWindow(of: state, count: count),
                                                    count: count, options: options)
        }
        guard !trackers.isEmpty else { return flexibleStates }
        for log in logs {
            for entry in log.entries {
                switch entry {
                case .insert(_, let group, let index): trackers[group]?.insert(at: index)
                case .delete(_, let group, let index): trackers[group]?.delete(at: index)
                case .reset: for group in trackers.keys { trackers[group]!.reset() }
                // A reordered group keeps its rows: the window stays where it is.
                case .update, .groupCreated, .groupEmptied, .reordered: break
                }
            }
        }
        var states = flexibleStates
        for (group, tracker) in trackers {
            let options = ranges[group]!
            let count = after.count(inGroup: group)
            states[group] = options.boundedState(options.state(showing: tracker.window, count: count), count: count)
        }
        return states
    }
}
