import CSQLite

/// Which part of a row a read lends (`ReadTransaction.withValue`).
package enum RowPart { case object, metadata }

/// Every statement over `ydb_rows`, the row table (its schema and triggers
/// are in `Schema`). `RowReader` holds the reads: what the store's
/// transactions answer with, and all that view maintenance may see of the
/// store. `RowTable` adds the writes, which only a read-write transaction
/// makes. Neither validates names: the transactions do, before calling.
struct RowReader {
    let handle: SQLiteHandle

    func rowid(forKey key: String, inCollection collection: String) throws -> Int64? {
        let select = try handle.statement("SELECT rowid FROM ydb_rows WHERE collection = ?1 AND key = ?2")
        defer { select.reset() }
        return try select.withText(1, collection) {
            try select.withText(2, key) { try select.step() ? select.int64(0) : nil }
        }
    }

    /// The largest row id in the table; 0 when it is empty.
    func largestRowid() throws -> Int64 {
        let select = try handle.statement("SELECT max(rowid) FROM ydb_rows")
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    func row(forKey key: String, inCollection collection: String) throws -> (object: [UInt8], metadata: [UInt8]?)? {
        let select = try handle.statement("SELECT object, metadata FROM ydb_rows WHERE collection = ?1 AND key = ?2")
        defer { select.reset() }
        select.bind(1, collection)
        select.bind(2, key)
        guard try select.step() else { return nil }
        return (select.blob(0) ?? [], select.blob(1))
    }

    /// The row with id `rowid`, if it is (collection, key): one lookup in
    /// the table, where the key needs the key index first.
    func row(forRowid rowid: Int64, key: String, inCollection collection: String) throws
        -> (object: [UInt8], metadata: [UInt8]?)? {
        let select = try handle.statement(
            "SELECT object, metadata FROM ydb_rows WHERE rowid = ?1 AND collection = ?2 AND key = ?3")
        defer { select.reset() }
        select.bind(1, rowid)
        select.bind(2, collection)
        select.bind(3, key)
        guard try select.step() else { return nil }
        return (select.blob(0) ?? [], select.blob(1))
    }

    /// `body` with the bytes of one part of a row, as SQLite holds them
    /// (valid only during `body`: no copy is made), or with nil when there
    /// is no such row or (for metadata) it has none.
    func withValue<T>(_ part: RowPart, forKey key: String, inCollection collection: String,
                      _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        let select = try handle.statement(part == .object
            ? "SELECT object FROM ydb_rows WHERE collection = ?1 AND key = ?2"
            : "SELECT metadata FROM ydb_rows WHERE collection = ?1 AND key = ?2")
        defer { select.reset() }
        select.bind(1, collection)
        select.bind(2, key)
        guard try select.step() else { return try body(nil) }
        return try select.withBlob(0, body)
    }

    func count(inCollection collection: String) throws -> Int {
        let select = try handle.statement("SELECT count(*) FROM ydb_rows WHERE collection = ?1")
        defer { select.reset() }
        select.bind(1, collection)
        try select.step()
        return select.int(0)
    }

    func countAll() throws -> Int {
        let select = try handle.statement("SELECT count(*) FROM ydb_rows")
        defer { select.reset() }
        try select.step()
        return select.int(0)
    }

    /// Every collection that holds at least one row, in ascending order.
    func collections() throws -> [String] {
        let select = try handle.statement("SELECT DISTINCT collection FROM ydb_rows ORDER BY collection")
        defer { select.reset() }
        var names: [String] = []
        while try select.step() { names.append(select.string(0)) }
        return names
    }

    /// The rows of `collection` in key order: key, and object and metadata
    /// when `withValues`. Not the statement cache: `body` may query again.
    func enumerate(_ collection: String, withValues: Bool,
                   _ body: (String, [UInt8], [UInt8]?, inout Bool) throws -> Void) throws {
        let columns = withValues ? "key, object, metadata" : "key, NULL, NULL"
        let owned = try handle.uncachedStatement(
            "SELECT \(columns) FROM ydb_rows WHERE collection = ?1 ORDER BY key")
        let select = owned.statement
        select.bind(1, collection)
        var stop = false
        while !stop, try select.step() { try body(select.string(0), select.blob(1) ?? [], select.blob(2), &stop) }
    }

    /// What a callback of `flavour` reads of row `rowid`.
    func loadRow(_ rowid: Int64, _ flavour: ViewFlavour) throws -> ViewRow {
        guard let row = try row(rowid, flavour) else { throw YDBError(.corrupt, "view refers to missing row \(rowid)") }
        return row
    }

    /// `loadRow`, or nil when there is no row `rowid` (any more).
    func row(_ rowid: Int64, _ flavour: ViewFlavour) throws -> ViewRow? {
        let select = try handle.statement(Self.selectRow[flavour]!)
        defer { select.reset() }
        select.bind(1, rowid)
        guard try select.step() else { return nil }
        return viewRow(select, 0, flavour)
    }

    /// The rows `rowids` (at most `batchSize`), in that order, read by one
    /// statement: what a range of a view shows (the 50 rows on screen) costs
    /// one statement instead of one each. Throws when one is missing.
    func loadRows(_ rowids: ArraySlice<Int64>, _ flavour: ViewFlavour) throws -> [ViewRow] {
        precondition(rowids.count <= Self.batchSize)
        let select = try handle.statement(Self.selectRows[flavour]!)
        defer { select.reset() }
        for (offset, rowid) in rowids.enumerated() { select.bind(Int32(offset + 1), rowid) }
        // Unused places repeat the first rowid: the statement stays one.
        for offset in rowids.count ..< Self.batchSize { select.bind(Int32(offset + 1), rowids.first ?? 0) }
        var found: [Int64: ViewRow] = [:]
        found.reserveCapacity(rowids.count)
        while try select.step() { found[select.int64(0)] = viewRow(select, 1, flavour) }
        return try rowids.map { rowid in
            guard let row = found[rowid] else { throw YDBError(.corrupt, "view refers to missing row \(rowid)") }
            return row
        }
    }

    static let batchSize = 64

    private func viewRow(_ select: Statement, _ first: Int32, _ flavour: ViewFlavour) -> ViewRow {
        ViewRow(collection: select.string(first), key: select.string(first + 1),
                object: flavour.readsObject ? (select.blob(first + 2) ?? []) : nil,
                metadata: flavour.readsMetadata ? select.blob(first + 3) : nil)
    }

    /// The columns a callback of each flavour reads (the others NULL).
    private static let columns: [ViewFlavour: String] = [
        .key: "collection, key, NULL, NULL", .object: "collection, key, object, NULL",
        .metadata: "collection, key, NULL, metadata", .row: "collection, key, object, metadata",
    ]
    // Made once: the statement cache is keyed by the text.
    private static let selectRow = columns.mapValues { "SELECT \($0) FROM ydb_rows WHERE rowid = ?1" }
    private static let selectRows = columns.mapValues {
        "SELECT rowid, \($0) FROM ydb_rows WHERE rowid IN ("
            + Array(repeating: "?", count: batchSize).joined(separator: ", ") + ")"
    }

    func rowKey(forRowid rowid: Int64) throws -> RowKey? {
        let select = try handle.statement("SELECT collection, key FROM ydb_rows WHERE rowid = ?1")
        defer { select.reset() }
        select.bind(1, rowid)
        return try select.step() ? RowKey(collection: select.string(0), key: select.string(1)) : nil
    }

    /// Every row (of `collections`, when given) in rowid order, as a
    /// callback of `flavour` reads it: what a view populates from.
    func scan(_ flavour: ViewFlavour, collections: [String]?, _ body: (Int64, ViewRow) throws -> Void) throws {
        let columns = Self.scanColumns(flavour)
        for collection in collections ?? [""] {
            let sql = collections == nil
                ? "SELECT \(columns) FROM ydb_rows ORDER BY rowid"
                : "SELECT \(columns) FROM ydb_rows WHERE collection = ?1 ORDER BY rowid"
            let owned = try handle.uncachedStatement(sql)
            let select = owned.statement
            if collections != nil { select.bind(1, collection) }
            var lastCollection = ""
            while try select.step() {
                try body(select.int64(0), Self.scanned(select, flavour, &lastCollection))
            }
        }
    }

    /// What a scan selects: `scanned` reads it.
    private static func scanColumns(_ flavour: ViewFlavour) -> String {
        "rowid, collection, key, \(flavour.readsObject ? "object" : "NULL"), \(flavour.readsMetadata ? "metadata" : "NULL")"
    }

    /// The row at a scan's statement (rowid, collection, key, object,
    /// metadata), as a callback of `flavour` reads it. `lastCollection` is
    /// the row before's collection, reused when the bytes are the same.
    private static func scanned(_ select: Statement, _ flavour: ViewFlavour, _ lastCollection: inout String) -> ViewRow {
        lastCollection = select.string(1, reusing: lastCollection)
        return ViewRow(collection: lastCollection, key: select.string(2),
                       object: flavour.readsObject ? (select.blob(3) ?? []) : nil,
                       metadata: flavour.readsMetadata ? select.blob(4) : nil)
    }

    /// `scan`, `chunk` rows per statement: after each chunk, with no
    /// statement open, `between(more)` may move the handle to a newer
    /// snapshot (the next chunk starts after the last row id read). Rows
    /// written meanwhile may or may not be read: a caller catches up with
    /// them (an asynchronous registration).
    func scan(_ flavour: ViewFlavour, collections: [String]?, chunk: Int, between: (_ more: Bool) throws -> Void,
              _ body: (Int64, ViewRow) throws -> Void) throws {
        let columns = Self.scanColumns(flavour)
        let sql = collections == nil
            ? "SELECT \(columns) FROM ydb_rows WHERE rowid > ?1 ORDER BY rowid LIMIT ?2"
            : "SELECT \(columns) FROM ydb_rows WHERE collection = ?3 AND rowid > ?1 ORDER BY rowid LIMIT ?2"
        for collection in collections ?? [""] {
            var last = Int64.min
            var read = chunk
            while read == chunk {
                read = 0
                do {
                    let owned = try handle.uncachedStatement(sql)
                    let select = owned.statement
                    select.bind(1, last)
                    select.bind(2, Int64(chunk))
                    if collections != nil { select.bind(3, collection) }
                    var lastCollection = ""
                    while try select.step() {
                        last = select.int64(0)
                        read += 1
                        try body(last, Self.scanned(select, flavour, &lastCollection))
                    }
                }
                if read == chunk { try between(true) }
            }
        }
        try between(false)
    }
}

/// The row table's writes (see `RowReader`).
struct RowTable {
    let handle: SQLiteHandle
    var reader: RowReader { RowReader(handle: handle) }

