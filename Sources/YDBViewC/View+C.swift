// ydb_view_*: registering views with C callbacks, and querying them.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// Every view callback takes (ctx, txn, ...): txn is a read-only handle of
// the running transaction, registered for the call (`withCallbackTxn`).
public typealias CGroupingCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeRawPointer?,
                                                     OpaquePointer?) -> Int32
public typealias CSortingCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?,
                                                    UnsafeRawPointer?, UnsafeRawPointer?,
                                                    UnsafeMutablePointer<Int32>?) -> Int32
public typealias CSortKeyCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?,
                                                    UnsafeRawPointer?, OpaquePointer?) -> Int32
public typealias CGroupingBatchCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UInt,
                                                          UnsafePointer<UInt>?, UnsafeRawPointer?,
                                                          OpaquePointer?) -> Int32
public typealias CSortKeyBatchCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UInt,
                                                         UnsafePointer<UInt>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                                         UnsafeRawPointer?, OpaquePointer?) -> Int32
public typealias CFindCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeRawPointer?,
                                                 UnsafeMutablePointer<Int32>?) -> Int32
public typealias CViewKeyCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                                    UnsafePointer<CChar>?, UInt) -> Int32
public typealias CViewRowCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                                    UnsafePointer<CChar>?, UInt,
                                                    UnsafeRawPointer?, UInt, UnsafeRawPointer?, UInt) -> Int32

/// `ydb_view_row` (all fields pointer-sized, so Swift lays it out as C does).
struct CViewRow {
    var collection: UnsafePointer<CChar>?
    var key: UnsafePointer<CChar>?
    var object: UnsafeRawPointer?
    var objectSize: UInt
    var metadata: UnsafeRawPointer?
    var metadataSize: UInt
}

/// `ydb_view_definition`, field for field (natural alignment, as in C).
struct CViewDefinition {
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

    // A constant with C pointers (all NULL): never written.
    nonisolated(unsafe) static let defaults = CViewDefinition(
        groupingFlavour: ViewFlavour.row.rawValue, groupingInvoke: invokeDefault, grouping: nil,
        sortingFlavour: ViewFlavour.row.rawValue, sortingInvoke: invokeDefault, sorting: nil,
        versionTag: nil, persistent: 1, allowedCollections: nil, allowedCollectionCount: 0, sortKey: nil,
        groupingBatch: nil, sortKeyBatch: nil)
}

let invokeDefault: UInt32 = 256

// MARK: - Callbacks and their lifetime

/// A view's C callbacks with their ctx; the destructor runs when the last
/// reference goes (after `ViewSlot.clear()` and any call still running).
final class ViewCallbacks {
    let grouping: CGroupingCallback?
    let sorting: CSortingCallback?
    let sortKey: CSortKeyCallback?
    let groupingBatch: CGroupingBatchCallback?
    let sortKeyBatch: CSortKeyBatchCallback?
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(grouping: CGroupingCallback?, sorting: CSortingCallback?, sortKey: CSortKeyCallback?,
         groupingBatch: CGroupingBatchCallback? = nil, sortKeyBatch: CSortKeyBatchCallback? = nil,
         ctx: UnsafeMutableRawPointer?, destroy: CDestructor?) {
        self.grouping = grouping
        self.sorting = sorting
        self.sortKey = sortKey
        self.groupingBatch = groupingBatch
        self.sortKeyBatch = sortKeyBatch
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }
}

/// What the engine's closures hold: clearing it releases the callbacks at
/// once (deterministically), whatever the engine still references.
typealias ViewSlot = CallbackSlot<ViewCallbacks>

extension CallbackSlot where Callbacks == ViewCallbacks {
    func current(_ view: String) throws -> ViewCallbacks {
        guard let callbacks = current else {
            throw YDBError(.callbackFailed, "view '\(view)': its callbacks were released")
        }
        return callbacks
    }
}

/// Where a grouping callback writes its answer (`ydb_group_result`), kept
/// in its thread's state (`ThreadCallState.groupResult`) as a sort key is: a
/// population groups every row, and an object per call cost more than
/// the call. The handle is a per-call token checked against the call
/// running on this thread: a registry entry per call (a global lock and a
/// dictionary, twice) would cost more again.
struct GroupResult {
    /// 0 while no grouping callback runs on the thread.
    var token: UInt = 0
    var group: String?
    var failure: String?

    /// Runs `body` with a fresh result as the thread's current one (the
    /// outer one put back after); returns the result and body's status.
    static func run(on thread: ThreadCallState, _ body: (OpaquePointer?) -> Int32) -> (GroupResult, Int32) {
        let outer = thread.groupResult
        thread.groupResult = GroupResult(token: thread.nextCallToken(groupResultTag))
        let status = body(OpaquePointer(bitPattern: thread.groupResult.token))
        let result = thread.groupResult
        thread.groupResult = outer
        return (result, status)
    }

    /// The state of the thread whose running grouping call `handle` names.
    static func activeThread(_ handle: OpaquePointer?) throws -> ThreadCallState {
        guard let handle else { throw YDBError(.misuse, "group result handle is NULL") }
        guard let thread = currentCallState(create: false), thread.groupResult.token != 0,
              thread.groupResult.token == UInt(bitPattern: handle) else {
            throw YDBError(.misuse, "group result handle is not the one of a grouping callback running on this thread")
        }
        return thread
    }
}

/// The group a grouping callback names: the thread's last one again when
/// the bytes are the same (a population names every row's group, most of
/// them the one before), else checked and made anew.
private func groupName(_ pointer: UnsafePointer<CChar>?, on thread: ThreadCallState) throws -> String {
    guard let pointer else { throw YDBError(.invalidArgument, "group is NULL") }
    if let last = thread.lastGroupName, last.withCString({ strcmp($0, pointer) == 0 }) { return last }
    let name = try string(pointer, "group")
    thread.lastGroupName = name
    return name
}

