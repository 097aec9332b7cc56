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

extension ViewFlavour {
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
/// A body may also take the transaction running it (YapDatabase's blocks
/// do), to read other rows: a book grouped by its author's country.
///
/// ```swift
/// let byCountry = ViewGrouping(flavour: .object) { transaction, row in
///     try transaction.object(forKey: authorKey(row), inCollection: "authors").map(country)
/// }
/// ```
///
/// That transaction is a read-only handle, valid only during the call: it
/// reads the rows (including the running transaction's own writes so far),
/// not the views, which are half-updated; it cannot write. Reading a row
/// does not make the view depend on it: changing the author alone does not
/// regroup the books (touch them to regroup them; docs/behaviour.md).
///
/// The body is `@Sendable`: it runs on whichever thread commits a write.
public struct ViewGrouping: Sendable {
    public typealias Body = @Sendable (ViewRow) throws -> String?
    public typealias TransactionBody = @Sendable (ReadTransaction, ViewRow) throws -> String?

    public let flavour: ViewFlavour
    public let options: InvokeOptions
    /// True when the body takes the transaction.
    public let readsTransaction: Bool
    /// The body, given the running transaction (a row-only body ignores it;
    /// another gets a read-only handle of it, made for the call).
    let run: @Sendable (ReadTransaction, ViewRow) throws -> String?

    /// For bindings whose callbacks cost more to enter than to run (Python
    /// through ctypes): a `setObjects` batch's rows that need grouping are
    /// grouped in one call. Each row comes with its position in the batch
    /// (a binding that still holds the rows it passed need not convert
    /// them back), narrowed to the flavour; the result is one group (or
    /// nil) per row, in order. It must give what `run` would give: every
    /// other write still calls `run`, and a population `populationBatch`
    /// (or `run`).
    package typealias Batch = @Sendable (_ transaction: ReadTransaction, _ rows: [BatchedRow]) throws -> [String?]
    package private(set) var batch: Batch?

    /// How a population groups the rows it scans, a chunk at a time (each
    /// row's index is its position in the chunk): for bindings whose
    /// one-row callback costs more to enter than to run (C), the callback
    /// looped by the binding, with what every call needs (the callbacks,
    /// the thread's state, the lent transaction) looked up once a chunk.
    /// It must give what `run` gives, row by row. Nil: `run`, row by row.
    package private(set) var populationBatch: Batch?

    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping Body) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        readsTransaction = false
        run = { _, row in try body(row) }
    }

    /// A grouping whose body also reads the transaction running it.
    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping TransactionBody) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        readsTransaction = true
        run = { running, row in
            try CallbackTransaction.lend(running) { try body($0, row) }
        }
    }

    /// A grouping from its parts: `run` is given the running transaction
    /// as is (a filtered view's, which lends it to the callbacks it calls).
    init(flavour: ViewFlavour, options: InvokeOptions, readsTransaction: Bool,
         run: @escaping @Sendable (ReadTransaction, ViewRow) throws -> String?) {
        self.flavour = flavour
        self.options = options
        self.readsTransaction = readsTransaction
        self.run = run
    }

    /// A grouping reading the transaction, with its batch form if it has
    /// one and the form a population groups through (for bindings).
    package init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping TransactionBody,
                 batch: Batch?, population: Batch? = nil) {
        self.init(flavour: flavour, options: options, body)
        self.batch = batch.map(lendingBatch)
        populationBatch = population.map(lendingBatch)
    }
}

/// A batch form given a read-only handle of the running transaction, lent
/// once a call.
private func lendingBatch<Answer>(_ batch: @escaping @Sendable (ReadTransaction, [BatchedRow]) throws -> [Answer])
    -> @Sendable (ReadTransaction, [BatchedRow]) throws -> [Answer] {
    { running, rows in try CallbackTransaction.lend(running) { try batch($0, rows) } }
}

