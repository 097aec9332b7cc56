/// The on-disk layout. Bump `currentVersion` and add a migration step when
/// it changes; a database written by a newer release is refused.
enum Schema {
    static let currentVersion = 5

    /// The row table as of version 4 (see `migrateToVersion4`).
    static let rowsTable = """
        CREATE TABLE IF NOT EXISTS ydb_rows (
            rowid INTEGER PRIMARY KEY,
            collection TEXT NOT NULL,
            key TEXT NOT NULL,
            object BLOB NOT NULL,
            metadata BLOB,
            UNIQUE (collection, key));
        """

    /// Version 1's tables, except that a new file gets version 4's row table
    /// at once. The migrations below add the rest.
    static let create = """
        CREATE TABLE IF NOT EXISTS ydb_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        \(rowsTable)
        CREATE TABLE IF NOT EXISTS ydb_views (
            name TEXT PRIMARY KEY,
            id INTEGER NOT NULL UNIQUE,
            version_tag TEXT NOT NULL,
            format INTEGER NOT NULL);
        INSERT OR IGNORE INTO ydb_meta (name, value) VALUES ('snapshot', 0);
        """

    /// Counting the row writes of other programs (see version 2; version 5
    /// records them too).
    static let rowTriggers = """
        CREATE TRIGGER IF NOT EXISTS ydb_rows_inserted AFTER INSERT ON ydb_rows
            BEGIN UPDATE ydb_meta SET value = value + 1 WHERE name = 'row_version'; END;
        CREATE TRIGGER IF NOT EXISTS ydb_rows_updated AFTER UPDATE ON ydb_rows
            BEGIN UPDATE ydb_meta SET value = value + 1 WHERE name = 'row_version'; END;
        CREATE TRIGGER IF NOT EXISTS ydb_rows_deleted AFTER DELETE ON ydb_rows
            BEGIN UPDATE ydb_meta SET value = value + 1 WHERE name = 'row_version'; END;
        """

    /// Version 2: views know when they are stale (see docs/behaviour.md, "Stale views"),
    /// and all views share one table.
    /// `row_version` counts every change to `ydb_rows` by any other SQLite
    /// client (triggers; this library's connections do not fire them, since
    /// version 0.2); `row_version_seen` is its value when this library last
    /// opened the database, so a difference at open means someone else
    /// changed rows. `ydb_views.fresh` is 1 while a stored view
    /// has seen every row change; version-1 views start stale.
    static let migrateToVersion2 = """
        ALTER TABLE ydb_views ADD COLUMN fresh INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE ydb_view_rows (
            view INTEGER NOT NULL,
            row INTEGER NOT NULL,
            grp TEXT NOT NULL,
            label INTEGER NOT NULL,
            PRIMARY KEY (view, row)) WITHOUT ROWID;
        INSERT OR IGNORE INTO ydb_meta (name, value) VALUES ('row_version', 0), ('row_version_seen', 0);
        \(rowTriggers)
        UPDATE ydb_meta SET value = 2 WHERE name = 'schema_version';
        """

    /// Version 3: views of the sort-key form store each row's key.
    static let migrateToVersion3 = """
        ALTER TABLE ydb_view_rows ADD COLUMN sort_key BLOB;
        UPDATE ydb_meta SET value = 3 WHERE name = 'schema_version';
        """

    /// Version 4: row ids are handed out by the library (`largestRowid`)
    /// instead of SQLite's AUTOINCREMENT, whose counter is a row of
    /// `sqlite_sequence`: one more page written by every commit that inserts.
    /// Row ids are still never reused: views and changesets identify rows by
    /// id across commits, so a new row must not take a removed row's id.
    /// The largest id ever used is kept in `ydb_meta` ('largest_rowid') by
    /// the commits that delete rows, the only ones that can lower the
    /// table's own largest id. A version-3 table is copied, ids included,
    /// into one declared without AUTOINCREMENT; its counter becomes
    /// 'largest_rowid'. (SQLite cannot drop AUTOINCREMENT from a table.)
    static let migrateToVersion4 = """
        INSERT OR REPLACE INTO ydb_meta (name, value) VALUES ('largest_rowid', max(
            coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'ydb_rows'), 0),
            coalesce((SELECT max(rowid) FROM ydb_rows), 0)));
        ALTER TABLE ydb_rows RENAME TO ydb_rows_version3;
        \(rowsTable)
        INSERT INTO ydb_rows (rowid, collection, key, object, metadata)
            SELECT rowid, collection, key, object, metadata FROM ydb_rows_version3;
        DROP TABLE ydb_rows_version3;
        \(rowTriggers)
        """