/// The high bits of every group result token: never a registry token, a
/// sort-key token (0x5…), a callback transaction token (0x6…) or a small
/// integer.
let groupResultTag: UInt = 0x7000_0000_0000_0000

/// Empty blobs must reach C as non-NULL pointers (NULL means "not read").
// Never written or freed: shared freely.
nonisolated(unsafe) private let emptyBytes: UnsafeMutableRawPointer = .allocate(byteCount: 1, alignment: 1)

private func withBytes<T>(_ data: [UInt8]?, _ body: (UnsafeRawPointer?, UInt) throws -> T) rethrows -> T {
    guard let data else { return try body(nil, 0) }
    if data.isEmpty { return try body(UnsafeRawPointer(emptyBytes), 0) }
    return try data.withUnsafeBytes { try body($0.baseAddress, UInt($0.count)) }
}

/// Lends `row` to C as a `ydb_view_row` for the duration of `body`.
func withCViewRow<T>(_ row: ViewRow, _ body: (UnsafeRawPointer) throws -> T) rethrows -> T {
    try row.collection.withCString { collection in
        try row.key.withCString { key in
            try withBytes(row.object) { object, objectSize in
                try withBytes(row.metadata) { metadata, metadataSize in
                    var cRow = CViewRow(collection: collection, key: key, object: object, objectSize: objectSize,
                                        metadata: metadata, metadataSize: metadataSize)
                    return try withUnsafePointer(to: &cRow) { try body(UnsafeRawPointer($0)) }
                }
            }
        }
    }
}

/// Calls a view's C comparator on two rows in C form, lending
/// `transaction` as its `ydb_txn *`: a commit's comparisons
/// (`callSorting`) and a population's (`CPreparedRows`) alike.
private func callComparator(_ view: String, _ callbacks: ViewCallbacks, _ sorting: CSortingCallback,
                            _ transaction: ReadTransaction, _ group: UnsafePointer<CChar>,
                            _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) throws -> ViewOrder {
    try withCallbackTxn(transaction) { txn in try callComparator(view, callbacks, sorting, txn, group, lhs, rhs) }
}

/// `callComparator` with the transaction already lent as `txn`.
private func callComparator(_ view: String, _ callbacks: ViewCallbacks, _ sorting: CSortingCallback,
                            _ txn: OpaquePointer?, _ group: UnsafePointer<CChar>,
                            _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) throws -> ViewOrder {
    var result: Int32 = 0
    let status = sorting(callbacks.ctx, txn, group, lhs, rhs, &result)
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': sorting callback failed (returned \(status))")
    }
    return order(result)
}

/// Rows in C form (`ydb_view_row`) whose strings and bytes are copied into
/// blocks that never move and live as long as this object: a population's
/// rows (`CPreparedRows`) and a batch callback's (`withCBatch`).
final class CViewRowCopies {
    private var blocks: [UnsafeMutableRawPointer] = []
    private var free: UnsafeMutableRawPointer?
    private var freeBytes = 0
    /// The last collection copied: rows come collection by collection, and
    /// share one copy per run. Compared as bytes (two spellings of "é" are
    /// two collections).
    private var collection: (name: String, copy: UnsafePointer<CChar>)?
    private static let blockSize = 64 << 10

    deinit { for block in blocks { block.deallocate() } }   // CViewRow holds no references

    /// Room for `count` bytes at a multiple of `alignment`. A value larger
    /// than a block gets a block of its own.
    private func room(_ count: Int, alignment: Int) -> UnsafeMutableRawPointer {
        if let free {
            let padding = (alignment - Int(bitPattern: free) % alignment) % alignment
            if padding + count <= freeBytes {
                self.free = free + padding + count
                freeBytes -= padding + count
                return free + padding
            }
        }
        if count > Self.blockSize / 4 {
            let block = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            blocks.append(block)
            return block
        }
        let block = UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: 16)
        blocks.append(block)
        free = block + count
        freeBytes = Self.blockSize - count
        return block
    }

    /// `string` as a C string.
    func copy(_ string: String) -> UnsafePointer<CChar> {
        var contiguous = string
        return contiguous.withUTF8 { bytes in
            let start = room(bytes.count + 1, alignment: 1)
            if let base = bytes.baseAddress { start.copyMemory(from: base, byteCount: bytes.count) }
            start.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
            return UnsafePointer(start.assumingMemoryBound(to: CChar.self))
        }
    }

    /// Objects and metadata start at a multiple of 8, as malloc'd data would
    /// for the types a callback may read in place.
    private func copy(_ data: [UInt8]?) -> (UnsafeRawPointer?, UInt) {
        guard let data else { return (nil, 0) }
        if data.isEmpty { return (UnsafeRawPointer(emptyBytes), 0) }
        let start = room(data.count, alignment: 8)
        data.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return (UnsafeRawPointer(start), UInt(data.count))
    }

    /// `row` in C form, pointing at copies of its parts.
    func row(_ row: ViewRow) -> CViewRow {
        let collection: UnsafePointer<CChar>
        if let last = self.collection, last.name.utf8.elementsEqual(row.collection.utf8) {
            collection = last.copy
        } else {
            collection = copy(row.collection)
            self.collection = (row.collection, collection)
        }
        let (object, objectSize) = copy(row.object), (metadata, metadataSize) = copy(row.metadata)
        return CViewRow(collection: collection, key: copy(row.key), object: object, objectSize: objectSize,
                        metadata: metadata, metadataSize: metadataSize)
    }
}

/// A group's rows as `ydb_view_row`s, for a population's sort through a C
/// comparator: each row converted once, as the scan hands it over (a sort
/// compares each row about log2(n) times), and held only here. A row's
/// strings and bytes are copied into blocks that never move, so its
/// `ydb_view_row` can point at them from the start; the engine keeps no
/// copy of the rows (memory while populating).
final class CPreparedRows: PreparedRows {
    private let view: String
    private let slot: ViewSlot
    private var rows: [CViewRow] = []
    private let copies = CViewRowCopies()

