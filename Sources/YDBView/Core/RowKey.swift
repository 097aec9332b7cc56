/// A row's (collection, key). Equal and hashed by bytes: two spellings of
/// "é" are two rows, as they are to SQLite (see `Name`).
public struct RowKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let collection: String
    public let key: String
    public init(collection: String, key: String) {
        self.collection = collection
        self.key = key
    }
    public static func == (lhs: RowKey, rhs: RowKey) -> Bool {
        bytesEqual(lhs.key, rhs.key) && bytesEqual(lhs.collection, rhs.collection)
    }
    public func hash(into hasher: inout Hasher) {
        hashBytes(collection, into: &hasher)
        hashBytes(key, into: &hasher)
    }
    /// By collection, then key, each as UTF-8 bytes (SQLite's BINARY order).
    public static func < (lhs: RowKey, rhs: RowKey) -> Bool {
        bytesEqual(lhs.collection, rhs.collection)
            ? bytesPrecede(lhs.key, rhs.key)
            : bytesPrecede(lhs.collection, rhs.collection)
    }
    public var description: String { "\(collection)/\(key)" }
}

/// The (collection, key) of rows, by rowid: the rows a view log names.
///
/// A registration names every row its scan read: at a million rows this
/// was the largest allocation while populating, first as a hash table
/// (about 84 bytes a row), then as an array of rowids and keys (40 bytes a
/// row, more for a key too long for a String to hold inline). Rows read in
/// rowid order, as a scan reads them, are therefore packed
/// (`ScannedRowKeys`: 12 bytes a row plus the key's UTF-8) and found by
/// binary search; rows named one at a time, as a commit names them, go to
/// a dictionary, which takes precedence.
public struct RowKeys: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Ascending rowids, each once.
    private var ordered = ScannedRowKeys()
    /// Rows named out of rowid order; wins over `ordered` for a rowid in both.
    private var named: [Int64: RowKey] = [:]

    public init() {}

    public init(dictionaryLiteral elements: (Int64, RowKey)...) {
        for (rowid, key) in elements { named[rowid] = key }
    }

    public var isEmpty: Bool { ordered.isEmpty && named.isEmpty }

    /// Every row named, each once, in no particular order.
    public func makeIterator() -> IndexingIterator<[(rowid: Int64, key: RowKey)]> {
        var all: [(rowid: Int64, key: RowKey)] = []
        all.reserveCapacity(ordered.count + named.count)
        for index in 0 ..< ordered.count where named[ordered.rowid(at: index)] == nil {
            all.append((ordered.rowid(at: index), ordered[index]))
        }
        for (rowid, key) in named { all.append((rowid, key)) }
        return all.makeIterator()
    }

    /// Every rowid named, each once, in no particular order.
    public var rowids: [Int64] { map(\.rowid) }

    public subscript(rowid: Int64) -> RowKey? {
        get { named[rowid] ?? ordered.index(of: rowid).map { ordered[$0] } }
        set {
            // A commit's rows (no scan in its log) go straight to the
            // dictionary; a scanned row named again moves there.
            if !ordered.isEmpty, named[rowid] == nil, let index = ordered.index(of: rowid) {
                if let newValue, newValue == ordered[index] { return }
                ordered.remove(at: index)
            }
            named[rowid] = newValue
        }
    }

    /// Adds a row read by a scan. Rows read in ascending rowid order are
    /// packed; any other goes to the dictionary.
    mutating func appendScanned(_ rowid: Int64, _ key: RowKey) {
        if named.isEmpty, ordered.lastRowid.map({ $0 < rowid }) ?? true, ordered.append(rowid, key) { return }
        self[rowid] = key
    }

    /// Adds `other`'s rows; where both name a row, `keepingOwn` decides
    /// whose key stays (they are equal whenever both are right: a rowid
    /// names one row for good).
    mutating func merge(_ other: RowKeys, keepingOwn: Bool) {
        if other.isEmpty { return }
        if isEmpty {
            self = other
            return
        }
        // Decided against our rows as they were, before `ordered` takes theirs.
        var theirNamed = keepingOwn ? other.named.filter { self[$0.key] == nil } : other.named
        var merged = ScannedRowKeys()
        func add(_ rowid: Int64, _ key: RowKey) {
            if !merged.append(rowid, key) { theirNamed[rowid] = key }
        }
        let mineCount = ordered.count, theirsCount = other.ordered.count
        var mine = 0, theirs = 0
        while mine < mineCount || theirs < theirsCount {
            let myRowid = mine < mineCount ? ordered.rowid(at: mine) : Int64.max
            let theirRowid = theirs < theirsCount ? other.ordered.rowid(at: theirs) : Int64.max
            if theirs == theirsCount || (mine < mineCount && myRowid < theirRowid) {
                add(myRowid, ordered[mine])
                mine += 1
            } else if mine == mineCount || theirRowid < myRowid {
                add(theirRowid, other.ordered[theirs])
                theirs += 1
            } else {
                add(myRowid, keepingOwn ? ordered[mine] : other.ordered[theirs])
                mine += 1
                theirs += 1
            }
        }
        if !keepingOwn {
            // A row of ours named one at a time would hide their key.
            for rowid in named.keys where other.ordered.index(of: rowid) != nil { named[rowid] = nil }
        }
        ordered = merged
        named.merge(theirNamed) { _, theirs in theirs }
    }
}

