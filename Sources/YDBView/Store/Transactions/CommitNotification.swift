/// What one read-write commit changed: YapDatabase's "modified notification".
///
/// ```swift
/// let skipped = try connection.beginLongLivedReadTransaction()
/// if skipped.hasChange(forKey: "b1", inCollection: "books") { reload() }
/// ```
///
/// Immutable, so `Sendable`: its extensions' logs (a view's holds
/// persistent trees) are never changed once published.
public final class CommitNotification: @unchecked Sendable {
    /// The snapshot this commit produced.
    public let snapshot: UInt64
    /// Rows set, replaced, touched or removed one by one. Rows removed by
    /// `removeAllObjects(inCollection:)` or `removeAllObjectsInAllCollections()`
    /// are not listed individually: see `removedCollections` and `removedAll`.
    /// Keys are compared as bytes: two spellings of "é" are two rows.
    public let changedRows: [RowKey: RowChangeKind]
    /// `changedRows` in a stable order: by collection, then key, as bytes.
    public var orderedChangedRows: [(row: RowKey, change: RowChangeKind)] {
        changedRows.sorted { $0.key < $1.key }.map { (row: $0.key, change: $0.value) }
    }
    /// Collections emptied by `removeAllObjects(inCollection:)`, in byte order.
    public var removedCollections: [String] { removedCollectionNames.sorted().map(\.value) }
    public let removedAll: Bool
    let removedCollectionNames: Set<Name>
    /// What the commit did to each registered extension, by its name
    /// (bytes); each kind of extension reads its own (`viewLog(named:)`).
    let extensionLogs: [Name: any Sendable]
    /// The row ids of `changedRows` (repeats possible): what the other
    /// connections' row caches forget (`RowCache.move`).
    let changedRowids: [Int64]

    init(snapshot: UInt64, changedRows: [RowKey: RowChangeKind], removedCollections: Set<Name>,
         removedAll: Bool, extensionLogs: [Name: any Sendable], changedRowids: [Int64]) {
        self.snapshot = snapshot
        self.changedRows = changedRows
        self.changedRowids = changedRowids
        self.removedCollectionNames = removedCollections
        self.removedAll = removedAll
        self.extensionLogs = extensionLogs
    }

    public func hasChange(forKey key: String, inCollection collection: String) -> Bool {
        removedAll || removedCollectionNames.contains(Name(collection))
            || changedRows[RowKey(collection: collection, key: key)] != nil
    }

    public func hasChange(inCollection collection: String) -> Bool {
        removedAll || removedCollectionNames.contains(Name(collection))
            || changedRows.keys.contains { bytesEqual($0.collection, collection) }
    }
}

extension Array where Element == CommitNotification {
    public func hasChange(forKey key: String, inCollection collection: String) -> Bool {
        contains { $0.hasChange(forKey: key, inCollection: collection) }
    }

    public func hasChange(inCollection collection: String) -> Bool {
        contains { $0.hasChange(inCollection: collection) }
    }
}
