@testable import YDBView

/// An immutable copy of a fake view's groups: the `ViewContents` of one snapshot.
struct FakeContents: ViewContents {
    let groups: [String: [Int64]]
    private let places: [Int64: (group: String, index: Int)]

    init(groups: [String: [Int64]]) {
        self.groups = groups.filter { !$0.value.isEmpty }
        var places: [Int64: (group: String, index: Int)] = [:]
        for (group, rows) in self.groups {
            for (index, rowid) in rows.enumerated() { places[rowid] = (group, index) }
        }
        self.places = places
    }

    var groupNames: [String] { groups.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) } }
    func count(inGroup group: String) -> Int { groups[group]?.count ?? 0 }
    func rowid(at index: Int, inGroup group: String) -> Int64? {
        guard let rows = groups[group], rows.indices.contains(index) else { return nil }
        return rows[index]
    }
    func locate(rowid: Int64) -> (group: String, index: Int)? { places[rowid] }
}

/// A view kept in memory that behaves like the real one as far as mappings can
/// tell: rows sorted by an integer sort value, ties after equal rows (upper
/// bound); a row whose value still fits between its neighbours stays in place
/// and is logged as updated; otherwise delete + insert with indexes at the
/// moment; groups created with their first row; groups empty at commit logged
/// once as emptied; `reset` removes every row.
final class FakeView {
    let name: String
    private(set) var groups: [String: [Int64]] = [:]
    private(set) var sortValues: [Int64: Int] = [:]
    private(set) var snapshot: UInt64 = 0

    // The open transaction.
    private var entries: [ViewLogEntry] = []
    private var before: FakeContents
    private var resetInTransaction = false
    /// Rows changed (object/metadata set or moved) in the open transaction.
    private(set) var touched: [Int64: RowChangeFlags] = [:]

    init(name: String = "view") {
        self.name = name
        self.before = FakeContents(groups: [:])
    }

    /// A view whose groups hold rows `rowids`, each sorted by `rowid * 10`,
    /// committed once.
    static func committed(_ groups: [String: ClosedRange<Int64>]) -> FakeView {
        let view = FakeView()
        for (group, rowids) in groups.sorted(by: { $0.key < $1.key }) {
            for rowid in rowids { view.set(rowid, group: group, value: Int(rowid) * 10) }
        }
        view.commit()
        return view
    }

    var contents: FakeContents { FakeContents(groups: groups) }
    var allRowids: [Int64] { Array(sortValues.keys).sorted() }

    static func key(_ rowid: Int64) -> RowKey { RowKey(collection: "c", key: "k\(rowid)") }

    func locate(_ rowid: Int64) -> (group: String, index: Int)? {
        for (group, rows) in groups { if let index = rows.firstIndex(of: rowid) { return (group, index) } }
        return nil
    }

    private func upperBound(_ value: Int, in group: String) -> Int {
        let rows = groups[group] ?? []
        var low = 0, high = rows.count
        while low < high {
            let mid = (low + high) / 2
            if sortValues[rows[mid]]! <= value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func insertRow(_ rowid: Int64, group: String, value: Int) {
        if groups[group] == nil {
            groups[group] = []
            entries.append(.groupCreated(group))
        }
        sortValues[rowid] = value
        let index = upperBound(value, in: group)
        groups[group]!.insert(rowid, at: index)
        entries.append(.insert(rowid: rowid, group: group, index: index))
    }

    private func deleteRow(_ rowid: Int64) {
        guard let (group, index) = locate(rowid) else { return }
        groups[group]!.remove(at: index)
        sortValues[rowid] = nil
        entries.append(.delete(rowid: rowid, group: group, index: index))
    }

    /// Sets a row (insert, or change of group/sort value): like setting an object
    /// whose grouping/sorting callbacks read it.
    func set(_ rowid: Int64, group: String, value: Int) {
        touched[rowid, default: []].formUnion([.object, .metadata])
        guard let (oldGroup, index) = locate(rowid) else { return insertRow(rowid, group: group, value: value) }
        let rows = groups[oldGroup]!
        let fitsAbove = index == 0 || sortValues[rows[index - 1]]! <= value
        let fitsBelow = index == rows.count - 1 || value <= sortValues[rows[index + 1]]!
        if oldGroup == group && fitsAbove && fitsBelow {
            sortValues[rowid] = value
            entries.append(.update(rowid: rowid, group: group, index: index, changes: [.object, .metadata]))
        } else {
            deleteRow(rowid)
            insertRow(rowid, group: group, value: value)
        }
    }

    /// Changes (or touches) parts of a row that grouping/sorting do not read.
    func touch(_ rowid: Int64, _ flags: RowChangeFlags) {
        guard let (group, index) = locate(rowid) else { return }
        touched[rowid, default: []].formUnion(flags)
        entries.append(.update(rowid: rowid, group: group, index: index, changes: flags))
    }

    func remove(_ rowid: Int64) {
        guard locate(rowid) != nil else { return }
        touched[rowid, default: []].formUnion([.object, .metadata])
        deleteRow(rowid)
    }

    func reset() {
        for rowid in sortValues.keys { touched[rowid, default: []].formUnion([.object, .metadata]) }
        for group in groups.keys { groups[group] = [] }
        sortValues.removeAll()
        resetInTransaction = true
        entries.append(.reset)
    }

    /// Ends the transaction: drops empty groups (logging them) and returns the log.
    @discardableResult
    func commit() -> ViewCommitLog {
        for (group, rows) in groups where rows.isEmpty {
            groups[group] = nil
            entries.append(.groupEmptied(group))
        }
        let after = contents
        var keys = RowKeys()
        for entry in entries {
            switch entry {
            case .insert(let rowid, _, _), .delete(let rowid, _, _), .update(let rowid, _, _, _):
                keys[rowid] = Self.key(rowid)
            default: break
            }
        }
        if resetInTransaction {
            for rows in before.groups.values { for rowid in rows { keys[rowid] = Self.key(rowid) } }
        }
        let log = ViewCommitLog(viewName: name, snapshotBefore: snapshot, snapshot: snapshot + 1,
                                before: before, after: after, entries: ViewLogEntries(entries), keys: keys)
        snapshot += 1
        before = after
        entries = []
        resetInTransaction = false
        return log
    }

    /// Forgets which rows were touched (call at the start of each changeset).
    func clearTouched() { touched = [:] }
}
