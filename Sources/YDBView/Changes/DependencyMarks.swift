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
/// Cost: O(operations × marks pending in the same group), only for groups with
/// dependency offsets.
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
        var pending: NameMap<[Int]> = [:]   // per group, the current indexes of its open marks, ascending
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
                var marks = pending[group] ?? []
                let slot = marks.partitionIndex { $0 >= position }
                if slot == marks.count || marks[slot] != position { marks.insert(position, at: slot) }
                pending[group] = marks
            }
        }
        for log in logs {
            for entry in log.entries {
                switch entry {
                case .insert(_, let group, let index):
                    guard offsets[group] != nil else { continue }
                    if var marks = pending[group] {
                        for i in marks.indices where marks[i] >= index { marks[i] += 1 }
                        pending[group] = marks
                    }
                    guard finalGroups.contains(group) else { continue }
                    let after = count(group) + 1
                    counts[group] = after
                    mark(group, at: index, countAfter: after, wasDelete: false)
                case .delete(let rowid, let group, let index):
                    guard offsets[group] != nil else { continue }
                    if var marks = pending[group] {
                        marks.removeAll { position in
                            if position == index { marked.insert(rowid) }
                            return position == index
                        }
                        for i in marks.indices where marks[i] > index { marks[i] -= 1 }
                        pending[group] = marks
                    }
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
                    for group in offsets.keys { counts[group] = 0 }
                case .groupCreated, .groupEmptied:
                    break
                }
            }
        }
        for (group, marks) in pending {
            for position in marks {
                if let rowid = after.rowid(at: position, inGroup: group) { marked.insert(rowid) }
            }
        }
        return marked
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
