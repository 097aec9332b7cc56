@testable import YDBView

/// Counts every lookup made through the `ViewContents` values that share it.
final class LookupCounter {
    var lookups = 0
}

/// A huge one-group view computed by arithmetic: even rowids `0, 2, 4, …` in order,
/// with at most one extra odd rowid inserted at `insertedAt`. Lets a test check
/// that a one-row changeset on a million-row group costs a handful of lookups.
struct ArithmeticContents: ViewContents {
    let group: String
    let evenRows: Int
    let inserted: (rowid: Int64, index: Int)?
    let counter: LookupCounter

    var groupNames: [String] { [group] }
    var total: Int { evenRows + (inserted == nil ? 0 : 1) }

    func count(inGroup group: String) -> Int { group == self.group ? total : 0 }

    func rowid(at index: Int, inGroup group: String) -> Int64? {
        counter.lookups += 1
        guard group == self.group, index >= 0, index < total else { return nil }
        guard let inserted else { return Int64(index) * 2 }
        if index == inserted.index { return inserted.rowid }
        return Int64(index < inserted.index ? index : index - 1) * 2
    }

    func locate(rowid: Int64) -> (group: String, index: Int)? {
        counter.lookups += 1
        if let inserted, rowid == inserted.rowid { return (group, inserted.index) }
        guard rowid >= 0, rowid % 2 == 0, rowid / 2 < Int64(evenRows) else { return nil }
        let even = Int(rowid / 2)
        if let inserted, even >= inserted.index { return (group, even + 1) }
        return (group, even)
    }
}