    init(view: String, slot: ViewSlot) {
        self.view = view
        self.slot = slot
    }

    func append(_ row: ViewRow) { rows.append(copies.row(row)) }

    func sort(_ group: String,
              _ sort: (_ compare: (ReadTransaction, Int, Int) throws -> ViewOrder) throws -> Void) throws {
        let callbacks = try slot.current(view)   // held for the whole sort
        guard let sorting = callbacks.sorting else { return try sort { _, _, _ in .same } }
        let view = self.view
        try group.withCString { groupName in
            try rows.withUnsafeBufferPointer { cRows in
                try sort { transaction, a, b in
                    precondition(cRows.indices.contains(a) && cRows.indices.contains(b), "row position out of range")
                    return try callComparator(view, callbacks, sorting, transaction, groupName,
                                              cRows.baseAddress! + a, cRows.baseAddress! + b)
                }
            }
        }
    }
}

func order(_ value: Int32) -> ViewOrder {
    value < 0 ? .ascending : value == 0 ? .same : .descending
}

/// Lends C the engine's read-only handle `transaction` (a callback's) as a
/// `ydb_txn *` for the duration of `body`. The handle is a per-call token
/// checked against the call running on this thread (`usableTxn`), like a sort
/// key's: no registry entry per call — sorting calls run O(n log n) times — and
/// a handle kept past its call, or used on another thread, is YDB_MISUSE.
func withCallbackTxn<T>(_ transaction: ReadTransaction?, _ body: (OpaquePointer?) throws -> T) rethrows -> T {
    guard let transaction else { return try body(nil) }
    return try lendingCallbackTxns { thread in try body(lendCallbackTxn(transaction, on: thread)) }
}

/// Runs `body` with the calling thread's state, which `lendCallbackTxn`
/// lends transactions through, and then restores the transaction lent
/// before (`body` may run inside another callback's call).
private func lendingCallbackTxns<T>(_ body: (ThreadCallState) throws -> T) rethrows -> T {
    let thread = currentCallState(create: true)!
    let outer = thread.callbackTxn
    defer { thread.callbackTxn = outer }
    return try body(thread)
}

/// A fresh token for `transaction`, the call running on `thread` from now
/// on (the caller restores what it replaced): the one call's `ydb_txn *`.
private func lendCallbackTxn(_ transaction: ReadTransaction, on thread: ThreadCallState) -> OpaquePointer? {
    let token = thread.nextCallToken(callbackTxnTag)
    thread.callbackTxn = (token, transaction)
    return OpaquePointer(bitPattern: token)
}

/// The high bits of every callback transaction token: never a registry
/// token, a sort-key token (0x5…) or a small integer.
let callbackTxnTag: UInt = 0x6000_0000_0000_0000

private func callGrouping(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                          _ row: ViewRow) throws -> String? {
    let callbacks = try slot.current(view)
    guard let grouping = callbacks.grouping else { return nil }
    return try lendingCallbackTxns { thread in
        try groupRow(view, callbacks.ctx, grouping, lendCallbackTxn(transaction, on: thread), row, on: thread)
    }
}

/// A population's rows grouped by the one-row callback, a chunk at a time
/// (`ViewGrouping.populationBatch`): the callbacks and the thread's state
/// are looked up once a chunk, where `callGrouping` looks them up once a
/// row. Looked up once a row (with the engine's lending), the work around
/// the user's two callbacks was about a sixth of a sort-key population's
/// instructions; once a chunk took 5.7% off (callgrind, 200k rows). Each
/// call still gets a `ydb_txn *` of its own.
private func groupEach(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                       _ rows: [BatchedRow]) throws -> [String?] {
    let callbacks = try slot.current(view)
    guard let grouping = callbacks.grouping else { return rows.map { _ in nil } }
    return try lendingCallbackTxns { thread in
        try rows.map { batched in
            try groupRow(view, callbacks.ctx, grouping, lendCallbackTxn(transaction, on: thread), batched.row,
                         on: thread)
        }
    }
}

/// One call of a grouping callback, the transaction lent as `txn`.
private func groupRow(_ view: String, _ ctx: UnsafeMutableRawPointer?, _ grouping: CGroupingCallback,
                      _ txn: OpaquePointer?, _ row: ViewRow, on thread: ThreadCallState) throws -> String? {
    let (result, status) = GroupResult.run(on: thread) { handle in
        withCViewRow(row) { cRow in grouping(ctx, txn, cRow, handle) }
    }
    if let failure = result.failure {
        throw YDBError(.callbackFailed, "view '\(view)': grouping callback gave an invalid group: \(failure)")
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': grouping callback failed (returned \(status))")
    }
    return result.group
}

private func callSorting(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction, _ group: String,
                         _ lhs: ViewRow, _ rhs: ViewRow) throws -> ViewOrder {
    let callbacks = try slot.current(view)
    guard let sorting = callbacks.sorting else { return .same }
    return try group.withCString { groupName in
        try withCViewRow(lhs) { first in
            try withCViewRow(rhs) { second in
                try callComparator(view, callbacks, sorting, transaction, groupName, first, second)
            }
        }
    }
}

