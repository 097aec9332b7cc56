/// The row writes of other SQLite clients (the `sqlite3` shell, a sync
/// engine writing `ydb_rows`), recorded by the schema's triggers in
/// `ydb_external_changes` (`Schema.migrateToVersion5`). The engine's own
/// connections fire no triggers. In shared mode they are turned into
/// logged commits (`fold`), which every process then replays like any
/// other process's commits.
enum ExternalChanges {
    /// Whether any write is recorded and not yet folded.
    static func any(_ handle: SQLiteHandle) throws -> Bool {
        let select = try handle.statement("SELECT 1 FROM ydb_external_changes LIMIT 1")
        defer { select.reset() }
        return try select.step()
    }

    private enum Kind: Int64 {
        case inserted = 1, updated = 2, removed = 3
    }

    /// Turns the recorded writes into commits numbered from `latest + 1`,
    /// in the order they were made, and empties the record. In a write
    /// transaction (the caller appends the commits to the log in it).
    ///
    /// Row ids are never reused, by any writer: SQLite gives a client's
    /// new row the table's largest id plus one, which may be the id of a
    /// row removed earlier; such a row gets a fresh id here. A client
    /// should name rows by collection and key, not by row id.
    static func fold(_ handle: SQLiteHandle, after latest: UInt64) throws -> [LoggedCommit] {
        var recorded: [(seq: Int64, rowid: Int64, kind: Kind, rowKey: RowKey)] = []
        let select = try handle.statement("SELECT seq, row, kind, collection, key FROM ydb_external_changes ORDER BY seq")
        while try select.step() {
            guard let kind = Kind(rawValue: select.int64(2)) else { continue }
            recorded.append((select.int64(0), select.int64(1), kind,
                             RowKey(collection: select.string(3), key: select.string(4))))
        }
        select.reset()
        guard let lastSeq = recorded.last?.seq else { return [] }
        // Every id used so far, by anyone: the table's, the one kept in
        // `ydb_meta`, and those the record names.
        let usedBefore = try Schema.storedLargestRowid(handle)
        var largest = max(usedBefore, try RowReader(handle: handle).largestRowid(),
                          recorded.map(\.rowid).max() ?? 0)
        var renamed: [Int64: Int64] = [:]
        var removedHere: Set<Int64> = []
        var commits: [LoggedCommit] = []
        var current = LoggedCommit(snapshot: latest + 1, changedRows: [:], removedCollections: [], removedAll: false,
                                   rows: [])
        var positions: [Int64: Int] = [:]
        for change in recorded {
            var rowid = renamed[change.rowid] ?? change.rowid
            if change.kind == .inserted && (rowid <= usedBefore || removedHere.contains(rowid)) {
                largest += 1
                let update = try handle.statement("UPDATE ydb_rows SET rowid = ?1 WHERE rowid = ?2")
                update.bind(1, largest)
                update.bind(2, rowid)
                try update.run()
                if handle.changes == 1 {
                    renamed[change.rowid] = largest
                    rowid = largest
                }
            }
            if change.kind == .removed {
                renamed.removeValue(forKey: change.rowid)
                removedHere.insert(rowid)
            }
            // A row id removed and then inserted again starts a commit of
            // its own: one commit names a row id once.
            if change.kind == .inserted, let position = positions[rowid], current.rows[position].kind.contains(.removed) {
                commits.append(current)
                current = LoggedCommit(snapshot: current.snapshot + 1, changedRows: [:], removedCollections: [],
                                       removedAll: false, rows: [])
                positions = [:]
            }
            let kind: RowChangeKind = change.kind == .removed ? .removed : .set
            current.changedRows[change.rowKey, default: []].formUnion(kind)
            if let position = positions[rowid] {
                current.rows[position].kind.formUnion(kind)
                if change.kind == .inserted { current.rows[position].inserted = true }
            } else {
                positions[rowid] = current.rows.count
                current.rows.append(LoggedCommit.Row(rowid: rowid, kind: kind, inserted: change.kind == .inserted,
                                                     rowKey: change.rowKey))
            }
        }
        commits.append(current)
        let delete = try handle.statement("DELETE FROM ydb_external_changes WHERE seq <= ?1")
        delete.bind(1, lastSeq)
        try delete.run()
        if largest > usedBefore { try Schema.writeLargestRowid(handle, largest) }
        return commits
    }
}