    /// Version 5: the row writes of other SQLite clients are recorded, row
    /// by row, in `ydb_external_changes` (besides being counted), so that
    /// shared mode turns them into commits every process replays
    /// (`ExternalChanges`). An update that changes a row's id or names is
    /// recorded as its removal and a new row. `ydb_views.shared_snapshot`:
    /// the snapshot a shared-mode image of a view holds (`SharedViewImages`).
    static let migrateToVersion5 = """
        CREATE TABLE IF NOT EXISTS ydb_external_changes (
            seq INTEGER PRIMARY KEY,
            row INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            collection TEXT NOT NULL,
            key TEXT NOT NULL);
        DROP TRIGGER IF EXISTS ydb_rows_inserted;
        DROP TRIGGER IF EXISTS ydb_rows_updated;
        DROP TRIGGER IF EXISTS ydb_rows_deleted;
        CREATE TRIGGER ydb_rows_inserted AFTER INSERT ON ydb_rows BEGIN
            UPDATE ydb_meta SET value = value + 1 WHERE name = 'row_version';
            INSERT INTO ydb_external_changes (row, kind, collection, key)
                VALUES (NEW.rowid, 1, NEW.collection, NEW.key);
        END;
        CREATE TRIGGER ydb_rows_updated AFTER UPDATE ON ydb_rows BEGIN
            UPDATE ydb_meta SET value = value + 1 WHERE name = 'row_version';
            INSERT INTO ydb_external_changes (row, kind, collection, key)
                SELECT OLD.rowid, 3, OLD.collection, OLD.key
                WHERE OLD.rowid != NEW.rowid OR OLD.collection IS NOT NEW.collection OR OLD.key IS NOT NEW.key;
            INSERT INTO ydb_external_changes (row, kind, collection, key)
                SELECT NEW.rowid,
                    CASE WHEN OLD.rowid != NEW.rowid OR OLD.collection IS NOT NEW.collection
                              OR OLD.key IS NOT NEW.key THEN 1 ELSE 2 END,
                    NEW.collection, NEW.key;
        END;
        CREATE TRIGGER ydb_rows_deleted AFTER DELETE ON ydb_rows BEGIN
            UPDATE ydb_meta SET value = value + 1 WHERE name = 'row_version';
            INSERT INTO ydb_external_changes (row, kind, collection, key)
                VALUES (OLD.rowid, 3, OLD.collection, OLD.key);
        END;
        ALTER TABLE ydb_views ADD COLUMN shared_snapshot INTEGER;
        UPDATE ydb_meta SET value = 5 WHERE name = 'schema_version';
        """

    /// What `prepare` finds: the snapshot number to continue from (the
    /// stored reservation, see `reserveSnapshots`), the largest row id ever
    /// used, and the largest row id stored in `ydb_meta` (which may be lower:
    /// the table itself then holds the largest).
    struct Stored {
        var snapshot: UInt64
        var largestRowid: Int64
        var storedLargestRowid: Int64
    }