/// One row of a `setObjects` batch (or of a population's chunk) handed to
/// a batch callback: its position in the batch, the group it is being
/// placed in (sort keys only; empty for a grouping) and the row.
package struct BatchedRow: Sendable {
    package let index: Int
    package let group: String
    package let row: ViewRow
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
/// Either form's body may also take the transaction running it, first, to
/// read other rows (`{ transaction, group, a, b in ... }`, `key: {
/// transaction, group, row in ... }`): a read-only handle valid only during
/// the call, as for `ViewGrouping`. A row it reads is not a dependency:
/// changing it alone moves nothing (touch the rows that read it).
///
/// The bodies are `@Sendable`: they run on whichever thread commits a write.
public struct ViewSorting: Sendable {
    public typealias Comparator = @Sendable (String, ViewRow, ViewRow) throws -> ViewOrder
    public typealias KeyFunction = @Sendable (String, ViewRow) throws -> SortKey
    public typealias TransactionComparator = @Sendable (ReadTransaction, String, ViewRow, ViewRow) throws -> ViewOrder
    public typealias TransactionKeyFunction = @Sendable (ReadTransaction, String, ViewRow) throws -> SortKey

    /// The body, given the running transaction (see `ViewGrouping.run`).
    enum Form {
        case comparator(@Sendable (ReadTransaction, String, ViewRow, ViewRow) throws -> ViewOrder)
        case key(@Sendable (ReadTransaction, String, ViewRow) throws -> SortKey)
    }

    /// For bindings whose comparator needs each row in a form of its own
    /// (C structs): a population hands each row of a group to the group's
    /// `PreparedRows` as it scans, keeping no copy of its own, and then
    /// sorts the group through them. Each row is converted once, not twice
    /// per comparison, and held once.
    package typealias PreparedComparator = @Sendable () -> any PreparedRows

    /// For the same bindings: placing a row compares it with about log2(n)
    /// others, and this converts it (and its group) once a placement, not
    /// once a comparison. It calls `body` with a comparison of `row` against
    /// any other row, valid during the call. `transaction` is the running
    /// transaction, lent for the placement's comparisons as the comparator
    /// is lent it for one.
    package typealias FixedComparator = @Sendable (
        _ transaction: ReadTransaction, _ group: String, _ row: ViewRow,
        _ body: (_ compare: (ViewRow) throws -> ViewOrder) throws -> Void) throws -> Void

    public let flavour: ViewFlavour
    public let options: InvokeOptions
    /// True when the body takes the transaction.
    public let readsTransaction: Bool
    let form: Form
    /// Set only with a comparator (see `PreparedComparator`).
    private(set) var prepare: PreparedComparator?
    /// Set only with a comparator (see `FixedComparator`): the binding's,
    /// given the running transaction, which it lends the comparisons of one
    /// placement.
    private(set) var fixed: FixedComparator?

    /// The sort-key form's batch (see `ViewGrouping.Batch`): the keys of a
    /// `setObjects` batch's rows that need one, one key per row, in order.
    package typealias KeyBatch = @Sendable (_ transaction: ReadTransaction, _ rows: [BatchedRow]) throws -> [SortKey]
    package private(set) var keyBatch: KeyBatch?
    /// The keys of a population's rows, a chunk at a time (see
    /// `ViewGrouping.populationBatch`). Nil: the key function, row by row.
    package private(set) var populationKeyBatch: KeyBatch?

    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping Comparator) {
        self.init(flavour, options, reads: false, .comparator { _, group, a, b in try body(group, a, b) })
    }

    /// The sort-key form: `key` returns the row's key in `group`.
    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, key: @escaping KeyFunction) {
        self.init(flavour, options, reads: false, .key { _, group, row in try key(group, row) })
    }

    /// A comparator that also reads the transaction running it.
    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping TransactionComparator) {
        self.init(flavour, options, reads: true, .comparator { running, group, a, b in
            try CallbackTransaction.lend(running) { try body($0, group, a, b) }
        })
    }

    /// The sort-key form, reading the transaction running it.
    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, key: @escaping TransactionKeyFunction) {
        self.init(flavour, options, reads: true, .key { running, group, row in
            try CallbackTransaction.lend(running) { try key($0, group, row) }
        })
    }

    /// The sort-key form reading the transaction, with its batch form if it
    /// has one and the form a population asks keys through (for bindings).
    package init(flavour: ViewFlavour, options: InvokeOptions? = nil, key: @escaping TransactionKeyFunction,
                 batch: KeyBatch?, population: KeyBatch? = nil) {
        self.init(flavour: flavour, options: options, key: key)
        keyBatch = batch.map(lendingBatch)
        populationKeyBatch = population.map(lendingBatch)
    }

    /// A comparator reading the transaction running it, with the form a
    /// population sorts through (for bindings).
    package init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping TransactionComparator,
                 prepared: @escaping PreparedComparator, fixed: FixedComparator? = nil) {
        self.init(flavour: flavour, options: options, body)
        prepare = prepared
        self.fixed = fixed.map { fixed in
            { @Sendable running, group, row, body in
                // Lent once for the placement's comparisons, not once each:
                // between two of them only the engine runs, so no callback
                // can tell the difference, and lending cost two locks.
                try CallbackTransaction.lend(running) { try fixed($0, group, row, body) }
            }
        }
    }

    /// A sorting from its parts (a filtered view's, which calls its parent's).
    init(_ flavour: ViewFlavour, _ options: InvokeOptions?, reads: Bool, _ form: Form) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        readsTransaction = reads
        self.form = form
        prepare = nil
        fixed = nil
        keyBatch = nil
        populationKeyBatch = nil
    }

    /// Whether this is the sort-key form.
    public var usesSortKeys: Bool {
        if case .key = form { return true }
        return false
    }
}

