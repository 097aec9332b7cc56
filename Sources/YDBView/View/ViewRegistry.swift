/// The registered views of one snapshot, by name (bytes). A persistent tree,
/// not a Dictionary: every commit that registers or changes a view makes a
/// new state, and copying a dictionary of every view made registration
/// cost grow with the number of views; the tree copies one path.
struct ViewRegistry {
    private var tree = CountedTree<Name, ViewInstance>()

    subscript(name: Name) -> ViewInstance? {
        get { tree.value(for: name) }
        set {
            switch (tree.contains(name), newValue) {
            case (true, let instance?): tree.updateValue(instance, for: name)
            case (false, let instance?): tree.insert(name, instance)
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
