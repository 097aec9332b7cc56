import Foundation
import YDBView

/// How many times the view's callbacks ran; the view's closures bump these.
/// Counted from the benchmark's one writing thread only.
final class CallCounters: @unchecked Sendable {
    var grouping = 0
    var sorting = 0
    var total: Int { grouping + sorting }
    func reset() { grouping = 0; sorting = 0 }
}

/// The data every benchmark uses: `n` rows in collection "items", keys
/// "k<i>", each object 12 bytes: a 4-byte group number and an 8-byte rank.
/// The view groups by the group number ("g0", "g1", ...) and sorts by
/// (rank, key). The plain SQLite table `t` holds the same rows as
/// (key, grp, rank, object), which is what an application querying SQLite
/// itself would store.
enum Data {
    static let collection = "items"
    static let viewName = "byRank"
    /// Ranks of generated rows are below this; appends go above it.
    static let rankSpace: Int64 = 1 << 40

    static func object(group: Int, rank: Int64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: UInt32(group).littleEndian) { bytes.replaceSubrange(0 ..< 4, with: $0) }
        withUnsafeBytes(of: rank.littleEndian) { bytes.replaceSubrange(4 ..< 12, with: $0) }
        return bytes
    }

    @inline(__always)
    static func group(_ object: [UInt8]) -> Int {
        Int(object[0]) | Int(object[1]) << 8 | Int(object[2]) << 16 | Int(object[3]) << 24
    }

    @inline(__always)
    static func rank(_ object: [UInt8]) -> Int64 {
        var value: Int64 = 0
        for i in (4 ..< 12).reversed() { value = value << 8 | Int64(object[i]) }
        return value
    }

    static func groupName(_ group: Int) -> String { "g\(group)" }

    /// The registered view: grouping reads the object's group number,
    /// sorting reads the rank (ties broken by key, a total order matching
    /// SQLite's `ORDER BY rank, key`). Both count their calls.
    static func view(_ counters: CallCounters, versionTag: String = "1") -> View {
        let grouping = ViewGrouping(flavour: .object) { row in
            counters.grouping += 1
            return groupName(group(row.object!))
        }
        let sorting = ViewSorting(flavour: .object) { _, a, b in
            counters.sorting += 1
            let ra = rank(a.object!), rb = rank(b.object!)
            if ra != rb { return ra < rb ? .ascending : .descending }
            return a.key < b.key ? .ascending : a.key == b.key ? .same : .descending
        }
        return View(grouping: grouping, sorting: sorting, versionTag: versionTag)
    }

    /// The same order by sort keys: the rank (8 bytes) then the key's UTF-8
    /// (a terminated text component), so a key is about 8 + key length + 1 bytes.
    static func keyView(versionTag: String = "1") -> View {
        let grouping = ViewGrouping(flavour: .object) { row in groupName(group(row.object!)) }
        let sorting = ViewSorting(flavour: .object, key: { _, row in
            var key = SortKey()
            key.append(rank(row.object!))
            key.append(row.key)
            return key
        })
        return View(grouping: grouping, sorting: sorting, versionTag: versionTag)
    }
}

/// One database (engine) and one plain SQLite file (baseline) holding the
/// same `n` rows, kept identical by every benchmark that writes.
final class Fixture {
    let n: Int
    let groups: Int
    let directory: String
    var database: Database
    var writer: Connection
    let plain: PlainSQLite
    /// Seeded, so every run (and both sides of a comparison) sees the same data.
    var random: SeededGenerator
    /// Keys of the rows of group g0 (the group the latency benchmarks use).
    var group0Keys: [String] = []
    var group0MaxRank: Int64 = 0
    var rowCount: Int
    let counters = CallCounters()

    var databasePath: String { directory + "/engine.sqlite" }

    init(n: Int, groups: Int, seed: UInt64) throws {
        self.n = n
        self.groups = groups
        var template = Array((NSTemporaryDirectory() + "ydbview-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw SQLiteFailure(description: "mkdtemp failed") }
        directory = String(cString: made)
        database = try Database(path: directory + "/engine.sqlite")
        writer = try database.newConnection()
        plain = try PlainSQLite(path: directory + "/plain.sqlite")
        random = SeededGenerator(seed: seed)
        rowCount = n
    }

    /// Writes the rows to both stores (no view registered yet, no index on
    /// the plain table yet). Returns the seconds each took.
    func load() throws -> (engine: Double, plain: Double) {
        var rows: [(key: String, group: Int, rank: Int64)] = []
        rows.reserveCapacity(n)
        for i in 0 ..< n {
            let group = Int(random.next() % UInt64(groups))
            let rank = Int64(random.next() % UInt64(Data.rankSpace))
            rows.append(("k\(i)", group, rank))
            if group == 0 {
                group0Keys.append("k\(i)")
                group0MaxRank = max(group0MaxRank, rank)
            }
        }
        let (_, engine) = try timed {
            try writer.readWrite { transaction in
                for row in rows {
                    try transaction.setObject(Data.object(group: row.group, rank: row.rank), forKey: row.key,
                                              inCollection: Data.collection, metadata: nil)
                }
            }
        }
        try plain.execute("""
            CREATE TABLE t (key TEXT PRIMARY KEY, grp TEXT NOT NULL, rank INTEGER NOT NULL, object BLOB)
            WITHOUT ROWID
            """)
        let (_, plainSeconds) = try timed {
            try plain.execute("BEGIN")
            let insert = try plain.prepare("INSERT INTO t (key, grp, rank, object) VALUES (?1, ?2, ?3, ?4)")
            for row in rows {
                insert.bind(1, row.key)
                insert.bind(2, Data.groupName(row.group))
                insert.bind(3, row.rank)
                insert.bind(4, Data.object(group: row.group, rank: row.rank))
                try insert.run()
            }
            try plain.execute("COMMIT")
        }
        return (engine, plainSeconds)
    }

    /// Moves every tracking connection past the latest commit, so the
    /// database drops commit notifications nobody needs any more (a
    /// registration's notification logs every row of the view).
    func catchUp() throws {
        try writer.read { _ in }
    }

    func reopen() throws {
        writer.close()
        database.close()
        database = try Database(path: databasePath)
        writer = try database.newConnection()
    }

    func remove() {
        writer.close()
        database.close()
        for name in ["engine.sqlite", "plain.sqlite"] {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(directory + "/" + name + suffix) }
        }
        rmdir(directory)
    }
}
