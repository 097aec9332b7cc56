// ydb_txn_*: beginning and finishing transactions, reading and writing rows.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

public typealias CNameCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Int32
public typealias CRowCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                         UnsafeRawPointer?, UInt, UnsafeRawPointer?, UInt) -> Int32

/// A transaction handle is the engine's transaction itself: every rule
/// (re-entry from callbacks, ending, a second writer, a callback's
/// read-only handle) is the engine's.
func usableTxn(_ handle: OpaquePointer?) throws -> ReadTransaction {
    if let handle, UInt(bitPattern: handle) & 0xF000_0000_0000_0000 == callbackTxnTag {
        // A handle a view callback received: only its own call may use it.
        guard let call = currentCallState(create: false)?.callbackTxn,
              call.token == UInt(bitPattern: handle) else {
            throw YDBError(.misuse, "the transaction handle a callback received is valid only during that call, on its thread")
        }
        return call.transaction
    }
    return try lookup(handle, ReadTransaction.self, "transaction")
}

private func writer(_ transaction: ReadTransaction) throws -> ReadWriteTransaction {
    try transaction.writer()
}

private func begin(_ connectionHandle: OpaquePointer?, _ outTxn: UnsafeMutablePointer<OpaquePointer?>?,
                   _ make: (Connection) throws -> ReadTransaction) -> Int32 {
    answer(outTxn, "out_txn") { registry.register(try make(try usableConnection(connectionHandle))) }
}

@_cdecl("ydb_txn_begin_read")
public func ydb_txn_begin_read(_ connection: OpaquePointer?,
                               _ outTxn: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    begin(connection, outTxn) { try $0.beginReadTransaction() }
}

@_cdecl("ydb_txn_begin_read_write")
public func ydb_txn_begin_read_write(_ connection: OpaquePointer?,
                                     _ outTxn: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    begin(connection, outTxn) { try $0.beginReadWriteTransaction() }
}

@_cdecl("ydb_txn_commit")
public func ydb_txn_commit(_ handle: OpaquePointer?) -> Int32 {
    run {
        let transaction = try writer(try usableTxn(handle))
        // A refused commit (from inside its own callbacks) leaves the
        // transaction open; any other failure has rolled it back.
        defer { if transaction.hasEnded { registry.unregister(handle) } }
        try transaction.commit()
    }
}

private func finish(_ handle: OpaquePointer?) -> Int32 {
    run {
        guard handle != nil else { return }
        try usableTxn(handle).endRefusingCallbacks()
        registry.unregister(handle)
    }
}

@_cdecl("ydb_txn_rollback")
public func ydb_txn_rollback(_ handle: OpaquePointer?) -> Int32 { finish(handle) }

@_cdecl("ydb_txn_end")
public func ydb_txn_end(_ handle: OpaquePointer?) -> Int32 { finish(handle) }

@_cdecl("ydb_txn_snapshot")
public func ydb_txn_snapshot(_ handle: OpaquePointer?, _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outSnapshot, "out_snapshot") { try usableTxn(handle).snapshot }
}

@_cdecl("ydb_txn_is_read_write")
public func ydb_txn_is_read_write(_ handle: OpaquePointer?, _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try usableTxn(handle) is ReadWriteTransaction ? 1 : 0 }
}

// MARK: - Reading

/// An owned copy of a row's object or metadata, or YDB_NOTFOUND.
/// The object or metadata of a row, copied once, straight from SQLite's
/// bytes into the caller's buffer (a large value is never held twice more).
private func getBlob(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
                     _ outData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                     _ outSize: UnsafeMutablePointer<UInt>?, _ part: RowPart) -> Int32 {
    let what = part == .object ? "object" : "metadata"
    return answer(Out(outData, "out_\(what)"), Out(outSize, "out_size")) {
        let txn = try usableTxn(handle)
        let collectionName = try string(collection, "collection")
        let keyName = try string(key, "key")
        let copy = try txn.withValue(part, forKey: keyName, inCollection: collectionName) { bytes in
            try bytes.map { (try mallocCopy($0), UInt($0.count)) }
        }
        return try found(copy, "no \(what) for key \"\(keyName)\" in collection \"\(collectionName)\"")
    }
}

@_cdecl("ydb_txn_get_object")
public func ydb_txn_get_object(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                               _ key: UnsafePointer<CChar>?,
                               _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    getBlob(handle, collection, key, outObject, outSize, .object)
}

@_cdecl("ydb_txn_get_metadata")
public func ydb_txn_get_metadata(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                 _ key: UnsafePointer<CChar>?,
                                 _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                 _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    getBlob(handle, collection, key, outMetadata, outSize, .metadata)
}

@_cdecl("ydb_txn_get_row")
public func ydb_txn_get_row(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                            _ key: UnsafePointer<CChar>?,
                            _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ outObjectSize: UnsafeMutablePointer<UInt>?,
                            _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ outMetadataSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    ydb_txn_get_row_hinted(handle, collection, key, 0, outObject, outObjectSize, outMetadata, outMetadataSize)
}

