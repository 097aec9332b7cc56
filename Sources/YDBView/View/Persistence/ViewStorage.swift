/// How persistent views are stored: one registry row per view in
/// `ydb_views`, and every view's rows in the one table `ydb_view_rows`,
/// keyed by (view id, row id) and holding the row's group and order label
/// (and its sort key, for a view of the sort-key form).
/// One table for all views means registering or dropping a view never
/// changes the schema (a schema change makes every connection re-read the
/// whole schema, so a table per view made registration slower with every
/// view). One changed row rewrites one table row: O(1) pages; commits
/// write their changed rows a batch at a time (`UnstoredRows`).
enum ViewStorage {
    /// Bump when the stored layout or label scheme changes: views stored in
    /// another format repopulate at registration. Format 2: the shared table.
    static let formatVersion = 2

    struct Registration {
        let id: Int64
        let versionTag: String
        let format: Int
        /// False once rows changed while the view was not registered.
        let isFresh: Bool
    }

    static func registration(named name: String, _ handle: SQLiteHandle) throws -> Registration? {
        let select = try handle.statement("SELECT id, version_tag, format, fresh FROM ydb_views WHERE name = ?1")
        defer { select.reset() }
        select.bind(1, name)
        guard try select.step() else { return nil }
        return Registration(id: select.int64(0), versionTag: select.string(1), format: select.int(2),
                            isFresh: select.int(3) != 0)
    }

    /// Records a new, empty, fresh view; returns its id.
    static func create(named name: String, versionTag: String, _ handle: SQLiteHandle) throws -> Int64 {
        let next = try handle.statement("SELECT coalesce(max(id), 0) + 1 FROM ydb_views")
        try next.step()
        let id = next.int64(0)
        next.reset()
        let insert = try handle.statement(
            "INSERT INTO ydb_views (name, id, version_tag, format, fresh) VALUES (?1, ?2, ?3, ?4, 1)")
        insert.bind(1, name)
        insert.bind(2, id)
        insert.bind(3, versionTag)
        insert.bind(4, formatVersion)
        try insert.run()
        return id
    }

    /// Drops a view's rows and registration (no-op when not stored).
    static func drop(named name: String, _ handle: SQLiteHandle) throws {
        guard let existing = try registration(named: name, handle) else { return }
        try deleteAll(id: existing.id, handle)
        let delete = try handle.statement("DELETE FROM ydb_views WHERE name = ?1")
        delete.bind(1, name)
        try delete.run()
    }

    /// Reads a stored view back without calling any callback. Rows come out
    /// in row id order (the table's key); each group's rows are then sorted
    /// by label, integers only, and the trees are bulk-built. Stored sort
    /// keys are kept only `withSortKeys`; `allKeyed` says whether every row
    /// had one.
    static func load(id: Int64, withSortKeys: Bool, _ handle: SQLiteHandle) throws
        -> (state: ViewState, allKeyed: Bool) {
        let owned = try handle.uncachedStatement(
            "SELECT row, grp, label, sort_key FROM ydb_view_rows WHERE view = ?1")
        let select = owned.statement
        select.bind(1, id)
        var places: [(Int64, StoredPlace)] = []
        var members: [[(label: Int64, rowid: Int64, key: SortKey?)]] = []   // by group id
        var ids = GroupIDs()
        var allKeyed = true
        while try select.step() {
            let rowid = select.int64(0), group = select.string(1), label = select.int64(2)
            let key = select.sortKey(3)
            if key == nil { allKeyed = false }
            let groupID = ids.id(for: group)
            if Int(groupID) == members.count { members.append([]) }
            members[Int(groupID)].append((label, rowid, withSortKeys ? key : nil))
            places.append((rowid, StoredPlace(groupID: groupID, label: label)))
        }
        var trees: [(GroupName, GroupTree)] = []
        for id in members.indices {
            let name = GroupName(value: ids[UInt32(id)])
            let sorted = members[id].sorted { $0.label < $1.label }
            members[id] = []
            if withSortKeys && allKeyed {
                trees.append((name, GroupTree(sortedKeyed: sorted.lazy.map {
                    ($0.label, KeyedRow(key: $0.key!, rowid: $0.rowid))
                })))
            } else {
                trees.append((name, GroupTree(sorted: sorted.lazy.map { ($0.label, $0.rowid) })))
            }
        }
        let state = ViewState(groups: trees, places: CountedTree(sorted: places), groupIDs: ids)
        return (state, allKeyed)
    }

