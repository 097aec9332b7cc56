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
            ? lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
            : lhs.collection.utf8.lexicographicallyPrecedes(rhs.collection.utf8)
    }
    public var description: String { "\(collection)/\(key)" }
}

/// The (collection, key) of rows, by rowid: the rows a view log names.
///
/// A registration names every row its scan read, and a hash table of them
/// was the largest allocation while populating (about 84 bytes a row at a
/// million rows, more while it grew). Rows read in rowid order, as a scan
/// reads them, are therefore kept in one sorted array (40 bytes a row) and
/// found by binary search; rows named one at a time, as a commit names
/// them, go to a dictionary, which takes precedence.
public struct RowKeys: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Ascending rowids, each once.
    private var ordered: [(rowid: Int64, key: RowKey)] = []
    /// Rows named out of rowid order; wins over `ordered` for a rowid in both.
    private var named: [Int64: RowKey] = [:]

    public init() {}

    public init(dictionaryLiteral elements: (Int64, RowKey)...) {
        for (rowid, key) in elements { named[rowid] = key }
    }

    public var isEmpty: Bool { ordered.isEmpty && named.isEmpty }

    /// Every row named, each once, in no particular order.
    public func makeIterator() -> IndexingIterator<[(rowid: Int64, key: RowKey)]> {
        (ordered.filter { named[$0.rowid] == nil } + named.map { ($0.key, $0.value) }).makeIterator()
    }

    /// Every rowid named, each once, in no particular order.
    public var rowids: [Int64] { map(\.rowid) }

    public subscript(rowid: Int64) -> RowKey? {
        get { named[rowid] ?? orderedIndex(of: rowid).map { ordered[$0].key } }
        set {
            // A commit's rows (no scan in its log) go straight to the dictionary.
            if !ordered.isEmpty, named[rowid] == nil, let index = orderedIndex(of: rowid) {
                if let newValue { ordered[index].key = newValue } else { ordered.remove(at: index) }
            } else {
                named[rowid] = newValue
            }
        }
    }

    /// Adds a row read by a scan. Rows read in ascending rowid order are
    /// appended to the array; any other goes to the dictionary.
    mutating func appendScanned(_ rowid: Int64, _ key: RowKey) {
        if named.isEmpty, ordered.last.map({ $0.rowid < rowid }) ?? true {
            ordered.append((rowid, key))
        } else {
            self[rowid] = key
        }
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
        let theirNamed = keepingOwn ? other.named.filter { self[$0.key] == nil } : other.named
        var merged: [(rowid: Int64, key: RowKey)] = []
        merged.reserveCapacity(ordered.count + other.ordered.count)
        var mine = 0, theirs = 0
        while mine < ordered.count || theirs < other.ordered.count {
            if theirs == other.ordered.count
                || (mine < ordered.count && ordered[mine].rowid < other.ordered[theirs].rowid) {
                merged.append(ordered[mine])
                mine += 1
            } else if mine == ordered.count || other.ordered[theirs].rowid < ordered[mine].rowid {
                merged.append(other.ordered[theirs])
                theirs += 1
            } else {
                merged.append(keepingOwn ? ordered[mine] : other.ordered[theirs])
                mine += 1
                theirs += 1
            }
        }
        if !keepingOwn {
            // A row of ours named one at a time would hide their key.
            for rowid in named.keys where other.orderedIndex(of: rowid) != nil { named[rowid] = nil }
        }
        ordered = merged
        named.merge(theirNamed) { _, theirs in theirs }
    }

    private func orderedIndex(of rowid: Int64) -> Int? {
        var low = 0, high = ordered.count
        while low < high {
            let mid = (low + high) / 2
            if ordered[mid].rowid < rowid { low = mid + 1 } else { high = mid }
        }
        return low < ordered.count && ordered[low].rowid == rowid ? low : nil
    }
}
