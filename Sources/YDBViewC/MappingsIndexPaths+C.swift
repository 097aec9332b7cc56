// ydb_view_*_at_index_path and ydb_view_index_path_for_key: a view's rows
// read by table position, through mappings.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// MARK: - Rows by table position

/// The view group and index shown at (section, row), or YDB_NOTFOUND.
private func location(_ box: MappingsBox, _ section: UInt, _ row: UInt) throws -> (group: String, index: Int) {
    try found(box.with { shown($0, section, row) }, "nothing is shown at section \(section), row \(row)")
}

/// The mappings' view in transaction `txnHandle`, or YDB_NOTFOUND.
private func mappedView(_ txnHandle: OpaquePointer?, _ box: MappingsBox) throws -> ViewTransaction {
    try usableTxn(txnHandle).view(box.mappings.viewName)
}

@_cdecl("ydb_view_key_at_index_path")
public func ydb_view_key_at_index_path(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                       _ section: UInt, _ row: UInt,
                                       _ outCollection: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                       _ outKey: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    answer(Out(outCollection, "out_collection"), Out(outKey, "out_key")) {
        let box = try mappingsBox(handle)
        let view = try mappedView(txnHandle, box)
        let place = try location(box, section, row)
        return try mallocStrings(found(view.rowKey(at: place.index, inGroup: place.group),
                                       "no row at index \(place.index) of group '\(place.group)'"))
    }
}

private func blobAtIndexPath(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?, _ section: UInt, _ row: UInt,
                             _ outData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                             _ outSize: UnsafeMutablePointer<UInt>?, _ what: String,
                             _ pick: ((key: RowKey, object: [UInt8], metadata: [UInt8]?)) -> [UInt8]?) -> Int32 {
    answer(Out(outData, "out_\(what)"), Out(outSize, "out_size")) {
        let box = try mappingsBox(handle)
        let view = try mappedView(txnHandle, box)
        let place = try location(box, section, row)
        let blob = try found(view.row(at: place.index, inGroup: place.group).flatMap(pick),
                             "no \(what) at section \(section), row \(row)")
        return (try mallocCopy(blob), UInt(blob.count))
    }
}

@_cdecl("ydb_view_object_at_index_path")
public func ydb_view_object_at_index_path(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                          _ section: UInt, _ row: UInt,
                                          _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                          _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    blobAtIndexPath(txnHandle, handle, section, row, outObject, outSize, "object") { $0.object }
}

@_cdecl("ydb_view_metadata_at_index_path")
public func ydb_view_metadata_at_index_path(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                            _ section: UInt, _ row: UInt,
                                            _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                            _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    blobAtIndexPath(txnHandle, handle, section, row, outMetadata, outSize, "metadata") { $0.metadata }
}

@_cdecl("ydb_view_index_path_for_key")
public func ydb_view_index_path_for_key(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                        _ collection: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
                                        _ outSection: UnsafeMutablePointer<UInt>?,
                                        _ outRow: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(section: outSection, row: outRow) {
        let box = try mappingsBox(handle)
        let collectionName = try string(collection, "collection")
        let keyName = try string(key, "key")
        let view = try mappedView(txnHandle, box)
        let path = try view.position(forKey: keyName, inCollection: collectionName).flatMap { place in
            try box.with { $0.rowAndSection(forIndex: place.index, inGroup: place.group) }
        }
        return try found(path, "the row is not shown")
    }
}
