// ydb_fts_*: full-text indexes (docs/full-text-index.md) -- their
// definition as C passes it, the extract callback and the columns result
// it fills, registration, and the queries on a transaction.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

public typealias CFTSExtractCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeRawPointer?,
                                                       OpaquePointer?) -> Int32
public typealias CFTSMatchCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                                     UnsafePointer<CChar>?, Double) -> Int32

// MARK: - The definition

/// `ydb_fts_index_definition`, field for field (natural alignment, as in C).
struct CFTSIndexDefinition {
    var structSize: UInt
    var columns: UnsafePointer<UnsafePointer<CChar>?>?
    var columnCount: UInt
    var extract: CFTSExtractCallback?
    var extractFlavour: Int32
    var extractInvoke: UInt32
    var versionTag: UnsafePointer<CChar>?
    var allowedCollections: UnsafePointer<UnsafePointer<CChar>?>?
    var allowedCollectionCount: UInt
    var tokenizer: UnsafePointer<CChar>?

    // A constant with C pointers (all NULL): never written.
    nonisolated(unsafe) static let defaults = CFTSIndexDefinition(
        structSize: UInt(MemoryLayout<CFTSIndexDefinition>.stride), columns: nil, columnCount: 0, extract: nil,
        extractFlavour: ViewFlavour.row.rawValue, extractInvoke: invokeDefault, versionTag: nil,
        allowedCollections: nil, allowedCollectionCount: 0, tokenizer: nil)

    /// The first version is this one: every member up to the tokenizer.
    static let sized = SizedStruct<CFTSIndexDefinition>(
        name: "ydb_fts_index_definition", initMacro: "YDB_FTS_INDEX_DEFINITION_INIT",
        minimumSize: MemoryLayout<CFTSIndexDefinition>.offset(of: \.tokenizer)! + MemoryLayout<UInt>.size)
}

/// An index's C callback with its ctx; the destructor runs when the last
/// reference goes (after `FTSSlot.clear()` and any call still running).
final class FTSCallbacks {
    let extract: CFTSExtractCallback?
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(extract: CFTSExtractCallback?, ctx: UnsafeMutableRawPointer?, destroy: CDestructor?) {
        self.extract = extract
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }
}

typealias FTSSlot = CallbackSlot<FTSCallbacks>

/// The caller's definition, read as far as its struct_size says.
private func loadFTSDefinition(_ pointer: UnsafeRawPointer?) -> Result<CFTSIndexDefinition, YDBError> {
    guard let pointer else { return .failure(YDBError(.invalidArgument, "definition is NULL")) }
    return Result { try CFTSIndexDefinition.sized.load(pointer, defaults: CFTSIndexDefinition.defaults) }
        .mapError { $0 as? YDBError ?? YDBError(.error, String(describing: $0)) }
}

/// `total` C strings at `names` (NULL with a count of 0: none); `what`
/// and `counted` name the two members in messages.
private func strings(_ names: UnsafePointer<UnsafePointer<CChar>?>?, _ total: UInt, _ what: String,
                     counted: String) throws -> [String]? {
    guard let names else {
        if total == 0 { return nil }
        throw YDBError(.invalidArgument, "\(what) is NULL but \(counted) is \(total)")
    }
    return try (0 ..< count(total, counted)).map { try string(names[$0], "\(what)[\($0)]") }
}

/// The engine's index for a C definition whose callback lives in `slot`.
private func makeFullTextIndex(_ definition: CFTSIndexDefinition, name: String, slot: FTSSlot) throws -> FullTextIndex {
    guard definition.extract != nil else { throw YDBError(.invalidArgument, "extract callback is NULL") }
    let columns = try strings(definition.columns, definition.columnCount, "columns", counted: "column_count") ?? []
    let allowed = try strings(definition.allowedCollections, definition.allowedCollectionCount, "allowed_collections",
                              counted: "allowed_collection_count")
    let tag = try definition.versionTag.map { try string($0, "version_tag") } ?? ""
    let tokenizer = try definition.tokenizer.map { try string($0, "tokenizer") } ?? FullTextIndex.defaultTokenizer
    var index = FullTextIndex(columns: columns, flavour: try flavour(definition.extractFlavour, "extract_flavour"),
                              options: try invokeOptions(definition.extractInvoke, "extract_invoke"),
                              versionTag: tag, allowedCollections: allowed, tokenizer: tokenizer) { txn, row in
        try callExtract(name, slot, columns, txn, row)
    }
    index.releaseHook = ReleaseHook { slot.clear() }
    return index
}

