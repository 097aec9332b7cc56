/// The on-disk layout. Bump `currentVersion` and add a migration step when
/// it changes; a database written by a newer release is refused.
enum Schema {
    static let currentVersion = 1

    static let create = """
        CREATE TABLE IF NOT EXISTS ydb_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS ydb_rows (
            rowid INTEGER PRIMARY KEY,
            collection TEXT NOT NULL,
            key TEXT NOT NULL,
            object BLOB NOT NULL,
            metadata BLOB,
            UNIQUE (collection, key));
        CREATE TABLE IF NOT EXISTS ydb_views (
            name TEXT PRIMARY KEY,
            id INTEGER NOT NULL UNIQUE,
            version_tag TEXT NOT NULL,
            format INTEGER NOT NULL);
        INSERT OR IGNORE INTO ydb_meta (name, value) VALUES ('snapshot', 0);
        """

    /// Creates or checks the schema; returns the current snapshot number.
    static func prepare(_ handle: SQLiteHandle) throws -> UInt64 {
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
                try handle.execute("INSERT INTO ydb_meta (name, value) VALUES ('schema_version', \(currentVersion))")
            }
            let snapshot = try readSnapshot(handle)
            try handle.execute("COMMIT")
            return snapshot
        } catch {
            try? handle.execute("ROLLBACK")
            throw error
        }
    }

    static func readSnapshot(_ handle: SQLiteHandle) throws -> UInt64 {
        let select = try handle.statement("SELECT value FROM ydb_meta WHERE name = 'snapshot'")
        defer { select.reset() }
        guard try select.step() else { throw YDBError(.corrupt, "snapshot number missing") }
        return UInt64(bitPattern: select.int64(0))
    }

    static func writeSnapshot(_ handle: SQLiteHandle, _ snapshot: UInt64) throws {
        let update = try handle.statement("UPDATE ydb_meta SET value = ?1 WHERE name = 'snapshot'")
        update.bind(1, Int64(bitPattern: snapshot))
        try update.run()
    }
}
