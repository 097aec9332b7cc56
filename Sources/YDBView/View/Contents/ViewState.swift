/// Where a row stands: its group and its order label there (its sort key,
/// if any, is beside it in the group's tree).
struct RowPlace {
    let group: String
    var label: Int64
}

/// A `RowPlace` as the row index stores it: the group by id (see
/// `GroupIDs`), and no sort key (the group's tree holds those, so a
/// comparator view does not pay for them). 16 bytes where a group name
/// would make it 24: the index holds one per row, and a comparator view
/// keeps about 50 bytes per row in all.
struct StoredPlace {
    let groupID: UInt32
    var label: Int64
}

/// The group names a view's rows are in, each under a small id that the row
/// index stores instead of the name. An id stays with its name while the
/// contents live on from commit to commit (a group that empties keeps its
/// id); a population starts afresh. A value: copying it shares the arrays,
/// and a commit copies them only when it meets a new group.
struct GroupIDs {
    private var names: [String] = []
    private var ids: [Name: UInt32] = [:]
    /// The name asked for last: rows of one group usually come one after
    /// another (a scan, a stored view read back), and skip the hashing.
    private var last: (name: String, id: UInt32)?

    subscript(id: UInt32) -> String { names[Int(id)] }

    /// Names given an id so far (live groups and groups that emptied).
    var count: Int { names.count }

    mutating func id(for name: String) -> UInt32 {
        if let last, bytesEqual(last.name, name) { return last.id }
        let id = ids[Name(name)] ?? {
            let new = UInt32(names.count)
            names.append(name)
            ids[Name(name)] = new
            return new
        }()
        last = (name, id)
        return id
    }
}

/// The contents of one view as of one snapshot. A value: copies share
/// structure, and a copy never sees later changes.
struct ViewState: ViewContents {
    var groups = CountedTree<GroupName, GroupTree>()
    private(set) var places = CountedTree<Int64, StoredPlace>()
    private(set) var groupIDs = GroupIDs()

    var groupNames: [String] {
        var names: [String] = []
        groups.forEach { name, _ in names.append(name.value); return true }
        return names
    }

    func group(_ name: String) -> GroupTree? { groups.value(for: GroupName(value: name)) }

    func count(inGroup group: String) -> Int { self.group(group)?.count ?? 0 }

    var totalCount: Int { places.count }

    func rowid(at index: Int, inGroup group: String) -> Int64? {
        self.group(group)?.element(at: index)?.value
    }

    /// Where `rowid` stands, or nil when it is not in the view.
    /// One walk of the group's tree, not a descent per index.
    func forEachRowid(inGroup group: String, in range: Range<Int>, _ body: (Int, Int64) -> Bool) {
        guard let tree = self.group(group) else { return }
        let clamped = range.clamped(to: 0 ..< tree.count)
        var index = clamped.lowerBound
        tree.forEach(in: clamped) { _, rowid in
            defer { index += 1 }
            return body(index, rowid)
        }
    }

    func place(of rowid: Int64) -> RowPlace? { places.value(for: rowid).map(resolved) }

    func contains(rowid: Int64) -> Bool { places.value(for: rowid) != nil }

    /// Visits the places of the rows at `ranks` (positions in rowid order;
    /// all rows when nil), in rowid order, while `body` returns true.
    func forEachPlace(inRanks ranks: Range<Int>? = nil, _ body: (Int64, RowPlace) -> Bool) {
        places.forEach(in: ranks) { rowid, stored in body(rowid, resolved(stored)) }
    }

    /// Every row in rowid order (or those at `ranks` of that order) with
    /// what its storage table holds: group, label and sort key. A run of
    /// rows in one group looks the group up once (storing a million rows
    /// looked it up, and copied the state to do so, for every row).
    func forEachStoredRow(inRanks ranks: Range<Int>? = nil,
                          _ body: (Int64, RowPlace, SortKey?) -> Bool) {
        var current: (name: String, tree: GroupTree?)?
        places.forEach(in: ranks) { rowid, stored in
            let place = resolved(stored)
            if current == nil || !bytesEqual(current!.name, place.group) {
                current = (place.group, group(place.group))
            }
            return body(rowid, place, current!.tree?.key(for: place.label))
        }
    }

