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
}
