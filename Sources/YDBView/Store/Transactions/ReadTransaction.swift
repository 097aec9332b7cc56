/// A consistent view of the database as of one snapshot: rows and views.
///
/// Valid until `end()` (or the closure of `Connection.read` returns); any use
/// after that throws `.misuse`.
///
/// `@unchecked Sendable`: every access goes through `access`, under its
/// connection's lock (the C API may begin a transaction on one thread and
/// end it on another).
public class ReadTransaction: @unchecked Sendable {
    let connection: Connection
    /// The views as of this transaction's snapshot (a read-write transaction
    /// replaces them with its working copies).
    var state: PublishedState
    private(set) var ended = false
    /// Why the transaction ended, when it was not its owner's doing (its
    /// connection or database was closed): what later uses report.
    var endReason: YDBError?
    /// The read-only handle this transaction lends its callbacks, made at the
    /// first call (`CallbackTransaction.lend`).
    var lentHandle: CallbackTransaction?

    init(connection: Connection, state: PublishedState) {
        self.connection = connection
        self.state = state
    }

    public var snapshot: UInt64 { state.snapshot }

    var handle: SQLiteHandle { connection.handle }
    /// The row table's reads (all its SQL is in `RowTable.swift`).
    var rows: RowReader { RowReader(handle: connection.handle) }

    /// Ends a read transaction. No-op when already ended. From inside one
    /// of its own callbacks, it ends when the running call returns.
    public func end() {
        if connection.deferInsideUserCode({ self.end() }) { return }
        connection.lock.withLock {
            guard !ended else { return }
            ended = true
            connection.transactionEnded(self, endSQLite: true)
        }
    }

    func markEnded() { ended = true }

    /// Whether the transaction has ended (committed, rolled back, ended, or
    /// ended by closing its connection or database).
    package var hasEnded: Bool { connection.lock.withLock { ended } }

    /// `end()` (or `rollback()`), refusing with `.misuse` from inside its
    /// own callbacks instead of deferring (for callers that can report it).
    package func endRefusingCallbacks() throws {
        try connection.checkReentry(.end("end the transaction"))
        if let write = self as? ReadWriteTransaction { write.rollback() } else { end() }
    }

    /// This transaction as a writer, or `.misuse` saying why it cannot
    /// write (for callers that hold any transaction: the C layer).
    package func writer() throws -> ReadWriteTransaction {
        guard let writer = self as? ReadWriteTransaction else {
            throw YDBError(.misuse, "cannot write in a read transaction")
        }
        return writer
    }

    /// Runs `body` holding the connection's lock, after checking the
    /// transaction is still usable and the re-entrancy rule allows `action`.
    func access<T>(_ action: ReentryRule.Action = .readRows, _ body: () throws -> T) throws -> T {
        try connection.lock.withLock {
            if ended { throw endReason ?? YDBError(.misuse, "transaction used after it ended") }
            try connection.checkReentry(action)
            return try body()
        }
    }

    // MARK: Rows

    public func object(forKey key: String, inCollection collection: String) throws -> [UInt8]? {
        try withValue(.object, forKey: key, inCollection: collection) { $0.map { Array($0) } }
    }

    public func metadata(forKey key: String, inCollection collection: String) throws -> [UInt8]? {
        try withValue(.metadata, forKey: key, inCollection: collection) { $0.map { Array($0) } }
    }

    /// `body` with the row's object (or metadata) bytes as SQLite holds
    /// them, valid only during `body`: for handing out a large value with
    /// one copy instead of two. `body` gets nil when there is no such row
    /// (or, for metadata, the row has none).
    package func withValue<T>(_ part: RowPart, forKey key: String, inCollection collection: String,
                              _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        try access {
            try validateName(key, "key")
            try validateName(collection, "collection")
            guard storable(key, collection) else { return try body(nil) }
            return try rows.withValue(part, forKey: key, inCollection: collection, body)
        }
    }

    /// Object and metadata of a row, or nil when there is no such row.
    public func row(forKey key: String, inCollection collection: String) throws -> (object: [UInt8], metadata: [UInt8]?)? {
        try row(forKey: key, inCollection: collection, rowidHint: 0)
    }

    /// Object and metadata of a row, like `row(forKey:inCollection:)`,
    /// looked up by `rowidHint` first: the row's id as a changeset or edit
    /// step gave it (`RowChange.rowid`, `EditStep.rowid`). A hint that no
    /// longer names this row (the row was removed and set again) costs one
    /// more lookup, never a wrong answer; a hint of 0 or less (the
    /// database gives rows positive ids) is none. A list model reading the
    /// rows a commit placed saves the key index's lookup on each.
    public func row(forKey key: String, inCollection collection: String,
                    rowidHint: Int64) throws -> (object: [UInt8], metadata: [UInt8]?)? {
        try access {
            try validateName(key, "key")
            try validateName(collection, "collection")
            guard storable(key, collection) else { return nil }
            if rowidHint > 0, let row = try rows.row(forRowid: rowidHint, key: key, inCollection: collection) {
                return row
            }
            return try rows.row(forKey: key, inCollection: collection)
        }
    }

    public func exists(key: String, inCollection collection: String) throws -> Bool {
        try access { try rowid(forKey: key, inCollection: collection) != nil }
    }

