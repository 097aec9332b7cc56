// The C side of a view's batch callbacks (grouping_batch, sort_key_batch),
// which ydb_txn_set_objects calls once for all of its rows, and the
// ydb_group_batch_set / ydb_sort_key_batch_set answers.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

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

func callGroupingBatch(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
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

func callSortKeyBatch(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
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