    /// Creates or checks the schema and reads what the engine continues from.
    /// `shared`: opened in shared mode, which numbers commits by the commit
    /// log (`CommitLog`); exclusive mode numbers them by the reservation
    /// in `ydb_meta` and empties the log, which it does not write.
    static func prepare(_ handle: SQLiteHandle, shared: Bool) throws -> Stored {
        try handle.execute("BEGIN IMMEDIATE")
        do {
            try handle.execute(create)
            let select = try handle.statement("SELECT value FROM ydb_meta WHERE name = 'schema_version'")
            let stored = try select.step() ? select.int(0) : nil
            select.reset()
            if let stored, stored > currentVersion {
                throw YDBError(.corrupt, "database schema version \(stored) is newer than this library (\(currentVersion))")
            }
            if stored == nil {
                try handle.execute("INSERT INTO ydb_meta (name, value) VALUES ('schema_version', 1)")
            }
            if (stored ?? 1) < 2 {
                try dropVersion1ViewTables(handle)
                try handle.execute(migrateToVersion2)
            }
            if (stored ?? 1) < 3 { try handle.execute(migrateToVersion3) }
            if (stored ?? 1) < 4 {
                // A new file's row table is already version 4's.
                if try rowsTableHasAutoincrement(handle) { try handle.execute(migrateToVersion4) }
                try handle.execute("""
                    INSERT OR IGNORE INTO ydb_meta (name, value) VALUES ('largest_rowid', 0);
                    UPDATE ydb_meta SET value = 4 WHERE name = 'schema_version';
                    """)
            }
            if (stored ?? 1) < 5 { try handle.execute(migrateToVersion5) }
            // Rows changed by another program since this library's last commit:
            // no stored extension (view, full-text index) saw them.
            if try value("row_version", handle) != value("row_version_seen", handle) {
                try markEveryStoredExtensionStale(handle)
                // Shared mode turns the recorded writes into commits; in
                // exclusive mode, marking the stored extensions stale is
                // all there is to do with them.
                if !shared { try handle.execute("DELETE FROM ydb_external_changes") }
                try handle.execute("""
                    UPDATE ydb_meta SET value = (SELECT value FROM ydb_meta WHERE name = 'row_version')
                        WHERE name = 'row_version_seen';
                    """)
            }
            var snapshot = UInt64(bitPattern: try value("snapshot", handle) ?? 0)
            try handle.execute(CommitLog.create)
            let logged = try CommitLog.latestSnapshot(handle)
            if shared {
                // The log's last number is the latest; a mark continues it
                // from the reservation exclusive mode left.
                if let logged, logged >= snapshot {
                    snapshot = logged
                } else {
                    try CommitLog.appendMark(snapshot, handle)
                }
            } else if let logged {
                if logged > snapshot {
                    snapshot = logged
                    try reserveSnapshots(handle, through: logged)
                }
                try CommitLog.removeAll(handle)
            }
            let storedLargestRowid = try value("largest_rowid", handle) ?? 0
            let largestRowid = max(storedLargestRowid, try RowReader(handle: handle).largestRowid())
            try handle.execute("COMMIT")
            return Stored(snapshot: snapshot, largestRowid: largestRowid, storedLargestRowid: storedLargestRowid)
        } catch {
            try? handle.execute("ROLLBACK")
            throw error
        }
    }

    private static func rowsTableHasAutoincrement(_ handle: SQLiteHandle) throws -> Bool {
        let select = try handle.statement("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'ydb_rows'")
        defer { select.reset() }
        return try select.step() && select.string(0).uppercased().contains("AUTOINCREMENT")
    }