@_cdecl("ydb_txn_get_row_hinted")
public func ydb_txn_get_row_hinted(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                   _ key: UnsafePointer<CChar>?, _ rowidHint: Int64,
                                   _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                   _ outObjectSize: UnsafeMutablePointer<UInt>?,
                                   _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                   _ outMetadataSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    run {
        let outputs = try RowOutputs(outObject, outObjectSize, outMetadata, outMetadataSize)
        let txn = try usableTxn(handle)
        let collectionName = try string(collection, "collection")
        let keyName = try string(key, "key")
        guard let row = try txn.row(forKey: keyName, inCollection: collectionName, rowidHint: rowidHint) else {
            throw YDBError(.notFound, "no row for key \"\(keyName)\" in collection \"\(collectionName)\"")
        }
        try outputs.store(row.object, row.metadata)
    }
}

@_cdecl("ydb_txn_exists")
public func ydb_txn_exists(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                           _ key: UnsafePointer<CChar>?, _ outExists: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outExists, "out_exists") {
        try usableTxn(handle).exists(key: try string(key, "key"), inCollection: try string(collection, "collection")) ? 1 : 0
    }
}

@_cdecl("ydb_txn_count")
public func ydb_txn_count(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                          _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { UInt(try usableTxn(handle).count(inCollection: try string(collection, "collection"))) }
}

@_cdecl("ydb_txn_count_all")
public func ydb_txn_count_all(_ handle: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { UInt(try usableTxn(handle).countAll()) }
}

@_cdecl("ydb_txn_enumerate_collections")
public func ydb_txn_enumerate_collections(_ handle: OpaquePointer?, _ callback: CNameCallback?,
                                          _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let transaction = try usableTxn(handle)
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        try transaction.enumerateCollections { name, stop in
            stop = name.withCString { callback(ctx, $0) } != 0
        }
    }
}

@_cdecl("ydb_txn_enumerate_keys")
public func ydb_txn_enumerate_keys(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                   _ callback: CNameCallback?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let transaction = try usableTxn(handle)
        let collectionName = try string(collection, "collection")
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        try transaction.enumerateKeys(inCollection: collectionName) { key, stop in
            stop = key.withCString { callback(ctx, $0) } != 0
        }
    }
}

@_cdecl("ydb_txn_enumerate_rows")
public func ydb_txn_enumerate_rows(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                   _ callback: CRowCallback?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let transaction = try usableTxn(handle)
        let collectionName = try string(collection, "collection")
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        try transaction.enumerateRows(inCollection: collectionName) { key, object, metadata, stop in
            let result = key.withCString { keyPointer in
                object.withUnsafeBytes { objectBytes in
                    withOptionalBytes(metadata) { metadataBytes in
                        callback(ctx, keyPointer, objectBytes.baseAddress, UInt(objectBytes.count),
                                 metadataBytes?.baseAddress, UInt(metadataBytes?.count ?? 0))
                    }
                }
            }
            stop = result != 0
        }
    }
}

/// Empty metadata must still reach C as a non-NULL pointer (NULL means none).
// Immutable after initialisation: never written, so shared freely.
nonisolated(unsafe) private let emptyBlobSentinel: UnsafeMutableRawPointer = .allocate(byteCount: 1, alignment: 1)

private func withOptionalBytes<T>(_ data: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
    guard let data else { return body(nil) }
    if data.isEmpty { return body(UnsafeRawBufferPointer(start: emptyBlobSentinel, count: 0)) }
    return data.withUnsafeBytes { body($0) }
}

// MARK: - Writing

/// Runs one write on a read-write transaction with validated names.
private func write(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
                   _ body: (ReadWriteTransaction, String, String) throws -> Void) -> Int32 {
    run {
        let transaction = try writer(try usableTxn(handle))
        try body(transaction, try string(collection, "collection"), try string(key, "key"))
    }
}

@_cdecl("ydb_txn_set_object")
public func ydb_txn_set_object(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                               _ key: UnsafePointer<CChar>?,
                               _ object: UnsafeRawPointer?, _ objectSize: UInt,
                               _ metadata: UnsafeRawPointer?, _ metadataSize: UInt) -> Int32 {
    write(handle, collection, key) { writer, collectionName, keyName in
        let objectBytes = try bytes(object, objectSize, "object")
        let metadataBytes = try optionalBytes(metadata, metadataSize, "metadata")
        try writer.setObject(objectBytes, forKey: keyName, inCollection: collectionName, metadata: metadataBytes)
    }
}