/// `ViewSorting.FixedComparator` for a C comparator: the placed row and
/// its group in C form once a placement, the other row of each comparison
/// as it comes (converting both rows each time cost about a third of a
/// comparison). The thread's state that lends the transaction is looked up
/// once too, but each comparison still gets a handle of its own: one kept
/// from an earlier comparison is expired, as the header says.
private func withFixedRow(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction, _ group: String,
                          _ row: ViewRow, _ body: ((ViewRow) throws -> ViewOrder) throws -> Void) throws {
    let callbacks = try slot.current(view)
    guard let sorting = callbacks.sorting else { return try body { _ in .same } }
    try lendingCallbackTxns { thread in
        try group.withCString { groupName in
            try withCViewRow(row) { fixed in
                try body { other in
                    let txn = lendCallbackTxn(transaction, on: thread)
                    return try withCViewRow(other) { second in
                        try callComparator(view, callbacks, sorting, txn, groupName, fixed, second)
                    }
                }
            }
        }
    }
}

private func callSortKey(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction, _ group: String,
                         _ row: ViewRow) throws -> SortKey {
    let callbacks = try slot.current(view)
    guard let sortKey = callbacks.sortKey else { throw YDBError(.callbackFailed, "view '\(view)': no sort_key callback") }
    return try lendingCallbackTxns { thread in
        try keyOfRow(view, callbacks.ctx, sortKey, lendCallbackTxn(transaction, on: thread), group, row, on: thread)
    }
}

/// `groupEach` for the sort_key callback (`ViewSorting.populationKeyBatch`).
private func keyEach(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                     _ rows: [BatchedRow]) throws -> [SortKey] {
    let callbacks = try slot.current(view)
    guard let sortKey = callbacks.sortKey else { throw YDBError(.callbackFailed, "view '\(view)': no sort_key callback") }
    return try lendingCallbackTxns { thread in
        try rows.map { batched in
            try keyOfRow(view, callbacks.ctx, sortKey, lendCallbackTxn(transaction, on: thread), batched.group,
                         batched.row, on: thread)
        }
    }
}

/// One call of a sort_key callback, the transaction lent as `txn`.
private func keyOfRow(_ view: String, _ ctx: UnsafeMutableRawPointer?, _ sortKey: CSortKeyCallback,
                      _ txn: OpaquePointer?, _ group: String, _ row: ViewRow, on thread: ThreadCallState) throws -> SortKey {
    let (key, failure, status) = SortKeyCall.run(on: thread) { handle in
        group.withCString { groupName in
            withCViewRow(row) { cRow in sortKey(ctx, txn, groupName, cRow, handle) }
        }
    }
    if let failure {
        throw YDBError(.callbackFailed, "view '\(view)': sort_key callback built an invalid key: \(failure)")
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': sort_key callback failed (returned \(status))")
    }
    return key
}

// MARK: - Batch callbacks (ydb_txn_set_objects)

/// Where a batch callback answers (`ydb_group_batch`, `ydb_sort_key_batch`):
/// like `GroupResult`, a per-call token in the thread's state, holding
/// the answers for the call's `count` rows once the callback gives them.
struct BatchAnswer {
    /// 0 while no batch callback runs on the thread.
    var token: UInt = 0
    var count = 0
    var groups: [String?]?
    var keys: [SortKey]?
    var failure: String?

    /// Runs `body` with a fresh answer for `count` rows as the thread's
    /// current one (the outer one put back after).
    static func run(count: Int, _ body: (OpaquePointer?) -> Int32) -> (BatchAnswer, Int32) {
        let thread = currentCallState(create: true)!
        let outer = thread.batchAnswer
        thread.batchAnswer = BatchAnswer(token: thread.nextCallToken(batchAnswerTag), count: count)
        let status = body(OpaquePointer(bitPattern: thread.batchAnswer.token))
        let answer = thread.batchAnswer
        thread.batchAnswer = outer
        return (answer, status)
    }

    /// The state of the thread whose running batch call `handle` names.
    static func activeThread(_ handle: OpaquePointer?, _ what: String) throws -> ThreadCallState {
        guard let handle else { throw YDBError(.misuse, "\(what) handle is NULL") }
        guard let thread = currentCallState(create: false), thread.batchAnswer.token != 0,
              thread.batchAnswer.token == UInt(bitPattern: handle) else {
            throw YDBError(.misuse, "\(what) handle is not the one of a batch callback running on this thread")
        }
        return thread
    }
}

/// The high bits of every batch answer token (see `groupResultTag`).
let batchAnswerTag: UInt = 0x4000_0000_0000_0000

/// Lends `rows` to C for the duration of `body`: their `ydb_view_row`s,
/// their positions in the batch and (with `groups`) their groups.
private func withCBatch<T>(_ rows: [BatchedRow], groups: Bool,
                           _ body: (UnsafeRawPointer, UnsafePointer<UInt>,
                                    UnsafePointer<UnsafePointer<CChar>?>?) throws -> T) rethrows -> T {
    let copies = CViewRowCopies()
    var cRows: [CViewRow] = []
    var indexes: [UInt] = []
    var cGroups: [UnsafePointer<CChar>?] = []
    cRows.reserveCapacity(rows.count)
    indexes.reserveCapacity(rows.count)
    // A run of rows in one group shares one copy of its name (a binding
    // then reads each name once).
    var lastGroup: (name: String, copy: UnsafePointer<CChar>)?
    for batched in rows {
        cRows.append(copies.row(batched.row))
        indexes.append(UInt(batched.index))
        guard groups else { continue }
        if lastGroup == nil || !lastGroup!.name.utf8.elementsEqual(batched.group.utf8) {
            lastGroup = (batched.group, copies.copy(batched.group))
        }
        cGroups.append(lastGroup!.copy)
    }
    return try withExtendedLifetime(copies) {
        try cRows.withUnsafeBufferPointer { cRows in
            try indexes.withUnsafeBufferPointer { indexes in
                try cGroups.withUnsafeBufferPointer { cGroups in
                    try body(UnsafeRawPointer(cRows.baseAddress!), indexes.baseAddress!,
                             groups ? cGroups.baseAddress : nil)
                }
            }
        }
    }
}

