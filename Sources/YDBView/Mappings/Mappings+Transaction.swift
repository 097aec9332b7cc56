/// Mappings read through a transaction (YapDatabase's `updateWithTransaction:`
/// and the view transaction's index-path getters). What commits change is
/// `Changes/`'s part (`changes(for:)`, `hasChanges(for:)`).
///
/// ```swift
/// try reader.beginLongLivedReadTransaction()
/// try reader.read { try mappings.update(with: $0) }
/// ```
extension Mappings {
    /// Caches the view's groups and counts as of `transaction` and moves the
    /// mappings to its snapshot. A view not registered at that snapshot
    /// throws `.notFound` (the mappings are left as they were), unless
    /// `allowsUnregisteredView`: then it reads as empty. Dynamic groups'
    /// filter and sort that take the transaction get a read-only handle of
    /// this one; when they throw, the mappings are left as they were.
    public func update(with transaction: ReadTransaction) throws {
        if !allowsUnregisteredView, try !transaction.hasView(viewName) {
            throw YDBError(.notFound, "no view named '\(viewName)' is registered")
        }
        let contents = try transaction.viewContents(named: viewName)
        let groups = try groups(in: contents, reading: transaction)
        update(with: contents, snapshot: transaction.snapshot, groups: groups)
    }
}

/// The contents of a view that does not exist (not registered at a snapshot).
struct EmptyViewContents: ViewContents {
    var groupNames: [String] { [] }
    func count(inGroup group: String) -> Int { 0 }
    func rowid(at index: Int, inGroup group: String) -> Int64? { nil }
    func locate(rowid: Int64) -> (group: String, index: Int)? { nil }
}

extension ReadTransaction {
    /// The contents of view `name` as of this transaction (empty when the
    /// view is not registered at this snapshot).
    public func viewContents(named name: String) throws -> any ViewContents {
        try access(.readViews) { () -> any ViewContents in
            if let state = viewInstance(named: name)?.state { return state }
            return EmptyViewContents()
        }
    }
}

/// YapDatabase's `YapDatabaseViewTransaction (Mappings)`: rows by table index path.
extension ViewTransaction {
    /// The (collection, key) shown at `indexPath`, or nil when nothing is shown there.
    public func rowKey(at indexPath: TableIndexPath, mappings: Mappings) throws -> RowKey? {
        guard let (group, index) = mappings.groupAndIndex(forRow: indexPath.row, inSection: indexPath.section) else {
            return nil
        }
        return try rowKey(at: index, inGroup: group)
    }

    /// Key, object and metadata shown at `indexPath` in one call.
    public func row(at indexPath: TableIndexPath, mappings: Mappings) throws
        -> (key: RowKey, object: [UInt8], metadata: [UInt8]?)? {
        guard let (group, index) = mappings.groupAndIndex(forRow: indexPath.row, inSection: indexPath.section) else {
            return nil
        }
        return try row(at: index, inGroup: group)
    }

    public func object(at indexPath: TableIndexPath, mappings: Mappings) throws -> [UInt8]? {
        try row(at: indexPath, mappings: mappings)?.object
    }

    public func metadata(at indexPath: TableIndexPath, mappings: Mappings) throws -> [UInt8]? {
        try row(at: indexPath, mappings: mappings)?.metadata
    }

    /// Where the row (collection, key) is shown, or nil when it is not shown
    /// (not in the view, not in the mappings' visible groups, or outside a range).
    public func indexPath(forKey key: String, inCollection collection: String,
                          mappings: Mappings) throws -> TableIndexPath? {
        guard let (group, index) = try position(forKey: key, inCollection: collection) else { return nil }
        return mappings.rowAndSection(forIndex: index, inGroup: group)
    }
}
