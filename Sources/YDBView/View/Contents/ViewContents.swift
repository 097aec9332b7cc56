/// Read access to one view's contents as of one snapshot.
///
/// A value conforming to this protocol never changes: a commit publishes a
/// new value and readers keep the one of their snapshot. Mappings and
/// changesets read views only through this protocol.
public protocol ViewContents {
    /// Every group that holds at least one row, in ascending (Unicode scalar) order.
    var groupNames: [String] { get }
    /// Rows in `group`; 0 for a group the view does not have.
    func count(inGroup group: String) -> Int
    /// The row at `index` in `group`, or nil when out of range or unknown.
    func rowid(at index: Int, inGroup group: String) -> Int64?
    /// Where `rowid` stands in the view, or nil when the view does not hold it.
    func locate(rowid: Int64) -> (group: String, index: Int)?
}

extension ViewContents {
    /// Visits the rows of `group` at the indexes of `range` (clipped to the
    /// group), in order, with their index; `body` returns false to stop.
    /// Contents that can walk a group faster than one lookup per index
    /// (a view's trees) provide their own.
    public func forEachRowid(inGroup group: String, in range: Range<Int>, _ body: (Int, Int64) -> Bool) {
        for index in range.clamped(to: 0 ..< count(inGroup: group)) {
            guard let rowid = rowid(at: index, inGroup: group), body(index, rowid) else { return }
        }
    }
}
