/// What one commit changed, as shared-mode processes write it into the
/// database file for each other (`ydb_commit_log`, docs/behaviour.md,
/// "Several processes"): the rows of its notification, and every row id
/// it changed with the row's names, so that another process can bring its
/// views forward from the rows as they are now, and name the rows the
/// commit removed, which are no longer there to read.
struct LoggedCommit: Equatable {
    /// One row the commit changed: how, whether the commit inserted it,
    /// and its names.
    struct Row: Equatable {
        var rowid: Int64
        var kind: RowChangeKind
        var inserted: Bool
        var rowKey: RowKey
    }

    var snapshot: UInt64
    /// The notification's `changedRows`.
    var changedRows: [RowKey: RowChangeKind]
    var removedCollections: [String]
    var removedAll: Bool
    /// Every row id changed, removed ones included, in the order of their
    /// first change.
    var rows: [Row]
}

extension LoggedCommit {
    /// Consecutive commits as one: every row id once, with every way it
    /// changed (new if any commit inserted it), and the rows a remove-all
    /// among them removed (nil when none did: after one, every row from
    /// before it is gone).
    static func merged(_ commits: [LoggedCommit]) -> (rows: [Row], removedAll: RowKeys?) {
        var merged: [Row] = []
        var positions: [Int64: Int] = [:]
        var removedAll: RowKeys?
        for commit in commits {
            if commit.removedAll && removedAll == nil { removedAll = RowKeys() }
            for row in commit.rows {
                if commit.removedAll && row.kind.contains(.removed) { removedAll?[row.rowid] = row.rowKey }
                if let position = positions[row.rowid] {
                    merged[position].kind.formUnion(row.kind)
                    merged[position].inserted = merged[position].inserted || row.inserted
                } else {
                    positions[row.rowid] = merged.count
                    merged.append(row)
                }
            }
        }
        return (merged, removedAll)
    }
}

/// The table of logged commits, one row per commit in snapshot order,
/// written in the same SQLite transaction as the rows it describes. Only
/// shared mode writes it; exclusive mode empties it when it opens. Beside
/// it, `ydb_shared_views`: which live process registered which view with
/// which version tag (`Database.recordViewTags`).
enum CommitLog {
    static let create = """
        CREATE TABLE IF NOT EXISTS ydb_commit_log (
            snapshot INTEGER PRIMARY KEY,
            body BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS ydb_shared_views (
            name TEXT NOT NULL,
            slot INTEGER NOT NULL,
            instance INTEGER NOT NULL,
            version_tag TEXT NOT NULL,
            PRIMARY KEY (name, slot)) WITHOUT ROWID;
        """

    /// The latest logged snapshot, or nil for an empty log.
    static func latestSnapshot(_ handle: SQLiteHandle) throws -> UInt64? {
        let select = try handle.statement("SELECT max(snapshot) FROM ydb_commit_log")
        defer { select.reset() }
        guard try select.step(), !select.isNull(0) else { return nil }
        return UInt64(bitPattern: select.int64(0))
    }

    /// What a shared-mode transaction looks at as it begins, in one
    /// statement: the latest logged snapshot (nil for an empty log), and
    /// whether other SQLite clients wrote rows not folded yet
    /// (`ExternalChanges`).
    static func state(_ handle: SQLiteHandle) throws -> (latest: UInt64?, externalWrites: Bool) {
        let select = try handle.statement(
            "SELECT (SELECT max(snapshot) FROM ydb_commit_log), EXISTS (SELECT 1 FROM ydb_external_changes)")
        defer { select.reset() }
        guard try select.step() else { return (nil, false) }
        return (select.isNull(0) ? nil : UInt64(bitPattern: select.int64(0)), select.int(1) != 0)
    }

    /// The oldest logged snapshot, or nil for an empty log.
    static func oldestSnapshot(_ handle: SQLiteHandle) throws -> UInt64? {
        let select = try handle.statement("SELECT min(snapshot) FROM ydb_commit_log")
        defer { select.reset() }
        guard try select.step(), !select.isNull(0) else { return nil }
        return UInt64(bitPattern: select.int64(0))
    }

    static func append(_ commit: LoggedCommit, _ handle: SQLiteHandle) throws {
        let insert = try handle.statement("INSERT INTO ydb_commit_log (snapshot, body) VALUES (?1, ?2)")
        insert.bind(1, Int64(bitPattern: commit.snapshot))
        insert.bind(2, encode(commit))
        try insert.run()
    }

    /// A mark that numbers are handed out from `snapshot` on: an entry
    /// that changed nothing (the log's first, when another mode left the
    /// file at a later number than the log's last).
    static func appendMark(_ snapshot: UInt64, _ handle: SQLiteHandle) throws {
        try append(LoggedCommit(snapshot: snapshot, changedRows: [:], removedCollections: [], removedAll: false,
                                rows: []), handle)
    }

