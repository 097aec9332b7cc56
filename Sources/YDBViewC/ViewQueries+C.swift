// Querying a view in a transaction (groups, counts, rows by index, ranges,
// find), and whether notifications changed a view.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

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
