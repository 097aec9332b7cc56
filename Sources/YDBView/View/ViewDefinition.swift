/// What a grouping or sorting callback reads. The smallest flavour that
/// covers a callback lets the view skip loading objects, and skip re-running
/// the callback when only the parts it does not read change.
public enum ViewFlavour: Int32, Sendable {
    case key = 0, object = 1, metadata = 2, row = 3

    var readsObject: Bool { self == .object || self == .row }
    var readsMetadata: Bool { self == .metadata || self == .row }

    /// YapDatabase's defaults: a callback re-runs when what it reads changes.
    var defaultInvokeOptions: InvokeOptions {
        switch self {
        case .key: return .insertOnly
        case .object: return [.objectModified, .objectTouched]
        case .metadata: return [.metadataModified, .metadataTouched]
        case .row: return .any
        }
    }
}

/// Which changes to an existing row make a callback run again. A callback
/// always runs when a row is inserted.
public struct InvokeOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let objectModified = InvokeOptions(rawValue: 1)
    public static let metadataModified = InvokeOptions(rawValue: 2)
    public static let objectTouched = InvokeOptions(rawValue: 4)
    public static let metadataTouched = InvokeOptions(rawValue: 8)
    public static let insertOnly: InvokeOptions = []
    public static let any: InvokeOptions = [.objectModified, .metadataModified, .objectTouched, .metadataTouched]

    func isTriggered(by kind: RowChangeKind) -> Bool {
        (contains(.objectModified) && kind.contains(.objectChanged))
            || (contains(.metadataModified) && kind.contains(.metadataChanged))
            || (contains(.objectTouched) && kind.contains(.objectTouched))
            || (contains(.metadataTouched) && kind.contains(.metadataTouched))
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

/// The order of two rows, or of a row and a searched range.
public enum ViewOrder: Int32, Sendable {
    case ascending = -1, same = 0, descending = 1
}

/// Filters and groups rows: returns the row's group, or nil to leave the row
/// out of the view. Throwing aborts the transaction.
///
/// ```swift
/// let grouping = ViewGrouping(flavour: .object) { row in row.object!.first == 1 ? "books" : nil }
/// ```
///
/// The body is `@Sendable`: it runs on whichever thread commits a write.
public struct ViewGrouping: Sendable {
    public let flavour: ViewFlavour
    public let options: InvokeOptions
    public let body: @Sendable (ViewRow) throws -> String?

    public init(flavour: ViewFlavour, options: InvokeOptions? = nil,
                _ body: @escaping @Sendable (ViewRow) throws -> String?) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        self.body = body
    }
}

/// Orders the rows of one group, in one of two forms:
///
/// - a comparator, which orders two rows (YapDatabase's sorting block);
/// - a sort key, which maps one row to bytes (`SortKey`); rows sort by
///   their keys' bytes. The engine keeps every key in memory and stores it
///   with the view, so it calls back once per row instead of once per
///   comparison, and never reads rows back to place a changed one.
///
/// Either must be a consistent total order for the view to be sorted; an
/// inconsistent comparator never crashes, it only leaves the order
/// unspecified. Rows that compare equal keep the order they arrived in.
///
/// ```swift
/// let byKey = ViewSorting(flavour: .key) { group, a, b in a.key < b.key ? .ascending : a.key == b.key ? .same : .descending }
/// let byKeyToo = ViewSorting(flavour: .key, key: { group, row in var k = SortKey(); k.append(row.key); return k })
/// ```
///
/// The bodies are `@Sendable`: they run on whichever thread commits a write.
public struct ViewSorting: Sendable {
    public typealias Comparator = @Sendable (String, ViewRow, ViewRow) throws -> ViewOrder
    public typealias KeyFunction = @Sendable (String, ViewRow) throws -> SortKey

    enum Form {
        case comparator(Comparator)
        case key(KeyFunction)
    }

    public let flavour: ViewFlavour
    public let options: InvokeOptions
    let form: Form

    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping Comparator) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        form = .comparator(body)
    }

    /// The sort-key form: `key` returns the row's key in `group`.
    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, key: @escaping KeyFunction) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        form = .key(key)
    }

    /// Whether this is the sort-key form.
    public var usesSortKeys: Bool {
        if case .key = form { return true }
        return false
    }
}

/// Locates a range of a sorted group: for a row, is it before the range
/// wanted (`.ascending`), inside it (`.same`) or after it (`.descending`)?
public struct ViewFind {
    public let flavour: ViewFlavour
    public let body: (ViewRow) throws -> ViewOrder

    public init(flavour: ViewFlavour, _ body: @escaping (ViewRow) throws -> ViewOrder) {
        self.flavour = flavour
        self.body = body
    }
}

/// A view to register: grouping, sorting and options.
///
/// ```swift
/// let view = View(grouping: grouping, sorting: sorting, versionTag: "1")
/// try database.registerView(view, name: "byTitle")
/// ```
public struct View: Sendable {
    public var grouping: ViewGrouping
    public var sorting: ViewSorting
    /// Change it whenever grouping or sorting change: a persistent view
    /// re-registered with the same tag does no work at all.
    public var versionTag: String
    /// Persistent views are stored in SQLite and survive restarts;
    /// non-persistent ones live in memory and repopulate at registration.
    public var isPersistent: Bool
    /// When set, only rows of these collections are ever considered.
    /// Collections are matched by their bytes (see the README, "names are
    /// bytes"): a list, since a `Set<String>` would merge two spellings.
    public var allowedCollections: [String]? {
        didSet { allowedNames = allowedCollections.map { Set($0.map { Name($0) }) } }
    }
    private var allowedNames: Set<Name>?
    /// Run when this definition stops being used (see `ReleaseHook`).
    package var releaseHook: ReleaseHook?

    public init(grouping: ViewGrouping, sorting: ViewSorting, versionTag: String = "",
                isPersistent: Bool = true, allowedCollections: [String]? = nil) {
        self.grouping = grouping
        self.sorting = sorting
        self.versionTag = versionTag
        self.isPersistent = isPersistent
        self.allowedCollections = allowedCollections
        allowedNames = allowedCollections.map { Set($0.map { Name($0) }) }
    }

    func allows(_ collection: String) -> Bool {
        allowedNames?.contains(Name(collection)) ?? true
    }
}
