// ydb_sort_key_*: building a row's sort key inside a sort_key callback.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

/// The key one sort_key callback is building (`ydb_sort_key`), kept in its
/// thread's state (`ThreadCallState.sortKeyCall`): a population calls back once
/// per row, and an object per call (allocated, retained, freed) cost more
/// than the appends. Its handle is a number matched against the call
/// running on the calling thread, not a registry entry: a registry lookup
/// (a lock and a dictionary) per append would cost more again. A handle
/// kept past its callback, or used on another thread, matches nothing:
/// YDB_MISUSE.
struct SortKeyCall {
    /// 0 while no sort_key callback runs on the thread.
    var token: UInt = 0
    var key = SortKey()
    var failure: String?

    /// Runs `body` with a fresh call as the thread's current one (the
    /// outer one, if a callback runs inside another, is put back after);
    /// returns the key built, the first refused append (if any) and
    /// body's status.
    static func run(on thread: ThreadCallState, _ body: (OpaquePointer?) -> Int32) -> (SortKey, String?, Int32) {
        let outer = thread.sortKeyCall
        thread.sortKeyCall = SortKeyCall(token: thread.nextCallToken(sortKeyTag))
        let status = body(OpaquePointer(bitPattern: thread.sortKeyCall.token))
        let call = thread.sortKeyCall
        thread.sortKeyCall = outer
        return (call.key, call.failure, status)
    }
}

/// The high bits of every sort key token (see `ThreadCallState.nextCallToken`).
let sortKeyTag: UInt = 0x5000_0000_0000_0000

/// The state of the thread whose running sort_key call `handle` names.
private func activeCall(_ handle: OpaquePointer?) throws -> ThreadCallState {
    guard let handle else { throw YDBError(.misuse, "sort key handle is NULL") }
    guard let thread = currentCallState(create: false), thread.sortKeyCall.token != 0,
          thread.sortKeyCall.token == UInt(bitPattern: handle) else {
        throw YDBError(.misuse, "sort key handle is not the one of a sort_key callback running on this thread")
    }
    return thread
}

/// Appends with `body`; a refused argument also fails the callback.
private func append(_ handle: OpaquePointer?, _ body: (inout SortKey) throws -> Void) -> Int32 {
    run {
        let thread = try activeCall(handle)
        do {
            try body(&thread.sortKeyCall.key)
        } catch let error as YDBError {
            if thread.sortKeyCall.failure == nil { thread.sortKeyCall.failure = error.message }
            throw error
        }
    }
}

@_cdecl("ydb_sort_key_append_int64")
public func ydb_sort_key_append_int64(_ handle: OpaquePointer?, _ value: Int64, _ descending: Int32) -> Int32 {
    append(handle) { $0.append(value, descending: descending != 0) }
}

@_cdecl("ydb_sort_key_append_double")
public func ydb_sort_key_append_double(_ handle: OpaquePointer?, _ value: Double, _ descending: Int32) -> Int32 {
    append(handle) { $0.append(value, descending: descending != 0) }
}

@_cdecl("ydb_sort_key_append_text")
public func ydb_sort_key_append_text(_ handle: OpaquePointer?, _ text: UnsafePointer<CChar>?,
                                     _ descending: Int32) -> Int32 {
    // The bytes are checked and appended where they are: making a String
    // of them first was most of the cost of a call, which a population
    // makes once per row or more.
    append(handle) { key in
        guard let text else { throw YDBError(.invalidArgument, "text is NULL") }
        let bytes = UnsafeRawBufferPointer(start: text, count: strlen(text))
        guard isValidUTF8(bytes) else { throw YDBError(.invalidArgument, "text is not valid UTF-8") }
        key.append(utf8: bytes, descending: descending != 0)
    }
}

/// Whether `bytes` are UTF-8 (all ASCII, checked a word at a time, or what
/// the standard library accepts).
private func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    while index + 8 <= bytes.count {
        if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
        index += 8
    }
    while index < bytes.count, bytes[index] < 0x80 { index += 1 }
    return index == bytes.count || String(validating: bytes, as: UTF8.self) != nil
}

@_cdecl("ydb_sort_key_append_blob")
public func ydb_sort_key_append_blob(_ handle: OpaquePointer?, _ pointer: UnsafeRawPointer?, _ size: UInt,
                                     _ descending: Int32) -> Int32 {
    append(handle) { $0.append(bytes: try bytes(pointer, size, "blob"), descending: descending != 0) }
}

@_cdecl("ydb_sort_key_append_raw")
public func ydb_sort_key_append_raw(_ handle: OpaquePointer?, _ pointer: UnsafeRawPointer?, _ size: UInt) -> Int32 {
    append(handle) { $0.append(raw: try bytes(pointer, size, "bytes")) }
}