// MARK: - The extract callback and its columns result

/// The text one extract callback is giving (`ydb_fts_columns`): one slot
/// per column. Its handle is a number matched against the call running on
/// the calling thread, as a sort key's is (`SortKeyCall`): a handle kept
/// past its callback, or used on another thread, matches nothing.
struct ColumnsCall {
    /// 0 while no extract callback runs on the thread.
    var token: UInt = 0
    var texts: [String?] = []
    /// The first text refused: it fails the callback whatever it returns.
    var failure: String?

    /// Runs `body` with a fresh call as the thread's current one (the
    /// outer one put back after); returns the call and body's status.
    static func run(columns: Int, _ body: (OpaquePointer?) -> Int32) -> (ColumnsCall, Int32) {
        let thread = ColumnsCalls.ofThisThread(create: true)!
        let outer = thread.current
        thread.current = ColumnsCall(token: currentCallState(create: true)!.nextCallToken(ftsColumnsTag),
                                     texts: Array(repeating: nil, count: columns))
        let status = body(OpaquePointer(bitPattern: thread.current.token))
        let call = thread.current
        thread.current = outer
        return (call, status)
    }
}

/// The high bits of every columns token: never a registry token, another
/// per-call token (0x4… to 0x7…) or a small integer.
let ftsColumnsTag: UInt = 0x3000_0000_0000_0000

/// Where a thread keeps its running extract call: a thread-local of its
/// own (the shared `ThreadCallState` holds the view callbacks' calls),
/// released when the thread exits.
final class ColumnsCalls {
    var current = ColumnsCall()

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<ColumnsCalls>.fromOpaque(pointer).release() }
        }
        return key
    }()

    static func ofThisThread(create: Bool) -> ColumnsCalls? {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ColumnsCalls>.fromOpaque(pointer).takeUnretainedValue()
        }
        guard create else { return nil }
        let calls = ColumnsCalls()
        pthread_setspecific(key, Unmanaged.passRetained(calls).toOpaque())
        return calls
    }
}

/// One call of an index's extract callback, the transaction lent as a
/// `ydb_txn *` and the row as a `ydb_view_row`, as a grouping callback
/// gets them. No column set: the row is left out.
private func callExtract(_ index: String, _ slot: FTSSlot, _ columns: [String], _ transaction: ReadTransaction,
                         _ row: ViewRow) throws -> [String: String]? {
    guard let callbacks = slot.current else {
        throw YDBError(.callbackFailed, "full-text index '\(index)': its callbacks were released")
    }
    guard let extract = callbacks.extract else { return nil }
    let (call, status) = ColumnsCall.run(columns: columns.count) { handle in
        withCallbackTxn(transaction) { txn in
            withCViewRow(row) { cRow in extract(callbacks.ctx, txn, cRow, handle) }
        }
    }
    if let failure = call.failure {
        throw YDBError(.callbackFailed, "full-text index '\(index)': extract callback gave invalid text: \(failure)")
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "full-text index '\(index)': extract callback failed (returned \(status))")
    }
    var texts: [String: String] = [:]
    for (column, text) in zip(columns, call.texts) { if let text { texts[column] = text } }
    return texts
}

@_cdecl("ydb_fts_columns_set")
public func ydb_fts_columns_set(_ handle: OpaquePointer?, _ column: UInt, _ text: UnsafePointer<CChar>?,
                                _ length: UInt) -> Int32 {
    run {
        guard let handle else { throw YDBError(.misuse, "full-text columns handle is NULL") }
        guard let thread = ColumnsCalls.ofThisThread(create: false), thread.current.token != 0,
              thread.current.token == UInt(bitPattern: handle) else {
            throw YDBError(.misuse, "full-text columns handle is not the one of an extract callback running on this thread")
        }
        do {
            let total = thread.current.texts.count
            guard let position = index(column), position < total else {
                throw YDBError(.invalidArgument, "column \(column) is past the last column (the index has \(total))")
            }
            thread.current.texts[position] = try columnText(text, length)
        } catch let error as YDBError {
            if thread.current.failure == nil { thread.current.failure = error.message }
            throw error
        }
    }
}

/// `length` bytes of UTF-8 at `text`, checked: no NUL (it could not come
/// back out through a snippet), nothing but UTF-8.
private func columnText(_ text: UnsafePointer<CChar>?, _ length: UInt) throws -> String {
    let size = try count(length, "length")
    guard let text else {
        if size == 0 { return "" }
        throw YDBError(.invalidArgument, "text is NULL but its length is \(length)")
    }
    let bytes = UnsafeRawBufferPointer(start: text, count: size)
    guard let value = String(validating: bytes, as: UTF8.self) else {
        throw YDBError(.invalidArgument, "text is not valid UTF-8")
    }
    if bytes.contains(0) { throw YDBError(.invalidArgument, "text contains a NUL character") }
    return value
}