@_cdecl("ydb_txn_set_objects")
public func ydb_txn_set_objects(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?, _ rowCount: UInt,
                                _ keys: UnsafePointer<UnsafePointer<CChar>?>?,
                                _ objects: UnsafePointer<UnsafeRawPointer?>?, _ objectSizes: UnsafePointer<UInt>?,
                                _ metadata: UnsafePointer<UnsafeRawPointer?>?,
                                _ metadataSizes: UnsafePointer<UInt>?) -> Int32 {
    run {
        let transaction = try writer(try usableTxn(handle))
        let collectionName = try string(collection, "collection")
        let total = try count(rowCount, "count")
        var rows: [(key: String, object: [UInt8], metadata: [UInt8]?)] = []
        if total > 0 {
            guard let keys, let objects, let objectSizes else {
                throw YDBError(.invalidArgument, "keys, objects or object_sizes is NULL but count is \(rowCount)")
            }
            guard (metadata == nil) == (metadataSizes == nil) else {
                throw YDBError(.invalidArgument, "metadata and metadata_sizes must both be NULL or both be set")
            }
            rows.reserveCapacity(total)
            for index in 0..<total {
                // The row is named only on failure, not in a message built for every row.
                do {
                    let key = try string(keys[index], "key")
                    let object = try bytes(objects[index], objectSizes[index], "object")
                    let meta = try metadata.map { try optionalBytes($0[index], metadataSizes![index], "metadata") }
                    rows.append((key, object, meta ?? nil))
                } catch let error as YDBError {
                    throw YDBError(error.code, "row \(index): \(error.message)")
                }
            }
        }
        try transaction.setObjects(rows, inCollection: collectionName)
    }
}

@_cdecl("ydb_txn_replace_object")
public func ydb_txn_replace_object(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                   _ key: UnsafePointer<CChar>?,
                                   _ object: UnsafeRawPointer?, _ objectSize: UInt) -> Int32 {
    write(handle, collection, key) { writer, collectionName, keyName in
        try writer.replaceObject(try bytes(object, objectSize, "object"), forKey: keyName, inCollection: collectionName)
    }
}

@_cdecl("ydb_txn_replace_metadata")
public func ydb_txn_replace_metadata(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                     _ key: UnsafePointer<CChar>?,
                                     _ metadata: UnsafeRawPointer?, _ metadataSize: UInt) -> Int32 {
    write(handle, collection, key) { writer, collectionName, keyName in
        try writer.replaceMetadata(try optionalBytes(metadata, metadataSize, "metadata"),
                                   forKey: keyName, inCollection: collectionName)
    }
}

@_cdecl("ydb_txn_touch_object")
public func ydb_txn_touch_object(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                 _ key: UnsafePointer<CChar>?) -> Int32 {
    write(handle, collection, key) { try $0.touchObject(forKey: $2, inCollection: $1) }
}

@_cdecl("ydb_txn_touch_metadata")
public func ydb_txn_touch_metadata(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                   _ key: UnsafePointer<CChar>?) -> Int32 {
    write(handle, collection, key) { try $0.touchMetadata(forKey: $2, inCollection: $1) }
}

@_cdecl("ydb_txn_touch_row")
public func ydb_txn_touch_row(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                              _ key: UnsafePointer<CChar>?) -> Int32 {
    write(handle, collection, key) { try $0.touchRow(forKey: $2, inCollection: $1) }
}

@_cdecl("ydb_txn_remove_object")
public func ydb_txn_remove_object(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                  _ key: UnsafePointer<CChar>?) -> Int32 {
    write(handle, collection, key) { try $0.removeObject(forKey: $2, inCollection: $1) }
}

@_cdecl("ydb_txn_remove_objects")
public func ydb_txn_remove_objects(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                   _ keys: UnsafePointer<UnsafePointer<CChar>?>?, _ keyCount: UInt) -> Int32 {
    run {
        let transaction = try writer(try usableTxn(handle))
        let collectionName = try string(collection, "collection")
        try transaction.removeObjects(forKeys: try keyNames(keys, keyCount), inCollection: collectionName)
    }
}

/// The `count` keys of an array argument, every one checked before the
/// caller acts on any (removing, touching): NULL only with a count of 0.
func keyNames(_ keys: UnsafePointer<UnsafePointer<CChar>?>?, _ keyCount: UInt) throws -> [String] {
    let total = try count(keyCount, "count")
    guard total > 0 else { return [] }
    guard let keys else { throw YDBError(.invalidArgument, "keys is NULL but count is \(keyCount)") }
    var names: [String] = []
    names.reserveCapacity(total)
    for index in 0..<total { names.append(try string(keys[index], "keys[\(index)]")) }
    return names
}

@_cdecl("ydb_txn_remove_all_objects")
public func ydb_txn_remove_all_objects(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?) -> Int32 {
    run {
        try writer(try usableTxn(handle)).removeAllObjects(inCollection: try string(collection, "collection"))
    }
}

@_cdecl("ydb_txn_remove_all_objects_in_all_collections")
public func ydb_txn_remove_all_objects_in_all_collections(_ handle: OpaquePointer?) -> Int32 {
    run {
        try writer(try usableTxn(handle)).removeAllObjectsInAllCollections()
    }
}