    /// SQLITE_CONSTRAINT_PRIMARYKEY (a macro Swift does not import): the
    /// row id is taken.
    private static let rowidTaken = SQLITE_CONSTRAINT | (6 << 8)

    /// Inserts a row with the row id after `largest`, the largest ever used
    /// (ids are never reused, `Schema.migrateToVersion4`), and returns it;
    /// returns nil, writing nothing, when (collection, key) has a row
    /// already. (So a caller that expects a new row makes one probe of the
    /// key's index, not a lookup and then the insert's own check.)
    /// When another program inserted rows meanwhile and took that id, the
    /// row gets the id after the table's largest instead.
    func insertUnlessPresent(_ key: String, _ collection: String, object: [UInt8], metadata: [UInt8]?,
                             after largest: Int64) throws -> Int64? {
        let insert = try handle.statement("""
            INSERT INTO ydb_rows (rowid, collection, key, object, metadata) VALUES (?5, ?1, ?2, ?3, ?4)
                ON CONFLICT (collection, key) DO NOTHING
            """)
        var rowid = largest + 1
        insert.bind(4, metadata)
        insert.bind(5, rowid)
        func run() throws {
            do {
                try insert.run()
            } catch let error as YDBError where error.sqliteCode == Self.rowidTaken {
                let taken = try reader.largestRowid()
                guard taken > largest else { throw error }
                rowid = taken + 1
                insert.bind(5, rowid)
                try insert.run()
            }
        }
        try insert.withText(1, collection) { try insert.withText(2, key) { try insert.withBlob(3, object, run) } }
        return handle.changes == 1 ? rowid : nil
    }

