// The values every layer shares: a row as callbacks and extensions see it,
// what reading it needs, and how a commit changed it.

/// What a grouping or sorting callback reads. The smallest flavour that
/// covers a callback lets the view skip loading objects, and skip re-running
/// the callback when only the parts it does not read change.
public enum ViewFlavour: Int32, Sendable {
    case key = 0, object = 1, metadata = 2, row = 3

    var readsObject: Bool { self == .object || self == .row }
    var readsMetadata: Bool { self == .metadata || self == .row }

    /// The smallest flavour that reads what both read.
    func union(_ other: ViewFlavour) -> ViewFlavour {
        let object = readsObject || other.readsObject, metadata = readsMetadata || other.readsMetadata
        return object && metadata ? .row : object ? .object : metadata ? .metadata : .key
    }
}

/// A row as a callback sees it. `object` is nil unless the callback's
/// flavour reads the object (likewise `metadata`, which is also nil for a
/// row without metadata).
public struct ViewRow: Sendable {
    public let collection: String
    public let key: String
    public internal(set) var object: [UInt8]?
    public internal(set) var metadata: [UInt8]?

    public init(collection: String, key: String, object: [UInt8]?, metadata: [UInt8]?) {
        self.collection = collection
        self.key = key
        self.object = object
        self.metadata = metadata
    }

    /// The row as a callback of `flavour` may see it.
    func narrowed(to flavour: ViewFlavour) -> ViewRow {
        ViewRow(collection: collection, key: key,
                object: flavour.readsObject ? object : nil,
                metadata: flavour.readsMetadata ? metadata : nil)
    }
}

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
