// ydb_filtered_view_register and ydb_view_set_filter: views that show the
// rows of another view a C filter keeps; ydb_txn_touch_rows and
// ydb_txn_touch_group: touching many rows at once, so that a filter whose
// answer depends on something outside the row answers again.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// (ctx, txn, group, row, out_keep) -> status: txn as for every view callback.
public typealias CFilterCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?,
                                                   UnsafeRawPointer?, UnsafeMutablePointer<Int32>?) -> Int32

/// `ydb_filter_definition`, field for field (natural alignment, as in C).
struct CFilterDefinition {
    var structSize: UInt
    var flavour: Int32
    var invoke: UInt32
    var filter: CFilterCallback?
    var versionTag: UnsafePointer<CChar>?
    var persistent: Int32

    // A constant with C pointers (all NULL): never written.
    nonisolated(unsafe) static let defaults = CFilterDefinition(
        structSize: UInt(MemoryLayout<CFilterDefinition>.stride), flavour: ViewFlavour.row.rawValue,
        invoke: invokeDefault, filter: nil, versionTag: nil, persistent: 1)

    /// The first version is the whole struct: nothing can be left to defaults yet.
    static let sized = SizedStruct<CFilterDefinition>(
        name: "ydb_filter_definition", initMacro: "YDB_FILTER_DEFINITION_INIT",
        minimumSize: MemoryLayout<CFilterDefinition>.size)
}

/// A filter's C callback with its ctx; the destructor runs when the last
/// reference goes (after `FilterSlot.clear()` and any call still running),
/// so exactly once, as for a view's callbacks.
final class FilterCallbacks {
    let filter: CFilterCallback?
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(filter: CFilterCallback?, ctx: UnsafeMutableRawPointer?, destroy: CDestructor?) {
        self.filter = filter
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }
}

/// What the engine's filter closure holds: clearing it releases the
/// callback at once, whatever the engine still references.
typealias FilterSlot = CallbackSlot<FilterCallbacks>

/// The caller's definition, read as far as its struct_size says; NULL or
/// a refused size is the failure the export reports (after looking up its
/// other arguments, as `loadDefinition` does).
private func loadFilterDefinition(_ pointer: UnsafeRawPointer?) -> Result<CFilterDefinition, YDBError> {
    guard let pointer else { return .failure(YDBError(.invalidArgument, "definition is NULL")) }
    return Result { try CFilterDefinition.sized.load(pointer, defaults: CFilterDefinition.defaults) }
        .mapError { $0 as? YDBError ?? YDBError(.error, String(describing: $0)) }
}

/// The slot of a definition's callback, also for a definition that was
/// refused: its destructor must still run exactly once.
private func filterSlot(for loaded: Result<CFilterDefinition, YDBError>, _ ctx: UnsafeMutableRawPointer?,
                        _ destroy: CDestructor?) -> FilterSlot {
    FilterSlot(FilterCallbacks(filter: try? loaded.get().filter, ctx: ctx, destroy: destroy))
}

/// The engine's filter for a C definition whose callback lives in `slot`,
/// and its version tag. `view` names the filtered view in messages.
private func makeFilter(_ definition: CFilterDefinition, view: String,
                        slot: FilterSlot) throws -> (filter: ViewFilter, versionTag: String) {
    guard definition.filter != nil else { throw YDBError(.invalidArgument, "filter callback is NULL") }
    let options = try invokeOptions(definition.invoke, "invoke")
    // The transaction form: the C callback gets the running transaction
    // as its `ydb_txn *`, as every view callback does.
    let filter = ViewFilter(flavour: try flavour(definition.flavour, "flavour"), options: options) {
        (transaction: ReadTransaction, group: String, row: ViewRow) in
        try callFilter(view, slot, transaction, group, row)
    }
    return (filter, try definition.versionTag.map { try string($0, "version_tag") } ?? "")
}

/// One call of a C filter. `*out_keep` starts at 0, so a callback that
/// never answers leaves the row out (as a grouping callback that never
/// names a group does); any nonzero answer keeps it.
private func callFilter(_ view: String, _ slot: FilterSlot, _ transaction: ReadTransaction, _ group: String,
                        _ row: ViewRow) throws -> Bool {
    guard let callbacks = slot.current, let filter = callbacks.filter else {
        throw YDBError(.callbackFailed, "view '\(view)': its filter was released")
    }
    var keep: Int32 = 0
    let status = withCallbackTxn(transaction) { txn in
        group.withCString { groupName in
            withCViewRow(row) { cRow in filter(callbacks.ctx, txn, groupName, cRow, &keep) }
        }
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': filter callback failed (returned \(status))")
    }
    return keep != 0
}

@_cdecl("ydb_filtered_view_register")
public func ydb_filtered_view_register(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                       _ parent: UnsafePointer<CChar>?, _ definitionPointer: UnsafeRawPointer?,
                                       _ ctx: UnsafeMutableRawPointer?, _ destroy: CDestructor?) -> Int32 {
    let definition = loadFilterDefinition(definitionPointer)
    let callbacks = filterSlot(for: definition, ctx, destroy)
    var handedOver = false
    let status = run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        let parentName = try string(parent, "parent view name")
        let made = try makeFilter(try definition.get(), view: viewName, slot: callbacks)
        var view = FilteredView(parent: parentName, filter: made.filter, versionTag: made.versionTag,
                                isPersistent: try definition.get().persistent != 0)
        view.releaseHook = ReleaseHook { callbacks.clear() }
        // From here the engine releases the callback (see ReleaseHook),
        // also when it refuses the registration.
        handedOver = true
        try database.database.registerFilteredView(view, name: viewName)
    }
    if !handedOver { callbacks.clear() }
    return status
}

@_cdecl("ydb_view_set_filter")
public func ydb_view_set_filter(_ txnHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                                _ destroy: CDestructor?) -> Int32 {
    let definition = loadFilterDefinition(definitionPointer)
    let callbacks = filterSlot(for: definition, ctx, destroy)
    var handedOver = false
    let status = run {
        let writer = try usableTxn(txnHandle).writer()
        let viewName = try string(name, "view name")
        let made = try makeFilter(try definition.get(), view: viewName, slot: callbacks)
        // From here the engine releases the callback: when the transaction
        // ends, unless a commit installed it (see ReleaseHook).
        handedOver = true
        try writer.setFilter(made.filter, versionTag: made.versionTag, forView: viewName,
                             releaseHook: ReleaseHook { callbacks.clear() })
    }
    if !handedOver { callbacks.clear() }
    return status
}

@_cdecl("ydb_txn_touch_rows")
public func ydb_txn_touch_rows(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                               _ keys: UnsafePointer<UnsafePointer<CChar>?>?, _ keyCount: UInt) -> Int32 {
    run {
        let transaction = try usableTxn(handle).writer()
        let collectionName = try string(collection, "collection")
        // Every key is checked before any row is touched (as removing does).
        try transaction.touchRows(forKeys: try keyNames(keys, keyCount), inCollection: collectionName)
    }
}

@_cdecl("ydb_txn_touch_group")
public func ydb_txn_touch_group(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                _ group: UnsafePointer<CChar>?) -> Int32 {
    run {
        let transaction = try usableTxn(handle).writer()
        let viewName = try string(view, "view name")
        try transaction.touchRows(inGroup: try string(group, "group"), ofView: viewName)
    }
}