// MARK: - Registration

@_cdecl("ydb_fts_index_definition_init")
public func ydb_fts_index_definition_init(_ definition: UnsafeMutableRawPointer?) -> Int32 {
    run {
        // The whole struct as this library knows it (the header says so).
        let out = try required(definition, "definition")
        out.storeBytes(of: CFTSIndexDefinition.defaults, as: CFTSIndexDefinition.self)
    }
}

@_cdecl("ydb_fts_index_register")
public func ydb_fts_index_register(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                   _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                                   _ destroy: CDestructor?, _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    let definition = loadFTSDefinition(definitionPointer)
    // Made also for a refused definition: its destructor must run once.
    let callbacks = FTSSlot(FTSCallbacks(extract: try? definition.get().extract, ctx: ctx, destroy: destroy))
    outOutcome?.pointee = 0
    var handedOver = false
    let status = run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let indexName = try string(name, "full-text index name")
        let index = try makeFullTextIndex(try definition.get(), name: indexName, slot: callbacks)
        // From here the engine releases the callback (see ReleaseHook).
        handedOver = true
        let outcome = try database.database.registerFullTextIndex(index, name: indexName)
        outOutcome?.pointee = outcome.rawValue
    }
    if !handedOver { callbacks.clear() }
    return status
}

@_cdecl("ydb_fts_index_unregister")
public func ydb_fts_index_unregister(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        try database.database.unregisterFullTextIndex(name: try string(name, "full-text index name"))
    }
}

@_cdecl("ydb_fts_index_enumerate_registered")
public func ydb_fts_index_enumerate_registered(_ databaseHandle: OpaquePointer?, _ callback: CNameCallback?,
                                               _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        for name in database.database.registeredFullTextIndexNames {
            if name.withCString({ callback(ctx, $0) }) != 0 { break }
        }
    }
}

// MARK: - Queries

@_cdecl("ydb_txn_search")
public func ydb_txn_search(_ txnHandle: OpaquePointer?, _ index: UnsafePointer<CChar>?, _ query: UnsafePointer<CChar>?,
                           _ limit: UInt, _ callback: CFTSMatchCallback?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let transaction = try usableTxn(txnHandle)
        let indexName = try string(index, "full-text index name")
        let queryText = try string(query, "query")
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        // 0 is no limit, and so is one past what any index holds.
        let most = limit == 0 ? nil : Int(exactly: limit)
        try transaction.enumerateSearchMatches(index: indexName, query: queryText, limit: most) { match, stop in
            let status = match.collection.withCString { collection in
                match.key.withCString { key in callback(ctx, collection, key, match.rank) }
            }
            if status != 0 { stop = true }
        }
    }
}

@_cdecl("ydb_txn_search_snippet")
public func ydb_txn_search_snippet(_ txnHandle: OpaquePointer?, _ index: UnsafePointer<CChar>?,
                                   _ query: UnsafePointer<CChar>?, _ collection: UnsafePointer<CChar>?,
                                   _ key: UnsafePointer<CChar>?, _ column: UnsafePointer<CChar>?,
                                   _ before: UnsafePointer<CChar>?, _ after: UnsafePointer<CChar>?,
                                   _ ellipsis: UnsafePointer<CChar>?, _ tokens: Int32,
                                   _ outSnippet: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    answer(outSnippet, "out_snippet") {
        let transaction = try usableTxn(txnHandle)
        let indexName = try string(index, "full-text index name")
        let queryText = try string(query, "query")
        let collectionName = try string(collection, "collection")
        let keyName = try string(key, "key")
        // Optional texts: NULL is the empty string (a column: the best one).
        func optional(_ text: UnsafePointer<CChar>?, _ what: String) throws -> String? {
            try text.map { try string($0, what) }
        }
        let snippet = try transaction.snippet(
            index: indexName, query: queryText, forKey: keyName, inCollection: collectionName,
            column: try optional(column, "column"), before: try optional(before, "before") ?? "",
            after: try optional(after, "after") ?? "", ellipsis: try optional(ellipsis, "ellipsis") ?? "",
            tokens: Int(tokens))
        let found = try found(snippet, "no row \"\(keyName)\" in collection \"\(collectionName)\" matches \"\(queryText)\"")
        return try mallocString(found)
    }
}
