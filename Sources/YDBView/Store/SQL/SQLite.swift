import CSQLite

/// A thin, throwing wrapper over one sqlite3 handle. Nothing here knows about
/// rows or views; it only turns SQLite's C API into Swift with errors.
final class SQLiteHandle {
    /// How long a statement waits for another handle's lock before SQLITE_BUSY.
    static let busyTimeoutMilliseconds: Int32 = 10_000
    private(set) var raw: OpaquePointer?
    private var cache: [String: OpaquePointer] = [:]
    /// The statements used last, found by where their SQL text's bytes
    /// are: almost every statement's SQL is a literal, whose bytes never
    /// move, so a use costs a few pointer comparisons instead of hashing
    /// the text (a one-row commit uses about eight statements). `cache`
    /// still holds every statement, by text.
    private var recent: [RecentStatement] = []
    private var nextRecent = 0
    /// The longest string or blob this handle stores (SQLITE_LIMIT_LENGTH).
    private(set) var maxValueBytes = 0
    /// Binds that failed, by statement: `step()` throws them instead of
    /// running the statement with a NULL where the value should be.
    fileprivate var bindFailures: [OpaquePointer: YDBError] = [:]

    /// Where SQLite's update hook writes the row id of the last `ydb_rows`
    /// row a statement on this handle changed (`ydb_sqlite_track_rowids`).
    private let changedRowidSlot = UnsafeMutablePointer<sqlite3_int64>.allocate(capacity: 1)

    /// The row id of the `ydb_rows` row the last statement changed, when it
    /// changed exactly one; nil when it changed none (or several).
    var lastChangedRowid: Int64? { changes == 1 ? changedRowidSlot.pointee : nil }

