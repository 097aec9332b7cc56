/// How a row changed in a commit.
public struct RowChangeKind: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let objectChanged = RowChangeKind(rawValue: 1)
    public static let metadataChanged = RowChangeKind(rawValue: 2)
    public static let objectTouched = RowChangeKind(rawValue: 4)
    public static let metadataTouched = RowChangeKind(rawValue: 8)
    public static let removed = RowChangeKind(rawValue: 16)
}

/// What one read-write commit changed: YapDatabase's "modified notification".
///
/// ```swift
/// let skipped = try connection.beginLongLivedReadTransaction()
/// if skipped.hasChange(forKey: "b1", inCollection: "books") { reload() }
/// ```
public final class CommitNotification {
    /// The snapshot this commit produced.
    public let snapshot: UInt64
    /// Rows set, replaced, touched or removed one by one. Rows removed by
    /// `removeAllObjects(inCollection:)` or `removeAllObjectsInAllCollections()`
    /// are not listed individually: see `removedCollections` and `removedAll`.
    public let changedRows: [RowKey: RowChangeKind]
    public let removedCollections: Set<String>
    public let removedAll: Bool
    /// What the commit did to each registered view, by view name.
    public let viewLogs: [String: ViewCommitLog]

    init(snapshot: UInt64, changedRows: [RowKey: RowChangeKind], removedCollections: Set<String>,
         removedAll: Bool, viewLogs: [String: ViewCommitLog]) {
        self.snapshot = snapshot
        self.changedRows = changedRows
        self.removedCollections = removedCollections
        self.removedAll = removedAll
        self.viewLogs = viewLogs
    }

    public func hasChange(forKey key: String, inCollection collection: String) -> Bool {
        removedAll || removedCollections.contains(collection)
            || changedRows[RowKey(collection: collection, key: key)] != nil
    }

    public func hasChange(inCollection collection: String) -> Bool {
        removedAll || removedCollections.contains(collection)
            || changedRows.keys.contains { $0.collection == collection }
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
