/// The registered extensions of one snapshot, by name (bytes). A persistent
/// tree, not a Dictionary: every commit that registers or changes an
/// extension makes a new state, and copying a dictionary of every one made
/// registration cost grow with their number; the tree copies one path.
struct ExtensionRegistry {
    private var tree = CountedTree<Name, any RegisteredExtension>()
    /// The order writers run in (`writingOrder`), kept from one snapshot to
    /// the next: every commit replaces the extensions it changed, but their
    /// names and dependencies change only when one is registered,
    /// redefined or removed (`orderMayHaveChanged`).
    private var order = OrderCache()

    private final class OrderCache: @unchecked Sendable {
        // Written only by the transaction that holds the write gate.
        var names: [Name]?
    }

    subscript(name: Name) -> (any RegisteredExtension)? {
        get { tree.value(for: name) }
        set {
            switch (tree.contains(name), newValue) {
            case (true, let registered?): tree.updateValue(registered, for: name)
            case (false, let registered?):
                tree.insert(name, registered)
                orderMayHaveChanged()
            case (true, nil):
                _ = tree.remove(name)
                orderMayHaveChanged()
            case (false, nil): break
            }
        }
    }

    /// Every name in the order writers run: name order, except that an
    /// extension comes after those it depends on
    /// (`RegisteredExtension.dependencies`). Worked out once per set of
    /// extensions, not once per transaction: with a hundred views that
    /// walk cost as much as a view's own work.
    var writingOrder: [Name] {
        if let names = order.names { return names }
        var all: [Name] = []
        var placed = Set<Name>()
        func add(_ name: Name) {
            guard !placed.contains(name), let registered = tree.value(for: name) else { return }
            placed.insert(name)
            for dependency in registered.dependencies { add(Name(dependency)) }
            all.append(name)
        }
        tree.forEachKey(add)
        order.names = all
        return all
    }

    /// An extension was registered again or redefined: its dependencies
    /// may differ.
    mutating func orderMayHaveChanged() { order = OrderCache() }

    /// Every registered name, in byte order.
    var names: [Name] {
        var names: [Name] = []
        forEachName { names.append($0) }
        return names
    }

    /// Visits every registered name in byte order, with no array of them.
    func forEachName(_ body: (Name) -> Void) {
        tree.forEachKey(body)
    }

    var isEmpty: Bool { tree.isEmpty }
    var count: Int { tree.count }
}

extension ReadWriteTransaction {
    /// Refuses to register `name` as `what` (whose registered form is of
    /// type `Kind`) while an extension of another kind holds the name: every
    /// kind shares one namespace, and replacing a view by a full-text index
    /// (or the reverse) would leave the first one's storage behind and
    /// surprise whoever queries it by name. `existingKind` names the one
    /// found, for kinds that do not describe themselves.
    func refuseNameOfOtherKind<Kind>(_ name: String, registering kind: Kind.Type, as what: String,
                                     existingKind: ((any RegisteredExtension) -> String)? = nil) throws {
        guard let existing = registeredExtension(named: name), !(existing is Kind) else { return }
        let holder = existingKind?(existing) ?? existing.kindDescription
        throw YDBError(.invalidArgument,
                       "cannot register \(what) '\(name)': the name belongs to \(holder); unregister it first")
    }
}