private func callGroupingBatch(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                               _ rows: [BatchedRow]) throws -> [String?] {
    let callbacks = try slot.current(view)
    guard let batch = callbacks.groupingBatch else { throw YDBError(.callbackFailed, "view '\(view)': no grouping_batch callback") }
    let answer = try callBatch(view, "grouping_batch", "gave an invalid group", transaction, rows, groups: false) {
        txn, count, indexes, _, cRows, handle in batch(callbacks.ctx, txn, count, indexes, cRows, handle)
    }
    // Never answering leaves every row out, as a grouping that never calls
    // ydb_group_result_set leaves its row out.
    return answer.groups ?? rows.map { _ in nil }
}

private func callSortKeyBatch(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                              _ rows: [BatchedRow]) throws -> [SortKey] {
    let callbacks = try slot.current(view)
    guard let batch = callbacks.sortKeyBatch else { throw YDBError(.callbackFailed, "view '\(view)': no sort_key_batch callback") }
    let answer = try callBatch(view, "sort_key_batch", "gave an invalid key", transaction, rows, groups: true) {
        txn, count, indexes, groups, cRows, handle in batch(callbacks.ctx, txn, count, indexes, groups, cRows, handle)
    }
    // Never answering gives every row the empty key, as a sort_key
    // callback that appends nothing does.
    return answer.keys ?? rows.map { _ in SortKey() }
}

/// Calls a batch callback (`call`, given the lent transaction, the row
/// count, the rows' positions, their groups when `groups`, the rows and
/// the answer handle) and returns its answer; a failure or a refused answer
/// throws, naming `name` and what `refused` means.
private func callBatch(_ view: String, _ name: String, _ refused: String, _ transaction: ReadTransaction,
                       _ rows: [BatchedRow], groups: Bool,
                       _ call: (OpaquePointer?, UInt, UnsafePointer<UInt>, UnsafePointer<UnsafePointer<CChar>?>?,
                                UnsafeRawPointer, OpaquePointer?) -> Int32) throws -> BatchAnswer {
    if rows.isEmpty { return BatchAnswer(groups: [], keys: []) }
    let (answer, status) = withCallbackTxn(transaction) { txn in
        withCBatch(rows, groups: groups) { cRows, indexes, cGroups in
            BatchAnswer.run(count: rows.count) { handle in
                call(txn, UInt(rows.count), indexes, cGroups, cRows, handle)
            }
        }
    }
    if let failure = answer.failure {
        throw YDBError(.callbackFailed, "view '\(view)': \(name) callback \(refused): \(failure)")
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': \(name) callback failed (returned \(status))")
    }
    return answer
}

@_cdecl("ydb_group_batch_set")
public func ydb_group_batch_set(_ handle: OpaquePointer?, _ names: UnsafePointer<UnsafePointer<CChar>?>?,
                                _ nameCount: UInt, _ choices: UnsafePointer<UInt>?) -> Int32 {
    run {
        let thread = try BatchAnswer.activeThread(handle, "group batch")
        do {
            guard let choices else { throw YDBError(.invalidArgument, "choices is NULL") }
            let tableSize = try count(nameCount, "name_count")
            if tableSize > 0 && names == nil { throw YDBError(.invalidArgument, "names is NULL but name_count is \(nameCount)") }
            // Each name checked once, however many rows choose it.
            var table: [String] = []
            table.reserveCapacity(tableSize)
            for index in 0..<tableSize { table.append(try groupName(names![index], on: thread)) }
            var answers: [String?] = []
            answers.reserveCapacity(thread.batchAnswer.count)
            for row in 0..<thread.batchAnswer.count {
                let choice = choices[row]
                if choice == UInt.max { answers.append(nil); continue }
                guard choice < UInt(tableSize) else {
                    throw YDBError(.invalidArgument, "choices[\(row)] is \(choice), past the \(tableSize) names")
                }
                answers.append(table[Int(choice)])
            }
            thread.batchAnswer.groups = answers
        } catch let error as YDBError {
            thread.batchAnswer.failure = error.message
            throw error
        }
    }
}

@_cdecl("ydb_sort_key_batch_set")
public func ydb_sort_key_batch_set(_ handle: OpaquePointer?, _ keys: UnsafeRawPointer?,
                                   _ sizes: UnsafePointer<UInt>?) -> Int32 {
    run {
        let thread = try BatchAnswer.activeThread(handle, "sort key batch")
        do {
            guard let sizes else { throw YDBError(.invalidArgument, "sizes is NULL") }
            var answers: [SortKey] = []
            answers.reserveCapacity(thread.batchAnswer.count)
            var offset = 0
            for index in 0..<thread.batchAnswer.count {
                let size = try count(sizes[index], "a key size")
                guard size > 0 else { answers.append(SortKey()); continue }
                guard let keys else { throw YDBError(.invalidArgument, "keys is NULL but key \(index) has \(size) bytes") }
                answers.append(SortKey(copying: UnsafeRawBufferPointer(start: keys + offset, count: size)))
                offset += size
            }
            thread.batchAnswer.keys = answers
        } catch let error as YDBError {
            thread.batchAnswer.failure = error.message
            throw error
        }
    }
}

// MARK: - Definitions from C

func flavour(_ value: Int32, _ what: String) throws -> ViewFlavour {
    guard let flavour = ViewFlavour(rawValue: value) else {
        throw YDBError(.invalidArgument, "\(what) \(value) is not a YDB_FLAVOUR_* value")
    }
    return flavour
}