    /// The position of the first row whose rowid is >= `rowid`, in rowid order.
    func rank(ofRowid rowid: Int64) -> Int { places.rank(of: rowid) }

    private func resolved(_ stored: StoredPlace) -> RowPlace {
        RowPlace(group: groupIDs[stored.groupID], label: stored.label)
    }

    func locate(rowid: Int64) -> (group: String, index: Int)? {
        guard let place = place(of: rowid),
              let index = group(place.group)?.index(of: place.label) else { return nil }
        return (place.group, index)
    }

    /// Builds contents from whole group trees and every row's place, sorted
    /// by rowid, with the ids its places use: a population or a stored view
    /// read back.
    init(groups members: [(GroupName, GroupTree)], places: CountedTree<Int64, StoredPlace>,
         groupIDs ids: GroupIDs) {
        for (name, tree) in members { groups.insert(name, tree) }
        self.places = places
        groupIDs = ids
    }

    init() {}

    // MARK: Mutations (used by ViewWriter)

    /// `sortKey`: the row's key in a sort-key view, nil in a comparator view.
    /// `moving`: the row was taken out by `removeFromOrder` and still has its
    /// entry in the row index, which now takes the new label.
    mutating func insert(rowid: Int64, group: String, label: Int64, sortKey: SortKey?, moving: Bool = false) {
        let name = GroupName(value: group)
        if groups.modifyValue(for: name, { $0.insert(label, rowid, key: sortKey) }) == nil {
            var tree = GroupTree(keyed: sortKey != nil)
            tree.insert(label, rowid, key: sortKey)
            groups.insert(name, tree)
        }
        let place = StoredPlace(groupID: groupIDs.id(for: group), label: label)
        if moving {
            places.modifyValue(for: rowid) { $0 = place }
        } else {
            places.insert(rowid, place)
        }
    }

    /// Makes `tree` the rows of `group`: the rows it already held, with
    /// their labels, and `rows`, rows the view did not hold, with theirs
    /// (in increasing rowid order: the row index then grows at its end).
    mutating func replaceGroup(_ group: String, _ tree: GroupTree, adding rows: [(rowid: Int64, label: Int64)]) {
        let name = GroupName(value: group)
        if groups.modifyValue(for: name, { $0 = tree }) == nil { groups.insert(name, tree) }
        let id = groupIDs.id(for: group)
        for row in rows { places.insert(row.rowid, StoredPlace(groupID: id, label: row.label)) }
    }

    /// The sort key of the row at `label` of `group` (nil for a comparator
    /// view or an unknown row).
    func sortKey(inGroup group: String, label: Int64) -> SortKey? {
        self.group(group)?.key(for: label)
    }

    /// The sort key of a row (nil for a comparator view or an unknown row).
    func sortKey(of rowid: Int64) -> SortKey? {
        place(of: rowid).flatMap { sortKey(inGroup: $0.group, label: $0.label) }
    }

    /// A row kept its place but its sort key changed.
    mutating func setSortKey(_ sortKey: SortKey, for rowid: Int64) {
        guard let stored = places.value(for: rowid) else { return }
        groups.modifyValue(for: GroupName(value: groupIDs[stored.groupID])) {
            $0.setKey(sortKey, for: stored.label)
        }
    }

    /// Removes a row; returns where it stood, and whether its group is now
    /// empty (and gone).
    @discardableResult
    mutating func remove(rowid: Int64) -> (group: String, index: Int, emptied: Bool)? {
        guard let stored = places.remove(rowid) else { return nil }
        return removeFromGroup(stored)
    }

