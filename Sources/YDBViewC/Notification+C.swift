// ydb_notification_* and ydb_notification_list_*: what commits changed.

import YDBView

public typealias CRowChangeCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                               UnsafePointer<CChar>?, UInt32) -> Int32

/// A notification as C sees it. `owned` boxes come from ydb_notification_copy
/// and are freed by ydb_notification_free; borrowed ones belong to a list or
/// to an observer call.
final class NotificationBox {
    let notification: CommitNotification
    let owned: Bool

    init(_ notification: CommitNotification, owned: Bool) {
        self.notification = notification
        self.owned = owned
    }
}

final class NotificationListBox {
    let notifications: [CommitNotification]
    /// Borrowed handles lent out by ydb_notification_list_get, one per item.
    let itemHandles: [OpaquePointer]

    private init(_ notifications: [CommitNotification], itemHandles: [OpaquePointer]) {
        self.notifications = notifications
        self.itemHandles = itemHandles
    }

    static func register(_ notifications: [CommitNotification]) -> OpaquePointer {
        let handles = notifications.map { registry.register(NotificationBox($0, owned: false)) }
        return registry.register(NotificationListBox(notifications, itemHandles: handles))
    }
}

private func notification(_ handle: OpaquePointer?) throws -> CommitNotification {
    try lookup(handle, NotificationBox.self, "notification").notification
}

private func list(_ handle: OpaquePointer?) throws -> NotificationListBox {
    try lookup(handle, NotificationListBox.self, "notification list")
}

@_cdecl("ydb_notification_copy")
public func ydb_notification_copy(_ handle: OpaquePointer?, _ outCopy: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outCopy, "out_copy") { registry.register(NotificationBox(try notification(handle), owned: true)) }
}

@_cdecl("ydb_notification_free")
public func ydb_notification_free(_ handle: OpaquePointer?) {
    guard handle != nil else { return }
    guard let box = registry.box(handle, as: NotificationBox.self) else {
        fail(YDBErrorCode.misuse.rawValue, "notification handle is not valid (freed or never made)")
        return
    }
    guard box.owned else {
        fail(YDBErrorCode.misuse.rawValue, "a borrowed notification cannot be freed")
        return
    }
    registry.unregister(handle)
}

@_cdecl("ydb_notification_snapshot")
public func ydb_notification_snapshot(_ handle: OpaquePointer?, _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outSnapshot, "out_snapshot") { try notification(handle).snapshot }
}

@_cdecl("ydb_notification_removed_all")
public func ydb_notification_removed_all(_ handle: OpaquePointer?, _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try notification(handle).removedAll ? 1 : 0 }
}

@_cdecl("ydb_notification_has_change")
public func ydb_notification_has_change(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                        _ key: UnsafePointer<CChar>?,
                                        _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        try notification(handle).hasChange(forKey: try string(key, "key"),
                                           inCollection: try string(collection, "collection")) ? 1 : 0
    }
}

@_cdecl("ydb_notification_has_change_in_collection")
public func ydb_notification_has_change_in_collection(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                                      _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        try notification(handle).hasChange(inCollection: try string(collection, "collection")) ? 1 : 0
    }
}

@_cdecl("ydb_notification_changed_row_count")
public func ydb_notification_changed_row_count(_ handle: OpaquePointer?,
                                               _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { UInt(try notification(handle).changedRows.count) }
}

@_cdecl("ydb_notification_enumerate_changed_rows")
public func ydb_notification_enumerate_changed_rows(_ handle: OpaquePointer?, _ callback: CRowChangeCallback?,
                                                    _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let ordered = try notification(handle).orderedChangedRows
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        for (row, kind) in ordered {
            let result = row.collection.withCString { collection in
                row.key.withCString { key in callback(ctx, collection, key, UInt32(kind.rawValue)) }
            }
            if result != 0 { break }
        }
    }
}

@_cdecl("ydb_notification_enumerate_removed_collections")
public func ydb_notification_enumerate_removed_collections(_ handle: OpaquePointer?, _ callback: CNameCallback?,
                                                           _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let names = try notification(handle).removedCollections   // byte order already
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        for name in names {
            if name.withCString({ callback(ctx, $0) }) != 0 { break }
        }
    }
}

// MARK: - Lists

@_cdecl("ydb_notification_list_free")
public func ydb_notification_list_free(_ handle: OpaquePointer?) {
    guard handle != nil else { return }
    guard let box = registry.unregister(handle, as: NotificationListBox.self) else {
        fail(YDBErrorCode.misuse.rawValue, "notification list handle is not valid (freed or never made)")
        return
    }
    for item in box.itemHandles { registry.unregister(item) }
}

@_cdecl("ydb_notification_list_count")
public func ydb_notification_list_count(_ handle: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { UInt(try list(handle).notifications.count) }
}

@_cdecl("ydb_notification_list_get")
public func ydb_notification_list_get(_ handle: OpaquePointer?, _ index: UInt,
                                      _ outNotification: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outNotification, "out_notification") {
        let box = try list(handle)
        guard index < UInt(box.itemHandles.count) else {
            throw YDBError(.invalidArgument, "index \(index) is out of range (count \(box.itemHandles.count))")
        }
        return box.itemHandles[Int(index)]
    }
}

@_cdecl("ydb_notification_list_has_change")
public func ydb_notification_list_has_change(_ handle: OpaquePointer?, _ collection: UnsafePointer<CChar>?,
                                             _ key: UnsafePointer<CChar>?,
                                             _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        try list(handle).notifications.hasChange(forKey: try string(key, "key"),
                                                 inCollection: try string(collection, "collection")) ? 1 : 0
    }
}

@_cdecl("ydb_notification_list_has_change_in_collection")
public func ydb_notification_list_has_change_in_collection(_ handle: OpaquePointer?,
                                                           _ collection: UnsafePointer<CChar>?,
                                                           _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        try list(handle).notifications.hasChange(inCollection: try string(collection, "collection")) ? 1 : 0
    }
}

@_cdecl("ydb_notification_list_new")
public func ydb_notification_list_new(_ items: UnsafePointer<OpaquePointer?>?, _ itemCount: UInt,
                                      _ outList: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outList, "out_list") {
        let total = try count(itemCount, "count")
        var collected: [CommitNotification] = []
        if total > 0 {
            guard let items else { throw YDBError(.invalidArgument, "items is NULL but count is \(itemCount)") }
            collected = try (0..<total).map { try notification(items[$0]) }
        }
        return NotificationListBox.register(collected)
    }
}