    public func count(inCollection collection: String) throws -> Int {
        try access {
            try validateName(collection, "collection")
            guard storable(collection) else { return 0 }
            return try rows.count(inCollection: collection)
        }
    }

    public func countAll() throws -> Int {
        try access { try rows.countAll() }
    }

    /// Every collection that holds at least one row, in ascending order.
    public func collections() throws -> [String] {
        try access { try rows.collections() }
    }

    /// Calls `body` for each collection of `collections()`; set the
    /// `inout Bool` to true to stop.
    public func enumerateCollections(_ body: (String, inout Bool) throws -> Void) throws {
        let names = try collections()
        try connection.runningUserCode(.enumeration) {
            var stop = false
            for name in names where !stop { try body(name, &stop) }
        }
    }

    /// Every key of `collection`, in ascending order.
    public func keys(inCollection collection: String) throws -> [String] {
        var keys: [String] = []
        try enumerateKeys(inCollection: collection) { key, _ in keys.append(key) }
        return keys
    }

    /// Calls `body` for each key of `collection` in ascending order; set the
    /// `inout Bool` to true to stop.
    public func enumerateKeys(inCollection collection: String,
                              _ body: (String, inout Bool) throws -> Void) throws {
        try enumerate(collection, withValues: false) { key, _, _, stop in try body(key, &stop) }
    }

    /// Calls `body` with key, object and metadata of each row of `collection`.
    public func enumerateRows(inCollection collection: String,
                              _ body: (String, [UInt8], [UInt8]?, inout Bool) throws -> Void) throws {
        try enumerate(collection, withValues: true, body)
    }

    private func enumerate(_ collection: String, withValues: Bool,
                           _ body: (String, [UInt8], [UInt8]?, inout Bool) throws -> Void) throws {
        try access {
            try validateName(collection, "collection")
            guard storable(collection) else { return }
            try connection.runningUserCode(.enumeration) { try rows.enumerate(collection, withValues: withValues, body) }
        }
    }

    /// The extension `name` as this transaction sees it (a read-write
    /// transaction overrides this with its working copies).
    func registeredExtension(named name: String) -> (any RegisteredExtension)? { state.extensions[Name(name)] }

    // MARK: Internal row access (for views; no locking, no validation)

    func rowid(forKey key: String, inCollection collection: String) throws -> Int64? {
        guard try mayHaveRow(key, collection) else { return nil }
        return try rows.rowid(forKey: key, inCollection: collection)
    }

    /// Validates the names, then says whether a row could have them
    /// (`storable`): what every lookup by (collection, key) checks first.
    func mayHaveRow(_ key: String, _ collection: String) throws -> Bool {
        try validateName(key, "key")
        try validateName(collection, "collection")
        return storable(key, collection)
    }

    /// False for a name longer than SQLite stores: no row can have it, so a
    /// lookup finds nothing (and a remove or touch is a no-op) rather than
    /// failing with `.tooBig`.
    func storable(_ names: String...) -> Bool {
        names.allSatisfy { $0.utf8.count <= handle.maxValueBytes }
    }

    /// Loads what a callback of `flavour` reads for `rowid`. With `cached`,
    /// a whole row (`.row`) comes from the connection's row cache when it
    /// holds it, and is kept there when read.
    func loadRow(_ rowid: Int64, _ flavour: ViewFlavour, cached: Bool = false) throws -> ViewRow {
        guard cached, flavour == .row, let cache = rowCache else { return try rows.loadRow(rowid, flavour) }
        if let row = cache.row(rowid) { return row }
        let row = try rows.loadRow(rowid, .row)
        cache.store(row, for: rowid)
        return row
    }

    /// `loadRow` for up to `RowReader.batchSize` rows at once, in order; with
    /// `cached`, only the whole rows the cache does not hold are read (by one
    /// statement).
    func loadRows(_ rowids: ArraySlice<Int64>, _ flavour: ViewFlavour, cached: Bool = false) throws -> [ViewRow] {
        guard cached, flavour == .row, let cache = rowCache else { return try rows.loadRows(rowids, flavour) }
        var found = [ViewRow?](repeating: nil, count: rowids.count)
        var missing: [(offset: Int, rowid: Int64)] = []
        for (offset, rowid) in rowids.enumerated() {
            if let row = cache.row(rowid) { found[offset] = row } else { missing.append((offset, rowid)) }
        }
        if !missing.isEmpty {
            let loaded = try rows.loadRows(missing.map(\.rowid)[...], .row)
            for (place, row) in zip(missing, loaded) {
                found[place.offset] = row
                cache.store(row, for: place.rowid)
            }
        }
        return found.map { $0! }
    }

    /// The connection's row cache when this transaction may use it: a read
    /// transaction at the cache's snapshot, with the cache on. A read-write
    /// transaction reads its own changes, which no other transaction sees.
    var rowCache: RowCache? {
        let cache = connection.rowCache
        guard !(self is ReadWriteTransaction), cache.limit > 0, cache.snapshot == state.snapshot else { return nil }
        return cache
    }

    /// Whether reading `count` rows at once goes through the row cache
    /// (a longer read would only push out what it holds).
    func cachesRead(of count: Int) -> Bool { connection.lock.withLock { count <= connection.rowCache.limit } }

    func rowKey(forRowid rowid: Int64) throws -> RowKey? { try rows.rowKey(forRowid: rowid) }
}
