/// A sort-key view's row in its group's tree: its sort key beside its id.
/// Plain data, so the tree's nodes keep copies of their last one
/// (`CountedTree.Node.last`) for the writer's bisection.
struct KeyedRow: Equatable, PlainTreeValue {
    var key: SortKey
    let rowid: Int64
}

/// One group's rows in sorted order: order label → row id (see
/// `OrderLabels`). A sort-key view's tree also holds each row's key beside
/// its id, so placing a row bisects the keys of the tree that holds the
/// rows: a change copies one root-to-leaf path, where a tree of keys beside
/// a tree of ids would copy two. A comparator view's tree holds ids only,
/// 16 bytes an entry with its label.
///
/// A value, as `CountedTree` is: a copy shares the nodes and never sees
/// later changes.
struct GroupTree {
    typealias Rows = CountedTree<Int64, Int64>
    typealias KeyedRows = CountedTree<Int64, KeyedRow>

    /// Exactly one of the two is set: the form of the view's sorting.
    private(set) var rows: Rows?
    /// The sort-key form's tree; the writer bisects its keys.
    private(set) var keyedRows: KeyedRows?

    init(keyed: Bool) {
        if keyed { keyedRows = KeyedRows() } else { rows = Rows() }
    }

    /// Built from elements already sorted by strictly increasing label.
    init<S: Sequence>(sorted elements: S) where S.Element == (Int64, Int64) {
        rows = Rows(sorted: elements)
    }

    /// Built from keyed elements already sorted by strictly increasing label.
    init<S: Sequence>(sortedKeyed elements: S) where S.Element == (Int64, KeyedRow) {
        keyedRows = KeyedRows(sorted: elements)
    }

    var isKeyed: Bool { keyedRows != nil }
    var count: Int { rows?.count ?? keyedRows!.count }
    var isEmpty: Bool { count == 0 }

    // MARK: Lookups

    /// The row id under `label`.
    func value(for label: Int64) -> Int64? {
        if rows != nil { return rows!.value(for: label) }
        return keyedRows!.value(for: label)?.rowid
    }

    /// The sort key of the row under `label` (nil in a comparator view).
    func key(for label: Int64) -> SortKey? { keyedRows?.value(for: label)?.key }

    func index(of label: Int64) -> Int? {
        if rows != nil { return rows!.index(of: label) }
        return keyedRows!.index(of: label)
    }

    /// The label and row id at `index`.
    func element(at index: Int) -> (key: Int64, value: Int64)? {
        if rows != nil { return rows!.element(at: index) }
        return keyedRows!.element(at: index).map { ($0.key, $0.value.rowid) }
    }

    /// Visits labels and row ids as `CountedTree.forEach` does.
    @discardableResult
    func forEach(in range: Range<Int>? = nil, reverse: Bool = false,
                 _ body: (Int64, Int64) throws -> Bool) rethrows -> Bool {
        if rows != nil { return try rows!.forEach(in: range, reverse: reverse, body) }
        return try keyedRows!.forEach(in: range, reverse: reverse) { label, row in try body(label, row.rowid) }
    }

    // MARK: Mutations (in place: a mutation through `!` or `?` reaches the tree where it lies)

    /// Inserts a row under a new label; `key` is the row's sort key, which
    /// a sort-key view's tree needs and a comparator view's has no room for.
    mutating func insert(_ label: Int64, _ rowid: Int64, key: SortKey?) {
        if let key {
            precondition(keyedRows != nil, "a sort key for a comparator view's group")
            keyedRows!.insert(label, KeyedRow(key: key, rowid: rowid))
        } else {
            precondition(rows != nil, "no sort key for a sort-key view's group")
            rows!.insert(label, rowid)
        }
    }

    /// Removes the row under `label`; returns its sort key (nil in a
    /// comparator view, or when there is no such row).
    @discardableResult
    mutating func remove(_ label: Int64) -> SortKey? {
        if rows != nil {
            rows!.remove(label)
            return nil
        }
        return keyedRows!.remove(label)?.key
    }

    /// A row kept its label but its sort key changed (sort-key form only).
    mutating func setKey(_ key: SortKey, for label: Int64) {
        keyedRows?.modifyValue(for: label) { $0.key = key }
    }

    // MARK: Checks (tests and debug builds)

    /// The tree's own invariants, including the nodes' kept last values.
    func invariantViolation() -> String? {
        if rows != nil { return rows!.checkInvariants() ?? rows!.lastValuesViolation() }
        return keyedRows!.checkInvariants() ?? keyedRows!.lastValuesViolation()
    }
}