    /// Takes a row out of its group's order but leaves its entry in the row
    /// index, for a move that puts it back with `insert(..., moving: true)`:
    /// one change to the index instead of a removal and an insert, on the
    /// path of every update that moves a row. Until then the entry names a
    /// label its group no longer holds.
    @discardableResult
    mutating func removeFromOrder(rowid: Int64) -> (group: String, index: Int, emptied: Bool)? {
        guard let stored = places.value(for: rowid) else { return nil }
        return removeFromGroup(stored)
    }

    /// After a move that failed half-way (a callback or SQLite threw
    /// between `removeFromOrder` and the insert): the row's index entry
    /// goes unless its group holds the row under it, so the state reads as
    /// a removal would have left it.
    mutating func dropPlaceIfUnplaced(rowid: Int64) {
        guard let stored = places.value(for: rowid) else { return }
        let held = group(groupIDs[stored.groupID])?.value(for: stored.label)
        if held != rowid { places.remove(rowid) }
    }

    private mutating func removeFromGroup(_ stored: StoredPlace) -> (group: String, index: Int, emptied: Bool)? {
        let group = groupIDs[stored.groupID]
        let name = GroupName(value: group)
        guard let (index, emptied) = groups.modifyValue(for: name, { tree -> (Int, Bool)? in
            guard let index = tree.index(of: stored.label) else { return nil }
            tree.remove(stored.label)
            return (index, tree.isEmpty)
        }) ?? nil else { return nil }
        if emptied {
            groups.remove(name)
            dropEmptiedGroupIDsIfMany()
        }
        return (group, index, emptied)
    }

    /// Ids of groups that emptied are dropped once there are more of them
    /// than an eighth of the rows (and than 64): renumbering rewrites the
    /// whole row index, O(rows), so it costs O(1) per emptied group, and a
    /// view whose groups come and go keeps a few bytes per row for the
    /// names of gone groups at most.
    private mutating func dropEmptiedGroupIDsIfMany() {
        guard groupIDs.count - groups.count > max(64, places.count / 8) else { return }
        RarePaths.count(\.groupRenumbers)
        var ids = GroupIDs()
        var renumbered: [(Int64, StoredPlace)] = []
        renumbered.reserveCapacity(places.count)
        places.forEach { rowid, stored in
            let groupID = ids.id(for: groupIDs[stored.groupID])
            renumbered.append((rowid, StoredPlace(groupID: groupID, label: stored.label)))
            return true
        }
        places = CountedTree(sorted: renumbered)
        groupIDs = ids
    }

    /// Gives the rows at `range` of `group` new labels (same order).
    mutating func relabel(group: String, rows: [(rowid: Int64, label: Int64)]) {
        let name = GroupName(value: group)
        guard var tree = groups.value(for: name) else { return }
        groups.remove(name)
        // All out before any goes back in: a new label may be another row's old one.
        let moved = rows.compactMap { rowid, label in
            places.value(for: rowid).map { (rowid: rowid, label: label, key: tree.remove($0.label)) }
        }
        for row in moved {
            tree.insert(row.label, row.rowid, key: row.key)
            places.modifyValue(for: row.rowid) { $0.label = row.label }
        }
        groups.insert(name, tree)
    }
}

/// Order labels: each row of a group carries an integer label that grows
/// with its position, so a row's index is found from its label in O(log n)
/// without calling the sorting callback. A new row takes a label between its
/// neighbours'; when they are adjacent, a window around it is spread out again.
enum OrderLabels {
    static let lowest: Int64 = -(1 << 61)
    /// ±2^61 keeps every difference of two labels within Int64.
    static let highest: Int64 = 1 << 61
    /// Gap left after the last row by appends (and before the first by prepends).
    static let step: Int64 = Tuning.labelStep

