extension Database {
    /// Registers `view` (a filter over the registered view `view.parent`)
    /// under `name`, in its own read-write transaction, as `registerView`
    /// registers a view: populated, or loaded as stored when persistent
    /// with the same tag (over a parent with the same tag) and fresh.
    @discardableResult
    public func registerFilteredView(_ view: FilteredView, name: String) throws -> ViewRegistrationOutcome {
        do {
            try validateName(name, "view name")
            try validateName(view.parent, "parent view name")
            registrations.supersede(name, by: "a later registration")
            return try withInternalConnection { connection in
                try connection.readWrite { try $0.registerFilteredView(view, name: name) }
            }
        } catch {
            view.releaseHook?.release()
            throw error
        }
    }
}

extension ReadWriteTransaction {
    func registerFilteredView(_ filtered: FilteredView, name: String) throws -> ViewRegistrationOutcome {
        let parent = try filteredViewParent(filtered.parent, of: name)
        let view = Filtering.view(over: parent.definition, named: filtered.parent, filter: filtered.filter,
                                  filterTag: filtered.versionTag, isPersistent: filtered.isPersistent,
                                  releaseHook: filtered.releaseHook)
        return try registerView(view, name: name)
    }

    /// The registered parent of a filtered view `name`; refuses a parent
    /// that is missing, the view itself, or one filtered over `name`.
    func filteredViewParent(_ parent: String, of name: String) throws -> ViewInstance {
        guard let instance = viewInstance(named: parent) else {
            throw YDBError(.notFound, "no view named '\(parent)' is registered to filter")
        }
        var ancestor: String? = parent
        while let current = ancestor {
            if bytesEqual(current, name) {
                throw YDBError(.invalidArgument, "view '\(name)' cannot filter itself, directly or through '\(parent)'")
            }
            ancestor = viewInstance(named: current)?.definition.filtering?.parent
        }
        return instance
    }

    /// Replaces the filter of the filtered view `name` inside this
    /// transaction. With the same `versionTag` nothing happens; with a new
    /// one the rows the new filter keeps and the old one did not are
    /// inserted, and the others removed: this commit's changeset shows
    /// exactly the rows that enter and leave. It scans the parent's rows
    /// once, calling the new filter on each. Views filtered over this one
    /// follow in the same transaction.
    public func setFilter(_ filter: ViewFilter, versionTag: String, forView name: String) throws {
        try setFilter(filter, versionTag: versionTag, forView: name, releaseHook: nil)
    }

    /// `setFilter`, with the hook that releases the new filter when it stops
    /// being used (the C layer's destructor).
    package func setFilter(_ filter: ViewFilter, versionTag: String, forView name: String,
                           releaseHook: ReleaseHook?) throws {
        var installed = false
        if let releaseHook { whenEnded { committed in if !(committed && installed) { releaseHook.release() } } }
        try extensionWork {
            try validateName(name, "view name")
            guard let writer = viewWriter(named: name) else {
                throw YDBError(.notFound, "no view named '\(name)' is registered")
            }
            guard let filtering = writer.definition.filtering else {
                throw YDBError(.misuse, "view '\(name)' is not a filtered view")
            }
            if filtering.search != nil {
                throw YDBError(.misuse, "view '\(name)' is a search view: set its query instead")
            }
            guard filtering.filterTag != versionTag else { return }
            let parent = try filteredViewParent(filtering.parent, of: name)
            release(writer.definition, when: .committed)
            let view = Filtering.view(over: parent.definition, named: filtering.parent, filter: filter,
                                      filterTag: versionTag, isPersistent: writer.definition.isPersistent,
                                      releaseHook: releaseHook)
            if let id = writer.instance.storageID { try ViewStorage.setVersionTag(view.versionTag, id: id, handle) }
            writer.takeDefinition(view)
            try writer.refilter(over: parent.state, reevaluating: true, writeContext)
            installWriter(writer)
            installed = true
            try followParent(name)
        }
    }

    /// The views filtered over `name` follow its change in this
    /// transaction, and theirs in turn. `reordered`: its grouping or
    /// sorting changed (a new definition, a new registration), so theirs
    /// are rebuilt from it and logged as what changed; otherwise only its
    /// rows changed (a new filter), and they are brought level with them.
    func followParent(_ name: String, reordered: Bool = false) throws {
        guard let parent = viewInstance(named: name) else { return }
        for child in filteredViews(over: name) {
            guard let writer = viewWriter(named: child), let filtering = writer.definition.filtering else { continue }
            let view = filtering.view(over: parent.definition, isPersistent: writer.definition.isPersistent,
                                      releaseHook: writer.definition.releaseHook)
            if let id = writer.instance.storageID { try ViewStorage.setVersionTag(view.versionTag, id: id, handle) }
            if reordered {
                try writer.redefine(view, writeContext)
            } else {
                writer.takeDefinition(view)
                try writer.refilter(over: parent.state, reevaluating: false, writeContext)
            }
            installWriter(writer)
            try followParent(child, reordered: reordered)
        }
    }

    /// The views registered with `name` as their parent, in name order.
    func filteredViews(over name: String) -> [String] {
        var children: [String] = []
        state.extensions.forEachName { candidate in
            if let parent = viewInstance(named: candidate.value)?.definition.filtering?.parent,
               bytesEqual(parent, name) {
                children.append(candidate.value)
            }
        }
        return children
    }

    /// Unregisters the views filtered over `name`, and theirs in turn.
    func unregisterFilteredViews(over name: String) throws {
        try unregisterFilteredViews(filteredViews(over: name))
    }

    /// Unregisters the search views that read full-text index `index`
    /// (and the views filtered over them): they cannot outlive it.
    func unregisterSearchViews(reading index: String) throws {
        var readers: [String] = []
        state.extensions.forEachName { candidate in
            if let search = viewInstance(named: candidate.value)?.definition.filtering?.search,
               bytesEqual(search.index, index) {
                readers.append(candidate.value)
            }
        }
        try unregisterFilteredViews(readers)
    }

    private func unregisterFilteredViews(_ names: [String]) throws {
        for child in names {
            try unregisterFilteredViews(over: child)
            try ViewStorage.drop(named: child, handle)
            if let writer = viewWriter(named: child) {
                release(writer.instance.definition, when: .committed)
                removeWriter(named: child)
            }
        }
    }
}