private func invokeOptions(_ value: UInt32, _ what: String) throws -> InvokeOptions? {
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
    // A population calls the one-row forms (the header says so: a batch
    // callback may read its own arrays by index), a chunk at a time.
    var groupingBatch: ViewGrouping.Batch?
    if definition.groupingBatch != nil {
        groupingBatch = { txn, rows in try callGroupingBatch(name, slot, txn, rows) }
    }
    var keyBatch: ViewSorting.KeyBatch?
    if definition.sortKeyBatch != nil {
        keyBatch = { txn, rows in try callSortKeyBatch(name, slot, txn, rows) }
    }
    let grouping = ViewGrouping(flavour: try flavour(definition.groupingFlavour, "grouping_flavour"),
                                options: try invokeOptions(definition.groupingInvoke, "grouping_invoke"),
                                { txn, row in try callGrouping(name, slot, txn, row) }, batch: groupingBatch,
                                population: { txn, rows in try groupEach(name, slot, txn, rows) })
    let sortingFlavour = try flavour(definition.sortingFlavour, "sorting_flavour")
    let sortingOptions = try invokeOptions(definition.sortingInvoke, "sorting_invoke")
    let sorting = definition.sortKey != nil
        ? ViewSorting(flavour: sortingFlavour, options: sortingOptions, key: { txn, group, row in
            try callSortKey(name, slot, txn, group, row)
        }, batch: keyBatch, population: { txn, rows in try keyEach(name, slot, txn, rows) })
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
    view.releaseHook = ReleaseHook { slot.clear() }
    return view
}

func loadDefinition(_ pointer: UnsafeRawPointer?) -> CViewDefinition? {
    pointer?.loadUnaligned(as: CViewDefinition.self)
}

func slot(for definition: CViewDefinition?, _ ctx: UnsafeMutableRawPointer?,
                  _ destroy: CDestructor?) -> ViewSlot {
    ViewSlot(ViewCallbacks(grouping: definition?.grouping, sorting: definition?.sorting, sortKey: definition?.sortKey,
                           groupingBatch: definition?.groupingBatch, sortKeyBatch: definition?.sortKeyBatch,
                           ctx: ctx, destroy: destroy))
}

// MARK: - Registration

@_cdecl("ydb_view_definition_init")
public func ydb_view_definition_init(_ definition: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let out = try required(definition, "definition")
        out.storeBytes(of: CViewDefinition.defaults, as: CViewDefinition.self)
    }
}

@_cdecl("ydb_group_result_set")
public func ydb_group_result_set(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?) -> Int32 {
    run {
        let thread = try GroupResult.activeThread(handle)
        do {
            thread.groupResult.group = try groupName(group, on: thread)
        } catch let error as YDBError {
            thread.groupResult.failure = error.message
            throw error
        }
    }
}

@_cdecl("ydb_view_register")
public func ydb_view_register(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                              _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                              _ destroy: CDestructor?) -> Int32 {
    let definition = loadDefinition(definitionPointer)
    let callbacks = slot(for: definition, ctx, destroy)
    var handedOver = false
    let status = run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        guard let definition else { throw YDBError(.invalidArgument, "definition is NULL") }
        let view = try makeView(definition, name: viewName, slot: callbacks)
        // From here the engine releases the callbacks (see ReleaseHook).
        handedOver = true
        try database.database.registerView(view, name: viewName)
    }
    if !handedOver { callbacks.clear() }
    return status
}

@_cdecl("ydb_view_registration_outcome")
public func ydb_view_registration_outcome(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                          _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outOutcome, "out_outcome") {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        guard let outcome = database.database.registrationOutcome(ofView: viewName) else {
            throw YDBError(.notFound, "no view named '\(viewName)' is registered")
        }
        return outcome.rawValue
    }
}

@_cdecl("ydb_view_unregister")
public func ydb_view_unregister(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        try database.database.unregisterView(name: try string(name, "view name"))
    }
}

@_cdecl("ydb_view_enumerate_registered")
public func ydb_view_enumerate_registered(_ databaseHandle: OpaquePointer?, _ callback: CNameCallback?,
                                          _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        for name in database.database.registeredViewNames {
            if name.withCString({ callback(ctx, $0) }) != 0 { break }
        }
    }
}

@_cdecl("ydb_view_set_definition")
public func ydb_view_set_definition(_ txnHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                    _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                                    _ destroy: CDestructor?) -> Int32 {
    let definition = loadDefinition(definitionPointer)
    let callbacks = slot(for: definition, ctx, destroy)
    var handedOver = false
    let status = run {
        let writer = try usableTxn(txnHandle).writer()
        let viewName = try string(name, "view name")
        guard let definition else { throw YDBError(.invalidArgument, "definition is NULL") }
        let view = try makeView(definition, name: viewName, slot: callbacks)
        // From here the engine releases the callbacks: when the transaction
        // ends, unless a commit installed them (see ReleaseHook).
        handedOver = true
        try writer.setViewDefinition(name: viewName, grouping: view.grouping, sorting: view.sorting,
                                     versionTag: view.versionTag, releaseHook: view.releaseHook)
    }
    if !handedOver { callbacks.clear() }
    return status
}

// MARK: - Queries

/// Runs `body` on view `view` of transaction `handle`, refusing unknown views.
func withView<T>(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                 _ body: (ViewTransaction) throws -> T) throws -> T {
    try body(try usableTxn(handle).view(try string(view, "view name")))
}

func noRow(_ group: String, _ index: UInt) -> YDBError {
    YDBError(.notFound, "no row at index \(index) of group '\(group)'")
}

@_cdecl("ydb_view_is_registered")
public func ydb_view_is_registered(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                   _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try usableTxn(handle).hasView(try string(view, "view name")) ? 1 : 0 }
}

@_cdecl("ydb_view_version_tag")
public func ydb_view_version_tag(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                 _ outTag: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    answer(outTag, "out_tag") {
        let tag = try withView(handle, view) { try $0.versionTag }
        return try mallocString(tag)
    }
}

@_cdecl("ydb_view_group_count")
public func ydb_view_group_count(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                 _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { UInt(try withView(handle, view) { try $0.numberOfGroups() }) }
}