    /// Labels for `count` rows in order strictly between `left` and
    /// `right` (nil: the end of the label space), evenly spread, or `step`
    /// apart toward an open end, as appends leave them; nil when there is
    /// no room.
    static func spread(_ count: Int, between left: Int64?, and right: Int64?) -> [Int64]? {
        let low = left ?? lowest, high = right ?? highest
        var gap = (high - low) / Int64(count + 1)
        if left == nil || right == nil { gap = min(gap, step) }
        guard gap >= 1 else { return nil }
        if left == nil, let right { return (0..<count).map { right - gap * Int64(count - $0) } }
        return (0..<count).map { low + gap * Int64($0 + 1) }
    }

    /// A label strictly between `left` and `right` (nil bounds: the ends of
    /// the label space), or nil when there is no room.
    static func between(_ left: Int64?, _ right: Int64?) -> Int64? {
        switch (left, right) {
        case (nil, nil): return 0
        case let (left?, nil):
            return highest - left > step ? left + step : (highest - left >= 2 ? left + (highest - left) / 2 : nil)
        case let (nil, right?):
            return right - lowest > step ? right - step : (right - lowest >= 2 ? right - (right - lowest) / 2 : nil)
        case let (left?, right?):
            return right - left >= 2 ? left + (right - left) / 2 : nil
        }
    }

    /// Chooses a window of existing rows around insertion point `index` that
    /// has room for one more row, and evenly spaced labels for the window plus
    /// the new row. Returns the window (index range of existing rows), the new
    /// labels of those rows and the label of the new row.
    static func respread(_ tree: GroupTree, insertingAt index: Int)
        -> (window: Range<Int>, labels: [Int64], newLabel: Int64) {
        var width = 8
        while true {
            let lower = max(0, index - width / 2)
            let upper = min(tree.count, lower + width)
            let left = lower == 0 ? lowest : tree.element(at: lower - 1)!.key
            let right = upper == tree.count ? highest : tree.element(at: upper)!.key
            let slots = Int64(upper - lower + 1)
            let gap = (right - left) / (slots + 1)
            if gap >= Tuning.relabelGap || (lower == 0 && upper == tree.count) {
                RarePaths.count(\.relabels)
                precondition(gap >= 1, "label space exhausted")
                var labels: [Int64] = []
                var newLabel: Int64 = 0
                var next = left
                for position in lower ... upper {
                    next += gap
                    if position == index { newLabel = next } else { labels.append(next) }
                }
                return (lower ..< upper, labels, newLabel)
            }
            width *= 2
        }
    }
}

extension ViewState {
    /// Every structural rule of a view's contents, or the first one broken:
    /// the trees' own invariants, no empty group, and `places` and the group
    /// trees describing the same rows (each row once, under its label), all
    /// of one form (with sort keys or without). Debug builds check it after
    /// every view update.
    func invariantViolation() -> String? {
        if let problem = places.checkInvariants() { return "places: \(problem)" }
        if let problem = groups.checkInvariants() { return "groups: \(problem)" }
        var rows = 0
        var problem: String?
        let keyed = groups.first?.value.isKeyed
        groups.forEach { name, tree in
            if tree.isEmpty { problem = "group \(name) is empty"; return false }
            if tree.isKeyed != keyed { problem = "group \(name) differs in form (sort keys) from the first"; return false }
            if let broken = tree.invariantViolation() {
                problem = "group \(name): \(broken)"
                return false
            }
            rows += tree.count
            return true
        }
        if let problem { return problem }
        if rows != places.count { return "groups hold \(rows) rows, places \(places.count)" }
        if groupIDs.count - groups.count > max(64, places.count / 8) {
            return "\(groupIDs.count - groups.count) ids of emptied groups kept for \(places.count) rows"
        }
        forEachPlace { rowid, place in
            guard group(place.group)?.value(for: place.label) == rowid else {
                problem = "row \(rowid) is not at label \(place.label) of group \(place.group)"
                return false
            }
            return true
        }
        return problem
    }
}
