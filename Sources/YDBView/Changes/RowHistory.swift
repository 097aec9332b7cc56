/// What the view did to one row over all the commits of a changeset, reduced to
/// what decides its change (docs/behaviour.md, "One change per row"): was it in the
/// view at the start, is it at the end, did it ever leave its place (a delete or
/// an insert of the row itself), and which parts of it changed.
struct RowHistory {
    /// In the view at the first commit's start.
    var existedBefore: Bool
    /// In the view after the last operation so far.
    var existsNow: Bool
    /// A delete or insert of this row was logged (it left its place at least once).
    var moved: Bool
    /// Union of the changed parts of all its operations; inserts and deletes count
    /// as object + metadata.
    var flags: RowChangeFlags

    /// Neither in the view before nor after (inserted then deleted): no change at all.
    var isTransient: Bool { !existedBefore && !existsNow }
    /// In the view before and after, only updated in place: an update.
    var isUpdateOnly: Bool { existedBefore && existsNow && !moved }
}

/// The merged histories of every row the commit logs name, plus what applies to
/// rows they do not name. Built in one pass over the entries: O(entries).
struct CommitHistories {
    private(set) var rows: [Int64: RowHistory] = [:]
    /// True once a `.reset` entry was seen: every row in the view at that moment
    /// left it, including rows no entry names.
    private(set) var resetSeen = false
    /// Groups whose rows changed order among themselves (`.reordered`): rows no
    /// entry names may have moved within them.
    private(set) var reorderedGroups: NameSet = []
    /// (collection, key) of the rows the logs know.
    private(set) var keys = RowKeys()

    private static let insertOrDeleteFlags: RowChangeFlags = [.object, .metadata]

    /// - Parameter before: the view at the first commit's start, consulted only for
    ///   rows first named after a reset (did the reset remove them?).
    init(logs: [ViewCommitLog], before: any ViewContents) {
        for log in logs {
            keys.merge(log.keys, keepingOwn: false)
            for entry in log.entries { apply(entry, before: before) }
        }
    }

    private mutating func apply(_ entry: ViewLogEntry, before: any ViewContents) {
        switch entry {
        case .insert(let rowid, _, _):
            var history = rows[rowid] ?? firstSeen(rowid, existedIfUntouched: false, before: before)
            history.moved = history.moved || history.existedBefore || rows[rowid] != nil
            history.existsNow = true
            history.flags.formUnion(Self.insertOrDeleteFlags)
            rows[rowid] = history
        case .delete(let rowid, _, _):
            var history = rows[rowid] ?? firstSeen(rowid, existedIfUntouched: true, before: before)
            history.moved = true
            history.existsNow = false
            history.flags.formUnion(Self.insertOrDeleteFlags)
            rows[rowid] = history
        case .update(let rowid, _, _, let changes):
            var history = rows[rowid] ?? firstSeen(rowid, existedIfUntouched: true, before: before)
            history.flags.formUnion(changes.subtracting(.dependency))
            rows[rowid] = history
        case .reset:
            resetSeen = true
            for (rowid, var history) in rows where history.existsNow {
                history.existsNow = false
                history.moved = true
                history.flags.formUnion(Self.insertOrDeleteFlags)
                rows[rowid] = history
            }
        case .reordered(let group):
            reorderedGroups.insert(group)
        case .groupCreated, .groupEmptied:
            break
        }
    }

    /// The history of a row at its first named operation. A row untouched so far is
    /// as it was at the start — unless a reset removed it meanwhile, in which case
    /// it starts out "deleted by the reset".
    private func firstSeen(_ rowid: Int64, existedIfUntouched: Bool, before: any ViewContents) -> RowHistory {
        guard resetSeen else {
            return RowHistory(existedBefore: existedIfUntouched, existsNow: existedIfUntouched,
                              moved: false, flags: [])
        }
        let existed = before.locate(rowid: rowid) != nil
        return RowHistory(existedBefore: existed, existsNow: false, moved: existed,
                          flags: existed ? Self.insertOrDeleteFlags : [])
    }
}