    /// Replaces the object and metadata of the row at (collection, key) and
    /// returns its rowid, or returns nil when there is no such row. One
    /// statement: the handle's update hook reports which row it changed
    /// (`SQLiteHandle.lastChangedRowid`), where a lookup and then an update
    /// by rowid took two.
    func update(key: String, collection: String, object: [UInt8], metadata: [UInt8]?) throws -> Int64? {
        let update = try handle.statement(
            "UPDATE ydb_rows SET object = ?1, metadata = ?2 WHERE collection = ?3 AND key = ?4")
        update.bind(2, metadata)
        try update.withText(3, collection) {
            try update.withText(4, key) { try update.withBlob(1, object) { try update.run() } }
        }
        return handle.lastChangedRowid
    }

    func update(_ rowid: Int64, object: [UInt8]) throws {
        let update = try handle.statement("UPDATE ydb_rows SET object = ?1 WHERE rowid = ?2")
        update.bind(1, object)
        update.bind(2, rowid)
        try update.run()
    }

    func update(_ rowid: Int64, metadata: [UInt8]?) throws {
        let update = try handle.statement("UPDATE ydb_rows SET metadata = ?1 WHERE rowid = ?2")
        update.bind(1, metadata)
        update.bind(2, rowid)
        try update.run()
    }

