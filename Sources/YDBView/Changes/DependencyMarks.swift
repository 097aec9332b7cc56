/// The rows a changeset reloads for cell-drawing dependencies, decided the way
/// YapDatabase decides them (docs/behaviour.md, "Cell-drawing dependencies").
///
/// The rule works on the view's operations, one at a time, in the order they
/// happened: after each insert, delete or update in a group with dependency
/// offsets, the row that then stands at the dependent position is marked —
/// for a cell drawn from the one above (offset -1), the row just below the
/// operation (for a delete, the row that slid into its place); for a cell
/// drawn from the one below (+1), the row just above. A marked row carries the
/// `.dependency` flag whatever else happens to it in the changeset: it is
/// reloaded if nothing else changed, and an insert, delete, move or update of
/// its own gets the flag added.
///
/// A mark names a position at one moment; it is followed through the later
/// operations of its group until it meets a delete of that very position (the
/// marked row is the deleted one) or the end (the row at that index of the
/// view's final contents). Marks made before a reset are dropped with
/// everything else the reset removed (YapDatabase drops the changes logged
/// before it).
///
/// Cost: O(operations × (marks / 256 + 256)) at worst (`PendingMarks`), only for groups
/// with dependency offsets.
struct DependencyMarks {
    /// View-order dependency offsets of each group (as the mappings store them).
    let offsets: NameMap<Set<Int>>
    /// Groups of the mappings before and after: a delete counts in a group the
    /// mappings had, an insert or update in one they have afterwards.
    let originalGroups: NameSet
    let finalGroups: NameSet

    /// Rowids of the rows marked by `logs`.
    func markedRows(in logs: [ViewCommitLog], before: any ViewContents, after: any ViewContents) -> Set<Int64> {
        var marked = Set<Int64>()
        guard !offsets.isEmpty else { return marked }
        var counts: NameMap<Int> = [:]
        var pending: NameMap<PendingMarks> = [:]   // per group, the current indexes of its open marks
        // Groups whose rows changed order among themselves: every row may
        // have new neighbours, so every one shown is marked at the end.
        var reordered: NameSet = []
        func count(_ group: String) -> Int {
            counts[group] ?? (originalGroups.contains(group) ? before.count(inGroup: group) : 0)
        }
        func mark(_ group: String, at index: Int, countAfter: Int, wasDelete: Bool) {
            for declared in offsets[group] ?? [] {
                // `declared` is where the cell draws from; the mark goes the other way.
                let toward = -declared
                var position = countAfter
                if toward > 0 {
                    position = index + toward - (wasDelete ? 1 : 0)
                } else if toward < 0 && -toward <= index {
                    position = index + toward
                }
                guard position >= 0, position < countAfter else { continue }
                pending[group, default: PendingMarks()].insert(position)
            }
        }
        for log in logs {
            for entry in log.entries {
                switch entry {
                case .insert(_, let group, let index):
                    guard offsets[group] != nil else { continue }
                    pending[group]?.shift(from: index, by: 1)
                    guard finalGroups.contains(group) else { continue }
                    let after = count(group) + 1
                    counts[group] = after
                    mark(group, at: index, countAfter: after, wasDelete: false)
                case .delete(let rowid, let group, let index):
                    guard offsets[group] != nil else { continue }
                    if pending[group]?.remove(index) == true { marked.insert(rowid) }
                    pending[group]?.shift(from: index + 1, by: -1)
                    guard originalGroups.contains(group) else { continue }
                    let after = max(count(group) - 1, 0)
                    counts[group] = after
                    mark(group, at: index, countAfter: after, wasDelete: true)
                case .update(_, let group, let index, _):
                    guard offsets[group] != nil, finalGroups.contains(group) else { continue }
                    mark(group, at: index, countAfter: count(group), wasDelete: false)
                case .reset:
                    pending.removeAll()
                    marked.removeAll()
                    reordered = []
                    for group in offsets.keys { counts[group] = 0 }
                case .reordered(let group):
                    guard offsets[group] != nil else { continue }
                    pending[group] = nil
                    reordered.insert(group)
                case .groupCreated, .groupEmptied:
                    break
                }
            }
        }
        for (group, marks) in pending {
            for position in marks.positions {
                if let rowid = after.rowid(at: position, inGroup: group) { marked.insert(rowid) }
            }
        }
        for group in reordered {
            for position in 0..<after.count(inGroup: group) {
                if let rowid = after.rowid(at: position, inGroup: group) { marked.insert(rowid) }
            }
        }
        return marked
    }
}

/// The open marks of one group: distinct positions, kept in order through
/// the group's inserts and deletes. Shifting every mark at or after a
/// position is what each operation does, so the marks sit in blocks with a
/// pending shift each: an operation costs O(blocks + block size), not
/// O(marks) — a commit inserting 100k rows in random order makes about as
/// many marks.
struct PendingMarks {
    private static let blockSize = 256
    /// Ascending blocks; the true position of `blocks[b][k]` is that plus `shifts[b]`.
    private var blocks: [[Int]] = []
    private var shifts: [Int] = []

    /// The block that holds, or would hold, `position`.
    private func block(for position: Int) -> Int {
        for b in blocks.indices where blocks[b].last! + shifts[b] >= position { return b }
        return blocks.count - 1
    }

    mutating func insert(_ position: Int) {
        guard !blocks.isEmpty else { blocks = [[position]]; shifts = [0]; return }
        let b = block(for: position)
        let stored = position - shifts[b]
        let slot = blocks[b].partitionIndex { $0 >= stored }
        guard slot == blocks[b].count || blocks[b][slot] != stored else { return }
        blocks[b].insert(stored, at: slot)
        if blocks[b].count > 2 * Self.blockSize {
            let upper = Array(blocks[b][Self.blockSize...])
            blocks[b].removeSubrange(Self.blockSize...)
            blocks.insert(upper, at: b + 1)
            shifts.insert(shifts[b], at: b + 1)
        }
    }

    /// Removes the mark at `position`; whether there was one.
    mutating func remove(_ position: Int) -> Bool {
        guard !blocks.isEmpty else { return false }
        let b = block(for: position)
        let stored = position - shifts[b]
        let slot = blocks[b].partitionIndex { $0 >= stored }
        guard slot < blocks[b].count, blocks[b][slot] == stored else { return false }
        blocks[b].remove(at: slot)
        if blocks[b].isEmpty { blocks.remove(at: b); shifts.remove(at: b) }
        return true
    }

    /// Moves every mark at `position` or after by `delta`.
    mutating func shift(from position: Int, by delta: Int) {
        guard !blocks.isEmpty else { return }
        let b = block(for: position)
        if blocks[b].first! + shifts[b] >= position {
            shifts[b] += delta
        } else {
            let stored = position - shifts[b]
            let slot = blocks[b].partitionIndex { $0 >= stored }
            for k in slot..<blocks[b].count { blocks[b][k] += delta }
        }
        for later in (b + 1)..<blocks.count { shifts[later] += delta }
    }

    /// Every mark's position, ascending.
    var positions: [Int] {
        blocks.indices.flatMap { b in blocks[b].map { $0 + shifts[b] } }
    }
}

extension Array {
    /// The first index whose element satisfies `isAtOrAfter` (elements must be
    /// partitioned: all failing ones first), by binary search.
    func partitionIndex(where isAtOrAfter: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if isAtOrAfter(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