    /// `maxValueBytes` lowers SQLite's length limit (it can only be lowered).
    init(path: String, maxValueBytes lowered: Int32? = nil) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw YDBError(.cantOpen, "cannot open database at \(path): \(message)")
        }
        raw = handle
        sqlite3_busy_timeout(handle, Self.busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
        if let lowered { sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, lowered) }
        maxValueBytes = Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
        // Per-handle settings (SQLite does not store them in the file). In WAL
        // mode NORMAL is durable against application crashes and fsyncs only
        // at checkpoints, not on every commit. The engine checkpoints itself
        // (`Checkpointer`), so no commit runs SQLite's automatic checkpoint;
        // when the log restarts it is cut back to `WALPolicy.sizeLimit`.
        // The schema's triggers count the row writes of other programs (a
        // stale view is detected when the database next opens); the engine's
        // own writes are already known to its views, and a trigger per row
        // written was a third of a bulk insert's time.
        ydb_sqlite_enable_triggers(handle, 0)
        changedRowidSlot.initialize(to: 0)
        ydb_sqlite_track_rowids(handle, changedRowidSlot)
        sqlite3_exec(handle, """
            PRAGMA synchronous = NORMAL;
            PRAGMA wal_autocheckpoint = 0;
            PRAGMA journal_size_limit = \(WALPolicy.sizeLimit);
            """, nil, nil, nil)
    }

    deinit {
        close()
        changedRowidSlot.deallocate()
    }

    func close() {
        for statement in cache.values { sqlite3_finalize(statement) }
        cache.removeAll()
        recent.removeAll()
        if let raw { sqlite3_close_v2(raw) }
        raw = nil
    }

    var errorMessage: String { raw.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    func error(_ rc: Int32, _ context: String) -> YDBError {
        let primary = rc & 0xff
        let code: YDBErrorCode = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? .busy
            : primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? .corrupt
            : primary == SQLITE_TOOBIG ? .tooBig : .sqlite
        // SQLite's message for a too-long value or row names no sizes.
        let limit = code == .tooBig ? " (the limit is \(maxValueBytes) bytes; the row may be larger)" : ""
        return YDBError(code, "\(context): \(errorMessage)\(limit) (sqlite code \(rc))", sqliteCode: rc)
    }

    /// Runs SQL that returns no rows (may hold several statements).
    func execute(_ sql: String) throws {
        guard let raw else { throw YDBError(.closed, "database connection is closed") }
        let rc = sqlite3_exec(raw, sql, nil, nil, nil)
        if rc != SQLITE_OK { throw error(rc, "executing \(sql.prefix(60))") }
    }

    /// Runs one statement that returns no rows (BEGIN, COMMIT, ROLLBACK)
    /// from the statement cache: `execute` would parse it again every time,
    /// and transactions begin and end on every commit and every catch-up.
    func run(_ sql: String) throws {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.run()
    }

    /// A prepared statement, cached by its SQL text, reset and unbound on return.
    func statement(_ sql: String) throws -> Statement {
        guard let raw else { throw YDBError(.closed, "database connection is closed") }
        let address = sql.utf8.withContiguousStorageIfAvailable { $0.baseAddress.map(UnsafeRawPointer.init) } ?? nil
        if let address, let cached = recentStatement(at: address, sql) { return reused(cached) }
        let statement: OpaquePointer
        if let cached = cache[sql] {
            statement = cached
        } else {
            var prepared: OpaquePointer?
            let rc = sqlite3_prepare_v3(raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
            guard rc == SQLITE_OK, let prepared else { throw error(rc, "preparing \(sql.prefix(60))") }
            cache[sql] = prepared
            statement = prepared
        }
        if let address { remember(RecentStatement(address: address, sql: sql, statement: statement)) }
        return reused(statement)
    }

    private func reused(_ statement: OpaquePointer) -> Statement {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        if !bindFailures.isEmpty { bindFailures.removeValue(forKey: statement) }
        return Statement(handle: self, raw: statement)
    }

    /// The statement of `sql` if it is among the recent ones. The text is
    /// compared too, which costs nothing for the same literal (the same
    /// storage, compared first): a text of up to 15 bytes lives inside its
    /// `String`, and is read from a copy at an address other short texts
    /// share. (A longer one's address is its own while the entry keeps it.)
    private func recentStatement(at address: UnsafeRawPointer, _ sql: String) -> OpaquePointer? {
        for entry in recent where entry.address == address {
            return entry.sql == sql ? entry.statement : nil
        }
        return nil
    }

    private func remember(_ entry: RecentStatement) {
        if let index = recent.firstIndex(where: { $0.address == entry.address }) {
            recent[index] = entry
        } else if recent.count < Self.recentStatementCount {
            recent.append(entry)
        } else {
            recent[nextRecent] = entry
            nextRecent = (nextRecent + 1) % Self.recentStatementCount
        }
    }

    private static let recentStatementCount = 16

    /// A statement of its own, finalized when released: for loops whose body
    /// may run the same SQL again (re-entrant enumeration).
    func uncachedStatement(_ sql: String) throws -> OwnedStatement {
        guard let raw else { throw YDBError(.closed, "database connection is closed") }
        var prepared: OpaquePointer?
        let rc = sqlite3_prepare_v2(raw, sql, -1, &prepared, nil)
        guard rc == SQLITE_OK, let prepared else { throw error(rc, "preparing \(sql.prefix(60))") }
        return OwnedStatement(statement: Statement(handle: self, raw: prepared))
    }

    /// Resets every cached statement, so none keeps a read open when the
    /// transaction ends.
    func resetAll() {
        for statement in cache.values { sqlite3_reset(statement) }
    }

    /// Forgets cached statements (needed after tables they use are dropped).
    func clearStatementCache() {
        for statement in cache.values { sqlite3_finalize(statement) }
        cache.removeAll()
        recent.removeAll()
        bindFailures.removeAll()
    }

    /// Copies the whole log into the file and cuts the log file to zero
    /// bytes, or does nothing and returns false at once when a reader still
    /// uses the log or a writer is active: it never waits (the handle's busy
    /// timeout is lifted for the call).
    func truncateLog() -> Bool {
        guard let raw else { return false }
        sqlite3_busy_timeout(raw, 0)
        defer { sqlite3_busy_timeout(raw, Self.busyTimeoutMilliseconds) }
        return sqlite3_wal_checkpoint_v2(raw, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil) == SQLITE_OK
    }

    /// Copies committed log frames back into the database file without
    /// waiting for readers or writers. Returns (frames in the log, frames
    /// copied): equal when the whole log is in the file, so the next write
    /// may start the log from the beginning.
    @discardableResult
    func checkpointPassive() -> (log: Int32, copied: Int32)? {
        guard let raw else { return nil }
        var log: Int32 = 0, copied: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(raw, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        return rc == SQLITE_OK ? (log, copied) : nil
    }

    /// Reports the log's frame count after every commit on this handle.
    func onWALCommit(_ monitor: Checkpointer) {
        guard let raw else { return }
        sqlite3_wal_hook(raw, { context, _, _, frames in
            Unmanaged<Checkpointer>.fromOpaque(context!).takeUnretainedValue().committed(frames: Int(frames))
            return SQLITE_OK
        }, Unmanaged.passUnretained(monitor).toOpaque())
    }

    var changes: Int { raw.map { Int(sqlite3_changes($0)) } ?? 0 }
}

/// An entry of `SQLiteHandle.recent`.
private struct RecentStatement {
    let address: UnsafeRawPointer
    let sql: String
    let statement: OpaquePointer
}

final class OwnedStatement {
    let statement: Statement
    init(statement: Statement) { self.statement = statement }
    deinit {
        if !statement.handle.bindFailures.isEmpty { statement.handle.bindFailures.removeValue(forKey: statement.raw) }
        sqlite3_finalize(statement.raw)
    }
}

/// SQLite wants to copy bound text and blobs: SQLITE_TRANSIENT.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

struct Statement {
    let handle: SQLiteHandle
    let raw: OpaquePointer

    // Binding does not throw, so every call site stays one line: a failed
    // bind is remembered and the next `step()` throws it without running
    // the statement (which would otherwise store NULL in its place).

    /// The text's bytes are handed over where they lie (SQLite copies
    /// them): passed as a `String` argument, a C pointer parameter got a
    /// fresh array copy of them, about 1k instructions a call.
    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bindText(index, UnsafeRawBufferPointer($0), transient) }
    }
    func bind(_ index: Int32, _ value: Int64) { checked(sqlite3_bind_int64(raw, index, value), index) }
    func bind(_ index: Int32, _ value: Int) { checked(sqlite3_bind_int64(raw, index, Int64(value)), index) }
    /// nil binds NULL; an empty array binds an empty (non-NULL) blob.
    func bind(_ index: Int32, _ value: [UInt8]?) {
        guard let value else { checked(sqlite3_bind_null(raw, index), index); return }
        value.withUnsafeBytes { bind(index, bytes: $0) }
    }
    /// Text or a blob that SQLite reads where it is instead of copying it:
    /// the caller keeps `buffer` alive and unchanged until the statement has
    /// run, and binds every parameter again before running it again.
    func bindInPlace(_ index: Int32, text buffer: UnsafeRawBufferPointer) { bindText(index, buffer, nil) }

    /// Text from `buffer`: copied by SQLite with `transient`, read in place
    /// with nil (SQLITE_STATIC).
    private func bindText(_ index: Int32, _ buffer: UnsafeRawBufferPointer, _ destructor: sqlite3_destructor_type?) {
        guard fits(buffer.count, index) else { return }
        guard let start = buffer.baseAddress, !buffer.isEmpty else {
            // A pointer all the same (SQLite binds NULL for none), copied:
            // the literal's pointer lives only for the call.
            checked(sqlite3_bind_text64(raw, index, "", 0, transient, UInt8(SQLITE_UTF8)), index)
            return
        }
        checked(sqlite3_bind_text64(raw, index, start.assumingMemoryBound(to: CChar.self), sqlite3_uint64(buffer.count),
                                    destructor, UInt8(SQLITE_UTF8)), index)
    }
    /// Runs `body` with `text` bound at `index` where its bytes lie
    /// (`bindInPlace`), so that SQLite copies nothing: the binding serves
    /// the runs inside `body` only: a one-row commit's texts and blobs are
    /// not copied and freed once more by SQLite.
    func withText<Result>(_ index: Int32, _ text: String, _ body: () throws -> Result) rethrows -> Result {
        var text = text
        return try text.withUTF8 { bytes in
            bindInPlace(index, text: UnsafeRawBufferPointer(bytes))
            return try body()
        }
    }

    /// `withText` for a blob.
    func withBlob<Result>(_ index: Int32, _ blob: [UInt8], _ body: () throws -> Result) rethrows -> Result {
        try blob.withUnsafeBytes { bytes in
            bindInPlace(index, blob: bytes)
            return try body()
        }
    }

    /// See `bindInPlace(_:text:)`; an empty buffer binds an empty blob.
    func bindInPlace(_ index: Int32, blob buffer: UnsafeRawBufferPointer) {
        guard let start = buffer.baseAddress, !buffer.isEmpty else { bind(index, bytes: buffer); return }
        guard fits(buffer.count, index) else { return }
        checked(sqlite3_bind_blob64(raw, index, start, sqlite3_uint64(buffer.count), nil), index)
    }
    func bindNull(_ index: Int32) { checked(sqlite3_bind_null(raw, index), index) }
    /// A blob (empty, not NULL, when `buffer` is empty).
    func bind(_ index: Int32, bytes buffer: UnsafeRawBufferPointer) {
        if buffer.isEmpty { checked(sqlite3_bind_zeroblob(raw, index, 0), index); return }
        guard fits(buffer.count, index) else { return }
        checked(sqlite3_bind_blob64(raw, index, buffer.baseAddress, sqlite3_uint64(buffer.count), transient), index)
    }

    /// Refuses a value longer than the handle's limit with its size and the
    /// limit (SQLite's own SQLITE_TOOBIG names neither).
    private func fits(_ count: Int, _ index: Int32) -> Bool {
        guard count > handle.maxValueBytes else { return true }
        fail(YDBError(.tooBig, "a value of \(count) bytes (parameter \(index)) is larger than the limit of \(handle.maxValueBytes) bytes"))
        return false
    }

    private func checked(_ rc: Int32, _ index: Int32) {
        if rc != SQLITE_OK { fail(handle.error(rc, "binding parameter \(index)")) }
    }

    private func fail(_ error: YDBError) {
        if handle.bindFailures[raw] == nil { handle.bindFailures[raw] = error }
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    func step() throws -> Bool {
        // Binds rarely fail: an empty table is not hashed into.
        if !handle.bindFailures.isEmpty, let failure = handle.bindFailures.removeValue(forKey: raw) {
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
            throw failure
        }
        let rc = sqlite3_step(raw)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = handle.error(rc, "running statement")
        sqlite3_reset(raw)
        throw error
    }

    /// Runs to completion, ignoring rows.
    func run() throws { while try step() {} }

    func reset() { sqlite3_reset(raw) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(raw, column)) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
    /// The column's text, or `previous` when its bytes are the same: a scan
    /// reads the same collection name on row after row, and decoding it
    /// again made a string (and checked its UTF-8) each time.
    func string(_ column: Int32, reusing previous: String) -> String {
        guard let text = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        let bytes = UnsafeBufferPointer(start: text, count: count)
        var previous = previous
        let same = previous.withUTF8 { compareBytes(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(bytes)) == 0 }
        return same ? previous : String(decoding: bytes, as: UTF8.self)
    }
    /// nil for SQL NULL; [] for an empty blob.
    func blob(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let bytes = sqlite3_column_blob(raw, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
    /// The column's blob, valid only during `body`; nil for SQL NULL.
    func withBlob<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        if isNull(column) { return try body(nil) }
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let bytes = sqlite3_column_blob(raw, column) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