    /// Deletes the row at (collection, key) and returns its rowid, or nil
    /// when there is no such row (one statement, as `update(key:…)`).
    func delete(key: String, collection: String) throws -> Int64? {
        let delete = try handle.statement("DELETE FROM ydb_rows WHERE collection = ?1 AND key = ?2")
        try delete.withText(1, collection) { try delete.withText(2, key) { try delete.run() } }
        return handle.lastChangedRowid
    }

    /// Deletes every row of `collection`; returns what it deleted.
    func deleteAll(inCollection collection: String) throws -> [(rowid: Int64, rowKey: RowKey)] {
        let select = try handle.statement("SELECT rowid, key FROM ydb_rows WHERE collection = ?1")
        select.bind(1, collection)
        var removed: [(rowid: Int64, rowKey: RowKey)] = []
        while try select.step() {
            removed.append((select.int64(0), RowKey(collection: collection, key: select.string(1))))
        }
        select.reset()
        guard !removed.isEmpty else { return [] }
        let delete = try handle.statement("DELETE FROM ydb_rows WHERE collection = ?1")
        delete.bind(1, collection)
        try delete.run()
        return removed
    }

    /// Deletes every row; returns what it deleted.
    func deleteAll() throws -> RowKeys {
        let select = try handle.statement("SELECT rowid, collection, key FROM ydb_rows ORDER BY rowid")
        var removed = RowKeys()
        while try select.step() {
            removed.appendScanned(select.int64(0), RowKey(collection: select.string(1), key: select.string(2)))
        }
        select.reset()
        guard !removed.isEmpty else { return removed }
        try handle.execute("DELETE FROM ydb_rows")
        return removed
    }
}
