/// The registered extensions of one snapshot, by name (bytes). A persistent
/// tree, not a Dictionary: every commit that registers or changes an
/// extension makes a new state, and copying a dictionary of every one made
/// registration cost grow with their number; the tree copies one path.
struct ExtensionRegistry {
    private var tree = CountedTree<Name, any RegisteredExtension>()

    subscript(name: Name) -> (any RegisteredExtension)? {
        get { tree.value(for: name) }
        set {
            switch (tree.contains(name), newValue) {
            case (true, let registered?): tree.updateValue(registered, for: name)
            case (false, let registered?): tree.insert(name, registered)
            case (true, nil): _ = tree.remove(name)
            case (false, nil): break
            }
        }
    }

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