    /// Version 1 kept each view in a table of its own (`ydb_view_<id>`).
    /// Their contents are not carried over: the views start stale and
    /// repopulate into the shared table when registered.
    private static func dropVersion1ViewTables(_ handle: SQLiteHandle) throws {
        let select = try handle.statement(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'ydb_view_[0-9]*'")
        var tables: [String] = []
        while try select.step() { tables.append(select.string(0)) }
        select.reset()
        for table in tables { try handle.execute("DROP TABLE \(table)") }
    }

    private static func value(_ name: String, _ handle: SQLiteHandle) throws -> Int64? {
        let select = try handle.statement("SELECT value FROM ydb_meta WHERE name = ?1")
        defer { select.reset() }
        select.bind(1, name)
        return try select.step() ? select.int64(0) : nil
    }

    /// The largest row id `ydb_meta` holds (see `migrateToVersion4`).
    static func storedLargestRowid(_ handle: SQLiteHandle) throws -> Int64 {
        try value("largest_rowid", handle) ?? 0
    }

    /// The largest row id `ydb_meta` holds and the table's own, in one
    /// statement (shared mode reads both as each write begins).
    static func largestRowids(_ handle: SQLiteHandle) throws -> (stored: Int64, table: Int64) {
        let select = try handle.statement(
            "SELECT (SELECT value FROM ydb_meta WHERE name = 'largest_rowid'), (SELECT max(rowid) FROM ydb_rows)")
        defer { select.reset() }
        guard try select.step() else { return (0, 0) }
        return (select.int64(0), select.int64(1))
    }

    /// Records the largest row id ever used, for a commit whose deletions
    /// leave the table's own largest id below it (see `migrateToVersion4`).
    static func writeLargestRowid(_ handle: SQLiteHandle, _ rowid: Int64) throws {
        let update = try handle.statement("UPDATE ydb_meta SET value = ?1 WHERE name = 'largest_rowid'")
        update.bind(1, rowid)
        try update.run()
    }

    /// How many snapshot numbers one write of `ydb_meta` reserves.
    static let snapshotsReservedAtOnce: UInt64 = 1024

    /// Records that no snapshot number up to `last` may be handed out again.
    /// `ydb_meta`'s 'snapshot' is not the latest commit's number but a
    /// ceiling on every number handed out: the commit that first goes past
    /// the ceiling raises it by `snapshotsReservedAtOnce`, so the other
    /// commits write no page of `ydb_meta` (it was one page of the four an
    /// insert wrote). A reopened database continues from the ceiling, so
    /// numbers never repeat, even after a crash; they may jump. (A
    /// database written by an older release stores its last commit's
    /// number, which is a ceiling too.)
    /// `row_version_seen` needs no update: the engine's connections fire no
    /// triggers (`SQLiteHandle.init`), so `row_version` moves only when
    /// another program writes rows, and the difference stays until the next
    /// open marks the stored views stale.
    static func reserveSnapshots(_ handle: SQLiteHandle, through last: UInt64) throws {
        let update = try handle.statement("UPDATE ydb_meta SET value = ?1 WHERE name = 'snapshot'")
        update.bind(1, Int64(bitPattern: last))
        try update.run()
    }

    // MARK: Stored extensions

    /// Whether table `name` exists (a registry created on first use).
    static func tableExists(_ name: String, _ handle: SQLiteHandle) throws -> Bool {
        let select = try handle.statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
        defer { select.reset() }
        select.bind(1, name)
        return try select.step()
    }

    /// The registry tables of every kind that exists in this file.
    private static func existingRegistries(_ handle: SQLiteHandle) throws -> [StoredExtensionRegistry] {
        try StoredExtensionRegistry.allCases.filter { try !$0.isCreatedOnFirstUse || tableExists($0.table, handle) }
    }

    /// Every stored extension missed a change (another program wrote rows).
    private static func markEveryStoredExtensionStale(_ handle: SQLiteHandle) throws {
        for registry in try existingRegistries(handle) {
            try handle.execute("UPDATE \(registry.table) SET fresh = 0")
        }
    }

    /// Whether any stored extension (a persistent view, a full-text index)
    /// is still fresh. At open: such extensions go stale at the first
    /// commit that changes rows without them registered.
    static func anyStoredExtensionFresh(_ handle: SQLiteHandle) throws -> Bool {
        for registry in try existingRegistries(handle) {
            let select = try handle.statement(registry.anyFreshSQL)
            defer { select.reset() }
            if try select.step() { return true }
        }
        return false
    }

    /// Marks every stored extension stale except `registered` (where each
    /// is listed, and its id there): the others miss the row changes of the
    /// commit running this.
    static func markStoredExtensionsStale(except registered: [(StoredExtensionRegistry, Int64)],
                                          _ handle: SQLiteHandle) throws {
        for registry in try existingRegistries(handle) {
            let kept = registered.filter { $0.0 == registry }.map { String($0.1) }.joined(separator: ",")
            try handle.execute("UPDATE \(registry.table) SET fresh = 0 WHERE fresh = 1 AND id NOT IN (\(kept))")
        }
    }
}

/// The tables that list stored extensions, one per kind, each with an `id`
/// and a `fresh` column (see "Stale views" in docs/behaviour.md). Ids are
/// unique within one table only.
enum StoredExtensionRegistry: CaseIterable {
    case views
    case fullTextIndexes

    var table: String {
        switch self {
        case .views: "ydb_views"
        case .fullTextIndexes: "ydb_fts_indexes"
        }
    }

    /// A kind added after the schema's last version creates its table when
    /// first registered: files that never use it carry no trace of it.
    var isCreatedOnFirstUse: Bool { self != .views }

    /// Literals, which the statement cache finds by their address.
    fileprivate var anyFreshSQL: String {
        switch self {
        case .views: "SELECT 1 FROM ydb_views WHERE fresh = 1 LIMIT 1"
        case .fullTextIndexes: "SELECT 1 FROM ydb_fts_indexes WHERE fresh = 1 LIMIT 1"
        }
    }
}
