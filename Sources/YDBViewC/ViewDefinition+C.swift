// ydb_view_definition: the C struct as the caller passed it, and the
// engine's View made from it.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

/// `ydb_view_definition`, field for field (natural alignment, as in C).
struct CViewDefinition {
    var structSize: UInt
    var groupingFlavour: Int32
    var groupingInvoke: UInt32
    var grouping: CGroupingCallback?
    var sortingFlavour: Int32
    var sortingInvoke: UInt32
    var sorting: CSortingCallback?
    var versionTag: UnsafePointer<CChar>?
    var persistent: Int32
    var allowedCollections: UnsafePointer<UnsafePointer<CChar>?>?
    var allowedCollectionCount: UInt
    var sortKey: CSortKeyCallback?
    var groupingBatch: CGroupingBatchCallback?
    var sortKeyBatch: CSortKeyBatchCallback?
    var sortingRowsInMemory: Int32
    var populationBatches: Int32

    // A constant with C pointers (all NULL): never written.
    nonisolated(unsafe) static let defaults = CViewDefinition(
        structSize: UInt(MemoryLayout<CViewDefinition>.stride), groupingFlavour: ViewFlavour.row.rawValue, groupingInvoke: invokeDefault, grouping: nil,
        sortingFlavour: ViewFlavour.row.rawValue, sortingInvoke: invokeDefault, sorting: nil,
        versionTag: nil, persistent: 1, allowedCollections: nil, allowedCollectionCount: 0, sortKey: nil,
        groupingBatch: nil, sortKeyBatch: nil, sortingRowsInMemory: 0,
        populationBatches: 0)

    /// The first version ends with allowed_collection_count: a caller's
    /// struct that stops there has no sort_key or batch callbacks (NULL).
    static let sized = SizedStruct<CViewDefinition>(
        name: "ydb_view_definition", initMacro: "YDB_VIEW_DEFINITION_INIT",
        minimumSize: MemoryLayout<CViewDefinition>.offset(of: \.allowedCollectionCount)! + MemoryLayout<UInt>.size)
}

let invokeDefault: UInt32 = 256

// MARK: - Definitions from C

func flavour(_ value: Int32, _ what: String) throws -> ViewFlavour {
    guard let flavour = ViewFlavour(rawValue: value) else {
        throw YDBError(.invalidArgument, "\(what) \(value) is not a YDB_FLAVOUR_* value")
    }
    return flavour
}

/// YDB_INVOKE_DEFAULT (nil: the flavour's default) or YDB_INVOKE_* bits;
/// filter definitions read theirs the same way (FilteredView+C.swift).
func invokeOptions(_ value: UInt32, _ what: String) throws -> InvokeOptions? {
    if value == invokeDefault { return nil }
    guard value & ~InvokeOptions.any.rawValue == 0 else {
        throw YDBError(.invalidArgument, "\(what) \(value) has bits that are not YDB_INVOKE_* values")
    }
    return InvokeOptions(rawValue: value)
}