    /// Stores every row of `state` under view `id`, in rowid order (a
    /// table the caller emptied or just made).
    static func putAll(_ state: ViewState, id: Int64, _ handle: SQLiteHandle) throws {
        var failure: Error?
        var writer = BulkPut(id: id, handle, rows: state.totalCount)
        state.forEachStoredRow { rowid, place, sortKey in
            do {
                try writer.put(rowid: rowid, group: place.group, label: place.label, sortKey: sortKey)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        try writer.finish()
    }

    static func put(id: Int64, rowid: Int64, group: String, label: Int64, sortKey: SortKey?,
                    _ handle: SQLiteHandle) throws {
        var group = group
        try group.withUTF8 { name in   // bound where they lie
            guard let sortKey else {
                return try put(id: id, rowid: rowid, group: UnsafeRawBufferPointer(name), label: label,
                               sortKey: nil, handle)
            }
            try sortKey.withUnsafeBytes { key in
                try put(id: id, rowid: rowid, group: UnsafeRawBufferPointer(name), label: label, sortKey: key, handle)
            }
        }
    }

    /// `put` of a row whose group name (UTF-8) and key SQLite reads where
    /// they lie, valid during the call.
    private static func put(id: Int64, rowid: Int64, group: UnsafeRawBufferPointer, label: Int64,
                            sortKey: UnsafeRawBufferPointer?, _ handle: SQLiteHandle) throws {
        let insert = try handle.statement(
            "INSERT OR REPLACE INTO ydb_view_rows (view, row, grp, label, sort_key) VALUES (?1, ?2, ?3, ?4, ?5)")
        bind(insert, from: 1, id: id, rowid: rowid, group: group, label: label, sortKey: sortKey)
        try insert.run()
    }

    /// Binds one row of `ydb_view_rows` to the five parameters from `first`
    /// on (view, row, grp, label, sort_key), its group name and key where
    /// they lie: they must stay there until the statement has run.
    private static func bind(_ insert: Statement, from first: Int32, id: Int64, rowid: Int64,
                             group: UnsafeRawBufferPointer, label: Int64, sortKey: UnsafeRawBufferPointer?) {
        insert.bind(first, id)
        insert.bind(first + 1, rowid)
        insert.bindInPlace(first + 2, text: group)
        insert.bind(first + 3, label)
        if let sortKey { insert.bindInPlace(first + 4, blob: sortKey) } else { insert.bindNull(first + 4) }
    }

    /// Writes many rows of one view: 64 rows an `INSERT` statement, since a
    /// population writes every row and SQLite's cost per statement was most
    /// of the cost per row. `finish()` writes what is left.
    struct BulkPut {
        static let rowsPerStatement = 64
        private let id: Int64
        private let handle: SQLiteHandle
        /// The waiting rows' group names and keys, end to end, which SQLite
        /// reads in place: binding each with a copy cost an allocation and
        /// a copy per value. A row's bytes are laid down as it is put, so
        /// no row waits holding its group name and key (a retain and a
        /// release each), and a group name the row before also had is
        /// not laid down again.
        private var bytes: [UInt8] = []
        private var pending: [(rowid: Int64, label: Int64, group: Range<Int>, key: Range<Int>?)] = []
        /// The last group name laid down in `bytes`, and where.
        private var lastGroup: (name: String, span: Range<Int>)?
        /// Fewer rows were announced than fill one statement: each is put
        /// as it comes, with no buffer (which a one-row commit would pay
        /// for nothing).
        private let oneByOne: Bool
        /// The statement, once the first flush has fetched it: later flushes
        /// bind all of its parameters again, so they skip the handle's
        /// lookup (a hash of the statement's kilobyte of SQL) and its
        /// clearing of 320 bindings.
        private var statement: Statement?

        /// `rows`: how many rows will be put, when known.
        init(id: Int64, _ handle: SQLiteHandle, rows: Int? = nil) {
            self.id = id
            self.handle = handle
            oneByOne = rows.map { $0 < Self.rowsPerStatement } ?? false
            if !oneByOne { pending.reserveCapacity(Self.rowsPerStatement) }
        }

        mutating func put(rowid: Int64, group: String, label: Int64, sortKey: SortKey?) throws {
            if oneByOne {
                return try ViewStorage.put(id: id, rowid: rowid, group: group, label: label, sortKey: sortKey, handle)
            }
            let groupSpan: Range<Int>
            if let lastGroup, bytesEqual(lastGroup.name, group) {
                groupSpan = lastGroup.span
            } else {
                let start = bytes.count
                bytes.append(contentsOf: group.utf8)
                groupSpan = start ..< bytes.count
                lastGroup = (group, groupSpan)
            }
            var keySpan: Range<Int>?
            if let sortKey {
                let start = bytes.count
                sortKey.withUnsafeBytes { bytes.append(contentsOf: $0) }
                keySpan = start ..< bytes.count
            }
            pending.append((rowid, label, groupSpan, keySpan))
            if pending.count == Self.rowsPerStatement { try flush() }
        }

        mutating func finish() throws {
            try bytes.withUnsafeBytes { buffer in
                for row in pending {
                    try ViewStorage.put(id: id, rowid: row.rowid, group: UnsafeRawBufferPointer(rebasing: buffer[row.group]),
                                        label: row.label, sortKey: row.key.map { UnsafeRawBufferPointer(rebasing: buffer[$0]) },
                                        handle)
                }
            }
            clear()
        }

        private mutating func clear() {
            pending.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            lastGroup = nil
        }

        private static let statementText = "INSERT OR REPLACE INTO ydb_view_rows (view, row, grp, label, sort_key) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?)", count: rowsPerStatement).joined(separator: ", ")

        private mutating func flush() throws {
            let insert: Statement
            if let statement {
                statement.reset()
                insert = statement
            } else {
                insert = try handle.statement(Self.statementText)
                statement = insert
            }
            try bytes.withUnsafeBytes { buffer in
                for index in pending.indices {
                    let row = pending[index]
                    ViewStorage.bind(insert, from: Int32(index * 5) + 1, id: id, rowid: row.rowid,
                                     group: UnsafeRawBufferPointer(rebasing: buffer[row.group]), label: row.label,
                                     sortKey: row.key.map { UnsafeRawBufferPointer(rebasing: buffer[$0]) })
                }
                try insert.run()
            }
            clear()
        }
    }

    /// Writes the changed rows `rows` (each one's last place, or its
    /// removal, by row id) to view `id`'s table, in row id order.
    static func write(_ rows: [Int64: UnstoredRows.Row], id: Int64, _ handle: SQLiteHandle) throws {
        var writer = BulkPut(id: id, handle, rows: rows.count)
        // The ids sorted alone, then each row looked up: sorting the
        // (id, row) pairs moved every row's group and key along (1.1k of
        // the 5.7k instructions a row of a 30,000-row batch's storage write).
        for rowid in rows.keys.sorted() {
            switch rows[rowid]! {
            case .put(let group, let label, let sortKey):
                try writer.put(rowid: rowid, group: group, label: label, sortKey: sortKey)
            case .removed:
                try delete(id: id, rowid: rowid, handle)
            }
        }
        try writer.finish()
    }

    static func delete(id: Int64, rowid: Int64, _ handle: SQLiteHandle) throws {
        let delete = try handle.statement("DELETE FROM ydb_view_rows WHERE view = ?1 AND row = ?2")
        delete.bind(1, id)
        delete.bind(2, rowid)
        try delete.run()
    }

    static func deleteAll(id: Int64, _ handle: SQLiteHandle) throws {
        let delete = try handle.statement("DELETE FROM ydb_view_rows WHERE view = ?1")
        delete.bind(1, id)
        try delete.run()
    }

    /// A stored view's rows: rowid → (group, label) (for the invariant check).
    static func places(id: Int64, _ handle: SQLiteHandle) throws -> [Int64: (String, Int64)] {
        var stored: [Int64: (String, Int64)] = [:]
        let owned = try handle.uncachedStatement("SELECT row, grp, label FROM ydb_view_rows WHERE view = ?1")
        owned.statement.bind(1, id)
        while try owned.statement.step() {
            stored[owned.statement.int64(0)] = (owned.statement.string(1), owned.statement.int64(2))
        }
        return stored
    }

    /// Marks a stored view fresh (it holds every row and saw every change)
    /// or not (it is repopulated when next registered).
    static func setFresh(_ fresh: Bool, id: Int64, _ handle: SQLiteHandle) throws {
        let update = try handle.statement("UPDATE ydb_views SET fresh = ?1 WHERE id = ?2")
        update.bind(1, fresh ? 1 : 0)
        update.bind(2, id)
        try update.run()
    }

    static func setVersionTag(_ versionTag: String, id: Int64, _ handle: SQLiteHandle) throws {
        let update = try handle.statement("UPDATE ydb_views SET version_tag = ?1 WHERE id = ?2")
        update.bind(1, versionTag)
        update.bind(2, id)
        try update.run()
    }
}

extension Statement {
    /// A sort key as a blob, nil as NULL, bound without an array in between.
    func bind(_ index: Int32, _ key: SortKey?) {
        guard let key else { bindNull(index); return }
        key.withUnsafeBytes { bind(index, bytes: $0) }
    }

    /// The sort key stored in `column`, nil for NULL.
    func sortKey(_ column: Int32) -> SortKey? {
        withBlob(column) { buffer in buffer.map { SortKey(copying: $0) } }
    }
}