@_cdecl("ydb_view_enumerate_groups")
public func ydb_view_enumerate_groups(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                      _ callback: CNameCallback?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let groups = try withView(handle, view) { try $0.allGroups() }   // in byte order
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        for group in groups {
            if group.withCString({ callback(ctx, $0) }) != 0 { break }
        }
    }
}

@_cdecl("ydb_view_has_group")
public func ydb_view_has_group(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                               _ group: UnsafePointer<CChar>?, _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        let groupName = try string(group, "group")
        return try withView(handle, view) { try $0.hasGroup(groupName) } ? 1 : 0
    }
}

@_cdecl("ydb_view_count_in_group")
public func ydb_view_count_in_group(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                    _ group: UnsafePointer<CChar>?, _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") {
        let groupName = try string(group, "group")
        return UInt(try withView(handle, view) { try $0.numberOfItems(inGroup: groupName) })
    }
}

@_cdecl("ydb_view_count_all")
public func ydb_view_count_all(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                               _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { UInt(try withView(handle, view) { try $0.numberOfItemsInAllGroups() }) }
}

@_cdecl("ydb_view_is_empty")
public func ydb_view_is_empty(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                              _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try withView(handle, view) { try $0.isEmpty() } ? 1 : 0 }
}

private enum KeyPosition {
    case index(UInt), first, last
}

private func keyAt(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?, _ group: UnsafePointer<CChar>?,
                   _ position: KeyPosition,
                   _ outCollection: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                   _ outKey: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    answer(Out(outCollection, "out_collection"), Out(outKey, "out_key")) {
        let groupName = try string(group, "group")
        let rowKey = try withView(handle, view) { viewTransaction -> RowKey? in
            let count = try viewTransaction.numberOfItems(inGroup: groupName)
            let wanted: Int?
            switch position {
            case .index(let value): wanted = index(value)
            case .first: wanted = 0
            case .last: wanted = count - 1
            }
            guard let wanted, wanted >= 0, wanted < count else { return nil }
            return try viewTransaction.rowKey(at: wanted, inGroup: groupName)
        }
        guard let rowKey else {
            switch position {
            case .index(let value): throw noRow(groupName, value)
            case .first, .last: throw YDBError(.notFound, "group '\(groupName)' has no rows")
            }
        }
        return try mallocStrings(rowKey)
    }
}

@_cdecl("ydb_view_key_at")
public func ydb_view_key_at(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?, _ group: UnsafePointer<CChar>?,
                            _ position: UInt,
                            _ outCollection: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                            _ outKey: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    keyAt(handle, view, group, .index(position), outCollection, outKey)
}

@_cdecl("ydb_view_first_key")
public func ydb_view_first_key(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                               _ group: UnsafePointer<CChar>?,
                               _ outCollection: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                               _ outKey: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    keyAt(handle, view, group, .first, outCollection, outKey)
}

@_cdecl("ydb_view_last_key")
public func ydb_view_last_key(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                              _ group: UnsafePointer<CChar>?,
                              _ outCollection: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                              _ outKey: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    keyAt(handle, view, group, .last, outCollection, outKey)
}

/// The row at `position` of `group`, or a YDB_NOTFOUND error.
private func rowAt(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?, _ group: UnsafePointer<CChar>?,
                   _ position: UInt) throws -> (key: RowKey, object: [UInt8], metadata: [UInt8]?) {
    let groupName = try string(group, "group")
    let row = try withView(handle, view) { viewTransaction in
        try index(position).flatMap { try viewTransaction.row(at: $0, inGroup: groupName) }
    }
    guard let row else { throw noRow(groupName, position) }
    return row
}

@_cdecl("ydb_view_object_at")
public func ydb_view_object_at(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                               _ group: UnsafePointer<CChar>?, _ position: UInt,
                               _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outObject, "out_object"), Out(outSize, "out_size")) {
        let object = try rowAt(handle, view, group, position).object
        return (try mallocCopy(object), UInt(object.count))
    }
}

@_cdecl("ydb_view_metadata_at")
public func ydb_view_metadata_at(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                 _ group: UnsafePointer<CChar>?, _ position: UInt,
                                 _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                 _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outMetadata, "out_metadata"), Out(outSize, "out_size")) {
        let metadata = try found(try rowAt(handle, view, group, position).metadata,
                                 "the row at index \(position) has no metadata")
        return (try mallocCopy(metadata), UInt(metadata.count))
    }
}

@_cdecl("ydb_view_row_at")
public func ydb_view_row_at(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                            _ group: UnsafePointer<CChar>?, _ position: UInt,
                            _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ outObjectSize: UnsafeMutablePointer<UInt>?,
                            _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ outMetadataSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    run {
        let outputs = try RowOutputs(outObject, outObjectSize, outMetadata, outMetadataSize)
        let row = try rowAt(handle, view, group, position)
        try outputs.store(row.object, row.metadata)
    }
}

@_cdecl("ydb_view_position")
public func ydb_view_position(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                              _ collection: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
                              _ outGroup: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                              _ outIndex: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outGroup, "out_group"), Out(outIndex, "out_index")) {
        let collectionName = try string(collection, "collection")
        let keyName = try string(key, "key")
        let position = try found(try withView(handle, view) { try $0.position(forKey: keyName, inCollection: collectionName) },
                                 "the view does not hold key \"\(keyName)\" of collection \"\(collectionName)\"")
        return (try mallocString(position.group), UInt(position.index))
    }
}

/// [start, end) as a Swift range, or nil for the whole group.
private func indexRange(_ start: UInt, _ end: UInt) throws -> Range<Int> {
    let endOfGroup = UInt.max
    guard end == endOfGroup || start <= end else {
        throw YDBError(.invalidArgument, "start \(start) is after end \(end)")
    }
    let lower = Int(exactly: start) ?? Int.max
    let upper = end == endOfGroup ? Int.max : (Int(exactly: end) ?? Int.max)
    return lower ..< upper
}

