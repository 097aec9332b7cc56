/// Sorting a population's rows by their sort keys.
///
/// A population of the sort-key form sorts each group's rows once, by key.
/// A merge sort of the rows themselves would compare keys some twenty
/// times a row and move 40-byte rows in every pass. Here the rows' first
/// eight key bytes, as one integer, are
/// sorted by radix with each row's position beside them (a pass per byte,
/// skipping the bytes all rows share), rows whose first eight bytes tie
/// are ordered by their whole keys, and the rows are then moved once, into
/// place.
///
/// Rows with equal keys keep their input order (the scan's, by row id), as
/// inserting them one by one at their upper bound would.
enum KeyOrder {
    /// Below this many rows a comparison sort is cheaper than the radix
    /// passes' tables. Debug builds (the tests) sort all but single rows
    /// by radix.
    #if DEBUG
    static let radixThreshold = 2
    #else
    static let radixThreshold = 64
    #endif

    /// A row's first eight key bytes as a big-endian integer, and its
    /// position in the input.
    private struct Entry {
        var prefix: UInt64
        var index: UInt32
    }

    /// Sorts `rows` by key; rows with equal keys keep their order.
    static func sort(_ rows: inout [KeyedRow]) {
        guard rows.count >= radixThreshold, rows.count <= Int(UInt32.max) else {
            // Indices break ties, so the result does not depend on the
            // standard sort's stability.
            let ordered = rows.indices.sorted {
                let order = SortKey.compare(rows[$0].key, rows[$1].key)
                return order != 0 ? order < 0 : $0 < $1
            }
            rows = ordered.map { rows[$0] }
            return
        }
        var entries = sortedEntries(rows)
        orderTies(&entries, rows)
        permute(&rows, into: &entries)
    }

    /// The rows' entries sorted by prefix (then position: a least
    /// significant digit radix sort is stable).
    private static func sortedEntries(_ rows: [KeyedRow]) -> [Entry] {
        let count = rows.count
        // One pass counts the values of every byte of every prefix.
        var counts = [Int](repeating: 0, count: 8 * 256)
        var entries = [Entry]()
        entries.reserveCapacity(count)
        counts.withUnsafeMutableBufferPointer { counts in
            for index in 0 ..< count {
                let prefix = rows[index].key.prefix
                entries.append(Entry(prefix: prefix, index: UInt32(index)))
                for byte in 0 ..< 8 { counts[byte << 8 | Int(truncatingIfNeeded: prefix >> (byte << 3)) & 0xFF] += 1 }
            }
        }
        var scratch = entries
        for byte in 0 ..< 8 {
            let shift = UInt64(byte << 3)
            let first = Int(truncatingIfNeeded: entries[0].prefix >> shift) & 0xFF
            // A byte that every prefix shares moves nothing.
            if counts[byte << 8 | first] == count { continue }
            var next = [Int](repeating: 0, count: 256)
            var total = 0
            for value in 0 ..< 256 {
                next[value] = total
                total += counts[byte << 8 | value]
            }
            entries.withUnsafeBufferPointer { source in
                scratch.withUnsafeMutableBufferPointer { target in
                    next.withUnsafeMutableBufferPointer { next in
                        for entry in source {
                            let value = Int(truncatingIfNeeded: entry.prefix >> shift) & 0xFF
                            target[next[value]] = entry
                            next[value] += 1
                        }
                    }
                }
            }
            swap(&entries, &scratch)
        }
        return entries
    }

    /// Orders each run of equal prefixes by whole key, then position.
    private static func orderTies(_ entries: inout [Entry], _ rows: [KeyedRow]) {
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count && entries[end].prefix == entries[start].prefix { end += 1 }
            if end - start > 1 {
                entries[start ..< end].sort {
                    let order = SortKey.compare(rows[Int($0.index)].key, rows[Int($1.index)].key)
                    return order != 0 ? order < 0 : $0.index < $1.index
                }
            }
            start = end
        }
    }

    /// Moves each row to its sorted position, following the permutation's
    /// cycles: each row moves once, with no second array of rows (a
    /// population's peak memory). `entries[position].index` names the row
    /// that belongs at `position`; a finished position names itself.
    private static func permute(_ rows: inout [KeyedRow], into entries: inout [Entry]) {
        rows.withUnsafeMutableBufferPointer { rows in
            guard let base = rows.baseAddress else { return }
            for start in 0 ..< rows.count where Int(entries[start].index) != start {
                let held = (base + start).move()
                var position = start
                while true {
                    let source = Int(entries[position].index)
                    entries[position].index = UInt32(position)
                    if source == start {
                        (base + position).initialize(to: held)
                        break
                    }
                    (base + position).moveInitialize(from: base + source, count: 1)
                    position = source
                }
            }
        }
    }
}