/// Rows named in ascending rowid order, packed: the rowids, each key's
/// UTF-8 one after another in one array with where each ends, and the
/// collection once per run of rows in the same one (a scan reads a
/// collection's rows together). A key is made a String again when asked for.
private struct ScannedRowKeys: Sendable {
    private var rowids: [Int64] = []
    /// Where each row's key ends in `text`.
    private var ends: [UInt32] = []
    private var text: [UInt8] = []
    /// Rows from `start` on are in `name`, up to the next run's start.
    private var collections: [(start: Int, name: String)] = []

    var count: Int { rowids.count }
    var isEmpty: Bool { rowids.isEmpty }
    var lastRowid: Int64? { rowids.last }

    func rowid(at index: Int) -> Int64 { rowids[index] }

    /// Appends a row whose rowid is larger than every other's; false when
    /// its key does not fit (the packed text is limited to 4 GiB).
    mutating func append(_ rowid: Int64, _ key: RowKey) -> Bool {
        let utf8 = key.key.utf8
        guard text.count + utf8.count <= Int(UInt32.max) else { return false }
        if collections.last.map({ !bytesEqual($0.name, key.collection) }) ?? true {
            collections.append((rowids.count, key.collection))
        }
        rowids.append(rowid)
        text.append(contentsOf: utf8)
        ends.append(UInt32(text.count))
        return true
    }

    func index(of rowid: Int64) -> Int? {
        var low = 0, high = rowids.count
        while low < high {
            let mid = (low + high) / 2
            if rowids[mid] < rowid { low = mid + 1 } else { high = mid }
        }
        return low < rowids.count && rowids[low] == rowid ? low : nil
    }

    subscript(index: Int) -> RowKey {
        let span = self.span(index)
        let key = text.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[span]), as: UTF8.self) }
        return RowKey(collection: collections[run(of: index)].name, key: key)
    }

    mutating func remove(at index: Int) {
        let span = self.span(index)
        text.removeSubrange(span)
        for later in index + 1 ..< ends.count { ends[later] -= UInt32(span.count) }
        ends.remove(at: index)
        rowids.remove(at: index)
        let run = self.run(of: index)
        let runEnd = run + 1 < collections.count ? collections[run + 1].start : rowids.count + 1
        for later in run + 1 ..< collections.count { collections[later].start -= 1 }
        if runEnd - collections[run].start == 1 { collections.remove(at: run) }   // its only row
    }

    private func span(_ index: Int) -> Range<Int> {
        (index == 0 ? 0 : Int(ends[index - 1])) ..< Int(ends[index])
    }

    /// The run `index` is in: the last whose start is at or before it.
    private func run(of index: Int) -> Int {
        var low = 0, high = collections.count
        while low < high {
            let mid = (low + high) / 2
            if collections[mid].start <= index { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }
}