/// Locates a range of a sorted group: for a row, is it before the range
/// wanted (`.ascending`), inside it (`.same`) or after it (`.descending`)?
///
/// The body may also take the transaction the find runs in, first (`{
/// transaction, row in ... }`): a read-only handle of it, valid only during
/// the call, that reads rows and views.
public struct ViewFind {
    public let flavour: ViewFlavour
    /// True when the body takes the transaction.
    public let readsTransaction: Bool
    /// The body, given the transaction the find runs in (see `ViewGrouping.run`).
    let run: (ReadTransaction, ViewRow) throws -> ViewOrder

    public init(flavour: ViewFlavour, _ body: @escaping (ViewRow) throws -> ViewOrder) {
        self.flavour = flavour
        readsTransaction = false
        run = { _, row in try body(row) }
    }

    /// A find whose body also reads the transaction it runs in.
    public init(flavour: ViewFlavour, _ body: @escaping (ReadTransaction, ViewRow) throws -> ViewOrder) {
        self.flavour = flavour
        readsTransaction = true
        run = { running, row in
            try CallbackTransaction.lend(running) { try body($0, row) }
        }
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
    /// A comparator-form view that keeps every row its comparator reads in
    /// memory (as the sorting's flavour reads it: about 160 bytes a row
    /// beside the object and metadata read), so that placing a changed row
    /// reads no row back from SQLite. Off: the view keeps the rows it
    /// compared most recently, up to 2 MB. No effect on the sort-key form,
    /// whose keys are in memory anyway, and no effect on what is stored:
    /// change it without a new version tag. docs/behaviour.md, "Comparators
    /// and memory".
    public var keepsSortingRowsInMemory = false
    /// When set, only rows of these collections are ever considered.
    /// Collections are matched by their bytes (see the README, "names are
    /// bytes"): a list, since a `Set<String>` would merge two spellings.
    public var allowedCollections: [String]? {
        didSet { allowedNames = allowedCollections.map { Set($0.map { Name($0) }) } }
    }
    private var allowedNames: Set<Name>?
    /// Run when this definition stops being used (see `ReleaseHook`).
    package var releaseHook: ReleaseHook?
    /// Set for a filtered view: the parent and filter its grouping and
    /// sorting are made of (`FilteredView`).
    var filtering: Filtering?

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

    /// The collections a scan of the rows reads: the allowed ones, each
    /// once by its bytes, in byte order (nil: every collection).
    var scannedCollections: [String]? { allowedNames.map { $0.sorted().map(\.value) } }
}

/// One group's rows in a binding's own form, for a population's sort (see
/// `ViewSorting.PreparedComparator`).
package protocol PreparedRows: AnyObject {
    /// Converts and keeps the group's next row (positions count from 0 in
    /// the order rows are appended).
    func append(_ row: ViewRow)
    /// Calls `sort` with a comparator of positions, which the engine calls
    /// with the transaction running each comparison. Its order must be the
    /// comparator's.
    func sort(_ group: String,
              _ sort: (_ compare: (ReadTransaction, Int, Int) throws -> ViewOrder) throws -> Void) throws
}

extension PreparedRows {
    /// The engine's sort of the group through these rows: `sort` gets the
    /// comparison of two rows by their positions. The running transaction
    /// is lent once for the whole sort, not per comparison: lending takes
    /// the connection's lock twice, and the comparisons of a million-row
    /// population are twenty million.
    func sort(in group: String, lending running: ReadTransaction,
              _ sort: (_ compare: (Int, Int) throws -> ViewOrder) throws -> Void) throws {
        try CallbackTransaction.lend(running) { lent in
            try self.sort(group) { compare in
                try withoutActuallyEscaping(compare) { compare in try sort { a, b in try compare(lent, a, b) } }
            }
        }
    }
}
