/// A section inserted into or deleted from the table.
public struct SectionChange: Hashable, Sendable, CustomStringConvertible {
    /// Insert or delete.
    public enum Kind: Hashable, Sendable {
        case insert
        case delete
    }

    /// Insert or delete.
    public let type: Kind
    /// The section's index: original for a delete, final for an insert.
    public let index: Int
    /// The group shown by the section (the consolidated name for the consolidated section).
    public let group: String

    public init(type: Kind, index: Int, group: String) {
        self.type = type
        self.index = index
        self.group = group
    }

    public var description: String { "\(type) section \(index) (\(group))" }
}

/// One row's change between two snapshots, in table terms (the fields of
/// YapDatabaseViewRowChange).
///
/// - `indexPath`: the ORIGINAL position; set for delete, move and update.
/// - `newIndexPath`: the FINAL position; set for insert and move (nil for an
///   update, as with NSFetchedResultsController — reload the original position).
/// - `originalGroup`/`originalSection`/`originalIndex`: the original position as
///   (section's group, section, row in section); `final…` the same at the end.
///   Set whenever the row was shown at that time (so an update has both). The
///   group is the one its section shows — the consolidated name while consolidated.
/// - `changes`: what changed (object, metadata, dependency). Inserts and deletes
///   carry object + metadata (a delete of a row a range window moved off carries
///   what changed in it instead); `.dependency` marks a row a cell drawing
///   dependency reloads, on whatever change it gets — one reloaded only for that
///   has exactly `.dependency` (an update, or a move where an update would be
///   one); a row moved only because its section was replaced (consolidation
///   switching) has no flags. docs/behaviour.md, "One change per row" and
///   "Cell-drawing dependencies", has the rules.
/// - `rowKey`: the row's (collection, key) when known — nil only for a row the
///   commits did not touch (it entered or left a range window, or moved for
///   consolidation, or is reloaded only for a dependency).
public struct RowChange: Hashable, Sendable, CustomStringConvertible {
    /// What happened to the row in the table.
    public enum Kind: Hashable, Sendable {
        case insert
        case delete
        case move
        case update
    }

    public let type: Kind
    public let indexPath: TableIndexPath?
    public let newIndexPath: TableIndexPath?
    public let originalGroup: String?
    public let finalGroup: String?
    public let changes: RowChangeFlags
    public let rowKey: RowKey?
    /// The row's id in the database (at the end, for a row removed and set
    /// again under the same key: see `originalRowid`).
    public let rowid: Int64
    /// The row's id at the start. It differs from `rowid` only when the row
    /// was removed and set again under the same (collection, key): the
    /// database gave it a new id, but a table shows one row, so its delete
    /// and insert are reported as one move.
    public let originalRowid: Int64
    /// Where the row was shown at the start (also set for updates).
    public let originalPosition: TableIndexPath?
    /// Where the row is shown at the end (also set for updates).
    public let finalPosition: TableIndexPath?

    init(type: Kind, rowid: Int64, originalRowid: Int64? = nil, rowKey: RowKey?, changes: RowChangeFlags,
         original: TableIndexPath?, originalGroup: String?,
         final: TableIndexPath?, finalGroup: String?) {
        self.type = type
        self.rowid = rowid
        self.originalRowid = originalRowid ?? rowid
        self.rowKey = rowKey
        self.changes = changes
        self.originalPosition = original
        self.finalPosition = final
        self.originalGroup = original == nil ? nil : originalGroup
        self.finalGroup = final == nil ? nil : finalGroup
        self.indexPath = type == .insert ? nil : original
        self.newIndexPath = (type == .insert || type == .move) ? final : nil
    }

    /// Section of the original position.
    public var originalSection: Int? { originalPosition?.section }
    /// Row of the original position.
    public var originalIndex: Int? { originalPosition?.row }
    /// Section of the final position.
    public var finalSection: Int? { finalPosition?.section }
    /// Row of the final position.
    public var finalIndex: Int? { finalPosition?.row }
    /// The row's collection, when known.
    public var collection: String? { rowKey?.collection }
    /// The row's key, when known.
    public var key: String? { rowKey?.key }

    /// A copy with more change flags (a dependency reload on an updated row).
    func adding(_ flags: RowChangeFlags) -> RowChange {
        RowChange(type: type, rowid: rowid, originalRowid: originalRowid, rowKey: rowKey, changes: changes.union(flags),
                  original: originalPosition, originalGroup: originalGroup,
                  final: finalPosition, finalGroup: finalGroup)
    }

    /// What a table does, in its own terms: "move [0, 3] -> [1, 0] books/b1
    /// (object)". Index paths are [section, row]; the row's database id is
    /// an implementation detail and not shown.
    public var description: String {
        var flags: [String] = []
        if changes.contains(.object) { flags.append("object") }
        if changes.contains(.metadata) { flags.append("metadata") }
        if changes.contains(.dependency) { flags.append("dependency") }
        let paths: String
        switch type {
        case .insert: paths = "\(newIndexPath.map { "\($0)" } ?? "?")"
        case .delete, .update: paths = "\(indexPath.map { "\($0)" } ?? "?")"
        case .move: paths = "\(indexPath.map { "\($0)" } ?? "?") -> \(newIndexPath.map { "\($0)" } ?? "?")"
        }
        let what = rowKey?.description ?? "(a row the window gained or lost)"
        return "\(type) \(paths) \(what)" + (flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")
    }
}

/// The section and row changes that turn the table shown by a mappings at one
/// snapshot into the table it shows at a later one — always a valid batch update.
///
/// Apply it as a `UITableView` batch update: first the section deletes and the row
/// deletes and moves-out, all at ORIGINAL index paths; then the section inserts and
/// the row inserts and moves-in at FINAL index paths; reload updates at their
/// original index paths.
///
/// **Rows of inserted and deleted sections are reported too.** Every row shown in a
/// deleted section comes with a row delete (or a move, when it is still shown
/// elsewhere), and every row shown in an inserted section with a row insert (or a
/// move). A consumer that deletes/inserts whole sections may skip those rows; one
/// that applies rows one by one finds every section empty when it is deleted and
/// fills every inserted section. Sections are inserted/deleted only when a group
/// becomes visible or invisible or consolidation switches; a section hidden and
/// shown again within one changeset produces no section change, but its rows are
/// still reported.
///
/// ```swift
/// let changeset = try mappings.changes(for: logs)
/// for change in changeset.sectionChanges { ... }   // deleteSections / insertSections
/// for change in changeset.rowChanges {
///     switch change.type {
///     case .delete: table.deleteRows(at: [change.indexPath!])
///     case .insert: table.insertRows(at: [change.newIndexPath!])
///     case .move:   table.moveRow(at: change.indexPath!, to: change.newIndexPath!)
///     case .update: table.reloadRows(at: [change.indexPath!])
///     }
/// }
/// ```
public struct Changeset: Hashable, Sendable {
    /// Section deletes (ascending original index), then section inserts (ascending final index).
    public var sectionChanges: [SectionChange]
    /// Row deletes, inserts, moves and updates — at most one per row. Ordered:
    /// deletes by original path, inserts by final path, moves by original path,
    /// updates by original path.
    public var rowChanges: [RowChange]

    public init(sectionChanges: [SectionChange] = [], rowChanges: [RowChange] = []) {
        self.sectionChanges = sectionChanges
        self.rowChanges = rowChanges
    }

    /// True when the table does not change at all.
    public var isEmpty: Bool { sectionChanges.isEmpty && rowChanges.isEmpty }
}
