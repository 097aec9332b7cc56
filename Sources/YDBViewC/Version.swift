// Version and error-reporting exports (see "VERSION" and "STATUS CODES" in
// include/ydbview.h).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

/// Must equal YDBVIEW_VERSION / YDBVIEW_VERSION_NUMBER in the header.
let libraryVersion = "0.2.0"
let libraryVersionNumber: Int32 = 2000

// Immutable C strings made once and never freed or written: safe to share
// between threads (hence nonisolated(unsafe): Swift cannot see that).
nonisolated(unsafe) private let versionCString = immortalCString(libraryVersion)
nonisolated(unsafe) private let notAnError = immortalCString("not an error")
nonisolated(unsafe) private let unknownError = immortalCString("unknown error")
nonisolated(unsafe) private let statusDescriptions: [Int32: UnsafePointer<CChar>] = [
    0: notAnError,
    1: immortalCString("generic error"),
    2: immortalCString("library routine called out of sequence or with a bad handle"),
    3: immortalCString("invalid argument"),
    4: immortalCString("not found"),
    5: immortalCString("database or connection is closed"),
    6: immortalCString("database is busy"),
    7: immortalCString("SQLite error"),
    8: immortalCString("a callback reported failure"),
    9: immortalCString("mappings and notifications do not match"),
    10: immortalCString("database is corrupt"),
    11: immortalCString("string or blob too big"),
    12: immortalCString("the connection fell too far behind: reload"),
    13: immortalCString("unable to open the database file"),
    14: immortalCString("the registration was cancelled"),
]

@_cdecl("ydb_libversion")
public func ydb_libversion() -> UnsafePointer<CChar> { versionCString }

@_cdecl("ydb_libversion_number")
public func ydb_libversion_number() -> Int32 { libraryVersionNumber }

@_cdecl("ydb_errcode")
public func ydb_errcode() -> Int32 { currentCallState(create: false)?.code ?? 0 }

@_cdecl("ydb_errcode_sqlite")
public func ydb_errcode_sqlite() -> Int32 {
    guard let state = currentCallState(create: false), state.code != 0 else { return 0 }
    return state.sqliteCode
}

@_cdecl("ydb_errmsg")
public func ydb_errmsg() -> UnsafePointer<CChar> {
    guard let state = currentCallState(create: false), state.code != 0,
          let message = state.message else { return notAnError }
    return UnsafePointer(message)
}

@_cdecl("ydb_errstr")
public func ydb_errstr(_ status: Int32) -> UnsafePointer<CChar> {
    statusDescriptions[status] ?? unknownError
}

@_cdecl("ydb_free")
public func ydb_free(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    // A handle is a token, not an allocation: freeing one would crash (or
    // corrupt the heap) in free(). Tokens are recognisable, so refuse them.
    if registry.mayBeHandle(UInt(bitPattern: pointer)) {
        fail(YDBErrorCode.misuse.rawValue, "ydb_free was given a handle, not a buffer: free a handle with its own function (ydb_txn_end, ydb_changeset_free, ...)")
        return
    }
    free(pointer)
}
