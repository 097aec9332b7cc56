/// The rows a connection read lately through its views, kept from one
/// transaction to the next: a list on screen reads the same 50 rows after
/// every commit, and only the rows a commit changed need reading again.
/// YapDatabase's connections keep an object cache for the same reason.
///
/// Every entry is the whole row (collection, key, object, metadata) as of
/// `snapshot`, the snapshot of the connection's current or last
/// transaction. When the connection moves to a newer snapshot, `move`
/// forgets the rows the commits in between changed; when it cannot know
/// them (a connection that fell too far behind, a commit that emptied a
/// collection or the database), it forgets everything.
///
/// Only read transactions use it: a read-write transaction reads its own
/// uncommitted rows from SQLite, and its commit moves the cache past itself.
/// Like the views, it assumes that while the database is open, every write
/// goes through this library (see docs/behaviour.md).
///
/// Guarded by its connection's lock.
final class RowCache {
    /// How many rows a connection keeps by default.
    static let defaultLimit = 250
    /// Rows whose object and metadata together are larger are not kept:
    /// the cache stays within `limit` × 16 KiB (4 MiB by default) whatever
    /// the rows hold, and for a large row the copy, not SQLite's lookup, is
    /// most of what a read costs.
    static let largestRow = 16 * 1024

    /// At most this many rows are kept; 0 turns the cache off.
    var limit: Int {
        didSet {
            if limit <= 0 { rows.removeAll() }
            while rows.count > limit { rows.remove(at: rows.startIndex) }
        }
    }
    private(set) var snapshot: UInt64
    private var rows: [Int64: ViewRow] = [:]

    init(limit: Int, snapshot: UInt64) {
        self.limit = max(0, limit)
        self.snapshot = snapshot
    }

    var count: Int { rows.count }
    /// Reads it answered (what tests check the cache by).
    private(set) var hits = 0

    func row(_ rowid: Int64) -> ViewRow? {
        guard let row = rows[rowid] else { return nil }
        hits &+= 1
        return row
    }

    /// Keeps `row`, the whole row `rowid` as of `snapshot`. When full, one
    /// entry goes (whichever the table holds first: in effect at random, so
    /// a scroll past the limit keeps part of what it read, at no cost).
    func store(_ row: ViewRow, for rowid: Int64) {
        guard limit > 0, (row.object?.count ?? 0) + (row.metadata?.count ?? 0) <= Self.largestRow else { return }
        if rows.count >= limit, rows[rowid] == nil { rows.remove(at: rows.startIndex) }
        rows[rowid] = row
    }

    /// Moves the cache to `newSnapshot`. `commits` are the notifications of
    /// the commits in between, oldest first; nil when they are unknown.
    /// Each commit that changed anything made one snapshot and one
    /// notification, so the list must cover `snapshot + 1 ... newSnapshot`
    /// one by one; anything else empties the cache rather than trusting it.
    func move(to newSnapshot: UInt64, through commits: [CommitNotification]?) {
        defer { snapshot = newSnapshot }
        guard newSnapshot != snapshot, !rows.isEmpty else { return }
        let relevant = commits?.filter { $0.snapshot > snapshot && $0.snapshot <= newSnapshot } ?? []
        let complete = newSnapshot > snapshot
            && relevant.count == Int(newSnapshot - snapshot)
            && zip(relevant, relevant.dropFirst()).allSatisfy { $0.snapshot + 1 == $1.snapshot }
        guard complete, !relevant.contains(where: { $0.removedAll || !$0.removedCollectionNames.isEmpty }) else {
            rows.removeAll(keepingCapacity: true)
            return
        }
        for commit in relevant {
            for rowid in commit.changedRowids { rows.removeValue(forKey: rowid) }
        }
    }
}
