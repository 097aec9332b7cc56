/// A persistent view's committed changes that its storage table does not
/// hold yet: the rows commits leave waiting under the storage rule
/// (`StoragePlan.swift`). Writing the view's row at every commit made a
/// one-row commit change three B-trees where a plain indexed table
/// changes two.
///
/// Shared by every snapshot of the view, like its row cache. Only a writer
/// holding the write gate reads or changes it, and it changes it only once
/// its commit succeeded (`StoragePlan.committed`), so a rollback leaves it
/// as it was.
final class UnstoredRows: @unchecked Sendable {   // guarded by the write gate
    /// A row's last place in the view, or its removal.
    enum Row {
        case put(group: String, label: Int64, sortKey: SortKey?)
        case removed
    }

    /// By row id.
    var rows: [Int64: Row] = [:]
    /// Whether the view's registry row was marked not fresh because of them.
    var markedStale = false
    /// False while an asynchronous registration stores the view a chunk at
    /// a time (its commits then store every row they change), and for good
    /// when it stopped before the end: the table then lacks rows that
    /// nothing here records, and it must stay marked not fresh.
    var tableIsComplete: Bool

    init(tableIsComplete: Bool = true) {
        self.tableIsComplete = tableIsComplete
    }

    /// Whether the stored view needs writing to be whole and fresh.
    var owesWrites: Bool { tableIsComplete && (markedStale || !rows.isEmpty) }

    /// A commit wrote the rows and marked the view fresh. The dictionary
    /// keeps its storage for the next rows to wait, instead of growing
    /// from empty again each batch.
    func markStored() {
        rows.removeAll(keepingCapacity: true)
        markedStale = false
    }
}