/// The engine's View for a C definition whose callbacks live in `slot`.
func makeView(_ definition: CViewDefinition, name: String, slot: ViewSlot) throws -> View {
    guard definition.grouping != nil else { throw YDBError(.invalidArgument, "grouping callback is NULL") }
    switch (definition.sorting, definition.sortKey) {
    case (nil, nil): throw YDBError(.invalidArgument, "sorting and sort_key callbacks are both NULL (set one)")
    case (_?, _?): throw YDBError(.invalidArgument, "sorting and sort_key callbacks are both set (set one)")
    default: break
    }
    if definition.sortKeyBatch != nil && (definition.sortKey == nil || definition.groupingBatch == nil) {
        throw YDBError(.invalidArgument, "sort_key_batch needs sort_key and grouping_batch set too")
    }
    // The batch forms only when the definition has them (`ViewGrouping.Batch`).
    // A population calls the one-row forms, a chunk at a time (the header
    // says so: a batch callback may read its own arrays by index), unless
    // the definition asks for batches there too (population_batches).
    var groupingBatch: ViewGrouping.Batch?
    var groupingPopulation: ViewGrouping.Batch = { txn, rows in try groupEach(name, slot, txn, rows) }
    if definition.groupingBatch != nil {
        let batch: ViewGrouping.Batch = { txn, rows in try callGroupingBatch(name, slot, txn, rows) }
        groupingBatch = batch
        if definition.populationBatches != 0 { groupingPopulation = batch }
    }
    var keyBatch: ViewSorting.KeyBatch?
    var keyPopulation: ViewSorting.KeyBatch = { txn, rows in try keyEach(name, slot, txn, rows) }
    if definition.sortKeyBatch != nil {
        let batch: ViewSorting.KeyBatch = { txn, rows in try callSortKeyBatch(name, slot, txn, rows) }
        keyBatch = batch
        if definition.populationBatches != 0 { keyPopulation = batch }
    }
    let grouping = ViewGrouping(flavour: try flavour(definition.groupingFlavour, "grouping_flavour"),
                                options: try invokeOptions(definition.groupingInvoke, "grouping_invoke"),
                                { txn, row in try callGrouping(name, slot, txn, row) }, batch: groupingBatch,
                                population: groupingPopulation)
    let sortingFlavour = try flavour(definition.sortingFlavour, "sorting_flavour")
    let sortingOptions = try invokeOptions(definition.sortingInvoke, "sorting_invoke")
    let sorting = definition.sortKey != nil
        ? ViewSorting(flavour: sortingFlavour, options: sortingOptions, key: { txn, group, row in
            try callSortKey(name, slot, txn, group, row)
        }, batch: keyBatch, population: keyPopulation)
        : ViewSorting(flavour: sortingFlavour, options: sortingOptions, { txn, group, lhs, rhs in
            try callSorting(name, slot, txn, group, lhs, rhs)
        }, prepared: { CPreparedRows(view: name, slot: slot) }, fixed: { txn, group, row, body in
            try withFixedRow(name, slot, txn, group, row, body)
        })
    let tag = try definition.versionTag.map { try string($0, "version_tag") } ?? ""
    var allowed: [String]?
    if let names = definition.allowedCollections {
        let total = try count(definition.allowedCollectionCount, "allowed_collection_count")
        allowed = try (0..<total).map { try string(names[$0], "allowed_collections[\($0)]") }
    } else if definition.allowedCollectionCount != 0 {
        throw YDBError(.invalidArgument,
                       "allowed_collections is NULL but allowed_collection_count is \(definition.allowedCollectionCount)")
    }
    var view = View(grouping: grouping, sorting: sorting, versionTag: tag,
                    isPersistent: definition.persistent != 0, allowedCollections: allowed)
    view.keepsSortingRowsInMemory = definition.sortingRowsInMemory != 0
    view.releaseHook = ReleaseHook { slot.clear() }
    return view
}

/// The caller's definition, read as far as its struct_size says; NULL or
/// a refused size is the failure the export reports (after looking up its
/// other arguments).
func loadDefinition(_ pointer: UnsafeRawPointer?) -> Result<CViewDefinition, YDBError> {
    guard let pointer else { return .failure(YDBError(.invalidArgument, "definition is NULL")) }
    return Result { try CViewDefinition.sized.load(pointer, defaults: CViewDefinition.defaults) }
        .mapError { $0 as? YDBError ?? YDBError(.error, String(describing: $0)) }
}

/// The slot of a definition's callbacks, also for a definition that was
/// refused: its destructor must still run exactly once.
func slot(for loaded: Result<CViewDefinition, YDBError>, _ ctx: UnsafeMutableRawPointer?,
          _ destroy: CDestructor?) -> ViewSlot {
    let definition = try? loaded.get()
    return ViewSlot(ViewCallbacks(grouping: definition?.grouping, sorting: definition?.sorting, sortKey: definition?.sortKey,
                           groupingBatch: definition?.groupingBatch, sortKeyBatch: definition?.sortKeyBatch,
                           ctx: ctx, destroy: destroy))
}

@_cdecl("ydb_view_definition_init")
public func ydb_view_definition_init(_ definition: UnsafeMutableRawPointer?) -> Int32 {
    run {
        // The whole struct as this library knows it: the caller's must be
        // at least as large (the header says so).
        let out = try required(definition, "definition")
        out.storeBytes(of: CViewDefinition.defaults, as: CViewDefinition.self)
    }
}
