/// How a row changed in a commit.
public struct RowChangeKind: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let objectChanged = RowChangeKind(rawValue: 1)
    public static let metadataChanged = RowChangeKind(rawValue: 2)
    public static let objectTouched = RowChangeKind(rawValue: 4)
    public static let metadataTouched = RowChangeKind(rawValue: 8)
    public static let removed = RowChangeKind(rawValue: 16)
    /// What a set (`setObject`, `setObjects`) changes: object and metadata.
    static let set: RowChangeKind = [.objectChanged, .metadataChanged]
}

/// What one read-write commit changed: YapDatabase's "modified notification".
///
/// ```swift
/// let skipped = try connection.beginLongLivedReadTransaction()
/// if skipped.hasChange(forKey: "b1", inCollection: "books") { reload() }
/// ```
///
/// Immutable, so `Sendable`: its view logs hold persistent trees that are
/// never changed once published.
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
    /// What the commit did to each registered view, by view name (bytes).
    let viewLogsByName: [Name: ViewCommitLog]
    /// The row ids of `changedRows` (repeats possible): what the other
    /// connections' row caches forget (`RowCache.move`).
    let changedRowids: [Int64]

    init(snapshot: UInt64, changedRows: [RowKey: RowChangeKind], removedCollections: Set<Name>,
         removedAll: Bool, viewLogs: [Name: ViewCommitLog], changedRowids: [Int64]) {
        self.snapshot = snapshot
        self.changedRows = changedRows
        self.changedRowids = changedRowids
        self.removedCollectionNames = removedCollections
        self.removedAll = removedAll
        self.viewLogsByName = viewLogs
    }

    /// What the commit did to the view registered as `name` (nil: nothing).
    public func viewLog(named name: String) -> ViewCommitLog? { viewLogsByName[Name(name)] }

    /// Names of the views the commit changed, in byte order.
    public var changedViewNames: [String] { viewLogsByName.keys.sorted().map(\.value) }

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