@_cdecl("ydb_view_enumerate_keys")
public func ydb_view_enumerate_keys(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                    _ group: UnsafePointer<CChar>?, _ start: UInt, _ end: UInt, _ reverse: Int32,
                                    _ callback: CViewKeyCallback?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let groupName = try string(group, "group")
        let range = try indexRange(start, end)
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        try withView(handle, view) { viewTransaction in
            try viewTransaction.enumerateKeys(inGroup: groupName, range: range, reverse: reverse != 0) { rowKey, position, stop in
                let result = rowKey.collection.withCString { collection in
                    rowKey.key.withCString { key in callback(ctx, collection, key, UInt(position)) }
                }
                stop = result != 0
            }
        }
    }
}

@_cdecl("ydb_view_enumerate_rows")
public func ydb_view_enumerate_rows(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                    _ group: UnsafePointer<CChar>?, _ start: UInt, _ end: UInt, _ reverse: Int32,
                                    _ callback: CViewRowCallback?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let groupName = try string(group, "group")
        let range = try indexRange(start, end)
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        try withView(handle, view) { viewTransaction in
            try viewTransaction.enumerateRows(inGroup: groupName, range: range,
                                              reverse: reverse != 0) { rowKey, object, metadata, position, stop in
                let result = rowKey.collection.withCString { collection in
                    rowKey.key.withCString { key in
                        object.withUnsafeBytes { objectBytes in
                            withBytes(metadata) { metadataPointer, metadataSize in
                                callback(ctx, collection, key, UInt(position),
                                         objectBytes.baseAddress, UInt(objectBytes.count),
                                         metadataPointer, metadataSize)
                            }
                        }
                    }
                }
                stop = result != 0
            }
        }
    }
}

/// Rows packed for `ydb_view_read_rows`: per row a header of four 32-bit
/// native-endian sizes (collection, key, object, metadata or -1), then the
/// bytes.
@_cdecl("ydb_view_read_rows")
public func ydb_view_read_rows(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                               _ group: UnsafePointer<CChar>?, _ start: UInt, _ end: UInt, _ reverse: Int32,
                               _ outBuffer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ outSize: UnsafeMutablePointer<UInt>?, _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outBuffer, "out_buffer"), Out(outSize, "out_size"), Out(outCount, "out_count")) {
        let groupName = try string(group, "group")
        let range = try indexRange(start, end)
        let rows = try withView(handle, view) {
            try $0.rows(inGroup: groupName, range: range, reverse: reverse != 0)
        }
        // Sized first, then filled in place: one allocation for the lot.
        let header = 4 * MemoryLayout<Int32>.size
        var size = 0
        for row in rows {
            size += header + row.key.collection.utf8.count + row.key.key.utf8.count + row.object.count
                + (row.metadata?.count ?? 0)
        }
        guard let buffer = malloc(max(size, 1)) else { throw YDBError(.error, "out of memory (\(size) bytes)") }
        var offset = 0
        func put(_ value: Int32) {
            buffer.storeBytes(of: value, toByteOffset: offset, as: Int32.self)
            offset += MemoryLayout<Int32>.size
        }
        func put<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
            let target = UnsafeMutableRawBufferPointer(start: buffer + offset, count: bytes.count)
            _ = target.initializeMemory(as: UInt8.self, from: bytes)
            offset += bytes.count
        }
        for row in rows {
            put(Int32(row.key.collection.utf8.count))
            put(Int32(row.key.key.utf8.count))
            put(Int32(row.object.count))
            put(row.metadata.map { Int32($0.count) } ?? -1)
            put(row.key.collection.utf8)
            put(row.key.key.utf8)
            put(row.object)
            if let metadata = row.metadata { put(metadata) }
        }
        return (buffer, UInt(size), UInt(rows.count))
    }
}

@_cdecl("ydb_view_find")
public func ydb_view_find(_ handle: OpaquePointer?, _ view: UnsafePointer<CChar>?, _ group: UnsafePointer<CChar>?,
                          _ findFlavour: Int32, _ callback: CFindCallback?, _ ctx: UnsafeMutableRawPointer?,
                          _ outStart: UnsafeMutablePointer<UInt>?, _ outEnd: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outStart, "out_start"), Out(outEnd, "out_end")) {
        let groupName = try string(group, "group")
        guard let callback else { throw YDBError(.invalidArgument, "find callback is NULL") }
        let find = ViewFind(flavour: try flavour(findFlavour, "flavour")) { txn, row in
            var result: Int32 = 0
            let status = withCallbackTxn(txn) { txnHandle in
                withCViewRow(row) { cRow in callback(ctx, txnHandle, cRow, &result) }
            }
            if status != 0 { throw YDBError(.callbackFailed, "find callback failed (returned \(status))") }
            return order(result)
        }
        let range = try found(try withView(handle, view) { try $0.find(inGroup: groupName, using: find) },
                              "no row of group '\(groupName)' matches")
        return (UInt(range.lowerBound), UInt(range.upperBound))
    }
}

// MARK: - Changes in notifications

private func notifications(_ handle: OpaquePointer?) throws -> [CommitNotification] {
    try lookup(handle, NotificationListBox.self, "notification list").notifications
}

@_cdecl("ydb_view_has_changes")
public func ydb_view_has_changes(_ list: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                 _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        let items = try notifications(list)
        return items.hasChanges(forView: try string(view, "view name")) ? 1 : 0
    }
}

@_cdecl("ydb_view_has_changes_in_group")
public func ydb_view_has_changes_in_group(_ list: OpaquePointer?, _ view: UnsafePointer<CChar>?,
                                          _ group: UnsafePointer<CChar>?,
                                          _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        let items = try notifications(list)
        let viewName = try string(view, "view name")
        return items.hasChanges(forGroup: try string(group, "group"), inView: viewName) ? 1 : 0
    }
}