    /// The entries after `snapshot`, up to `last`, oldest first.
    static func entries(after snapshot: UInt64, through last: UInt64, _ handle: SQLiteHandle) throws -> [LoggedCommit] {
        let select = try handle.statement(
            "SELECT snapshot, body FROM ydb_commit_log WHERE snapshot > ?1 AND snapshot <= ?2 ORDER BY snapshot")
        defer { select.reset() }
        select.bind(1, Int64(bitPattern: snapshot))
        select.bind(2, Int64(bitPattern: last))
        var found: [LoggedCommit] = []
        while try select.step() {
            let number = UInt64(bitPattern: select.int64(0))
            guard let commit = select.withBlob(1, { $0.flatMap { decode(number, $0) } }) else {
                throw YDBError(.corrupt, "the commit log's entry for snapshot \(number) cannot be read")
            }
            found.append(commit)
        }
        return found
    }

    /// Drops the entries numbered `snapshot` or less.
    static func remove(through snapshot: UInt64, _ handle: SQLiteHandle) throws {
        let delete = try handle.statement("DELETE FROM ydb_commit_log WHERE snapshot <= ?1")
        delete.bind(1, Int64(bitPattern: snapshot))
        try delete.run()
    }

    static func removeAll(_ handle: SQLiteHandle) throws {
        try handle.execute("DELETE FROM ydb_commit_log")
    }

    // MARK: Encoding

    /// Unsigned LEB128 numbers and length-prefixed UTF-8 names:
    /// flags (1: remove-all), removed collections, the notification's rows
    /// (names, kind), the row ids (id, kind, inserted, names).
    static func encode(_ commit: LoggedCommit) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + commit.rows.count * 32)
        func number(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                out.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            out.append(UInt8(value))
        }
        func name(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                number(UInt64(bytes.count))
                out.append(contentsOf: bytes)
            }
        }
        number(commit.removedAll ? 1 : 0)
        number(UInt64(commit.removedCollections.count))
        for collection in commit.removedCollections { name(collection) }
        number(UInt64(commit.changedRows.count))
        for (rowKey, kind) in commit.changedRows {
            name(rowKey.collection)
            name(rowKey.key)
            number(UInt64(kind.rawValue))
        }
        number(UInt64(commit.rows.count))
        for row in commit.rows {
            number(UInt64(bitPattern: row.rowid))
            number(UInt64(row.kind.rawValue) << 1 | (row.inserted ? 1 : 0))
            name(row.rowKey.collection)
            name(row.rowKey.key)
        }
        return out
    }

    /// The entry `encode` wrote, or nil when `bytes` are not one.
    static func decode(_ snapshot: UInt64, _ bytes: UnsafeRawBufferPointer) -> LoggedCommit? {
        var at = 0
        func number() -> UInt64? {
            var value: UInt64 = 0, shift: UInt64 = 0
            while at < bytes.count, shift < 64 {
                let byte = bytes[at]
                at += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }
        func count() -> Int? {
            // Every counted item takes at least one byte: a larger count is
            // not an entry (and must not size an allocation).
            guard let value = number(), value <= UInt64(bytes.count - at) else { return nil }
            return Int(value)
        }
        func name() -> String? {
            guard let length = count() else { return nil }
            defer { at += length }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<at + length]), as: UTF8.self)
        }
        guard let flags = number(), let removedCount = count() else { return nil }
        var removedCollections: [String] = []
        for _ in 0..<removedCount {
            guard let collection = name() else { return nil }
            removedCollections.append(collection)
        }
        guard let changedCount = count() else { return nil }
        var changedRows: [RowKey: RowChangeKind] = [:]
        changedRows.reserveCapacity(changedCount)
        for _ in 0..<changedCount {
            guard let collection = name(), let key = name(), let kind = number(), kind <= 0xFF else { return nil }
            changedRows[RowKey(collection: collection, key: key)] = RowChangeKind(rawValue: UInt8(kind))
        }
        guard let rowCount = count() else { return nil }
        var rows: [LoggedCommit.Row] = []
        rows.reserveCapacity(rowCount)
        for _ in 0..<rowCount {
            guard let rowid = number(), let flagsAndKind = number(), flagsAndKind <= 0x1FF,
                  let collection = name(), let key = name() else { return nil }
            rows.append(LoggedCommit.Row(rowid: Int64(bitPattern: rowid),
                                         kind: RowChangeKind(rawValue: UInt8(flagsAndKind >> 1)),
                                         inserted: flagsAndKind & 1 == 1,
                                         rowKey: RowKey(collection: collection, key: key)))
        }
        guard at == bytes.count else { return nil }
        return LoggedCommit(snapshot: snapshot, changedRows: changedRows, removedCollections: removedCollections,
                            removedAll: flags & 1 == 1, rows: rows)
    }
}
