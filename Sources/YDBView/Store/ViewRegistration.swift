extension Database {
    /// Registers `view` under `name`, in its own read-write transaction.
    ///
    /// - A new view populates itself from the existing (allowed) rows.
    /// - A persistent view already stored with the same `versionTag` loads its
    ///   stored state and calls no callback — unless rows changed while it
    ///   was not registered (it is stale): then it repopulates.
    /// - A different tag, or a non-persistent view, repopulates.
    /// The commit's notification carries the view's log (a reset, then one
    /// insert per row) so mappings over the view get a changeset.
    /// Returns which of these happened.
    @discardableResult
    public func registerView(_ view: View, name: String) throws -> ViewRegistrationOutcome {
        do {
            try validateName(name, "view name")
            return try withInternalConnection { connection in
                try connection.readWrite { try $0.registerView(view, name: name) }
            }
        } catch {
            // Refused before its transaction began: never installed.
            view.releaseHook?.release()
            throw error
        }
    }

    /// How the registered view `name` was built when it was registered; nil
    /// for a name not registered.
    public func registrationOutcome(ofView name: String) -> ViewRegistrationOutcome? {
        try? withInternalConnection { connection in
            try connection.read { $0.viewInstance(named: name)?.registration }
        }
    }

    /// Unregisters a view and drops its stored tables. No-op for an unknown name.
    public func unregisterView(name: String) throws {
        try validateName(name, "view name")
        try withInternalConnection { connection in
            try connection.readWrite { try $0.unregisterView(name: name) }
        }
    }

    /// Names of the views registered as of the latest snapshot.
    public var registeredViewNames: [String] {
        (try? withInternalConnection { connection in
            try connection.read { $0.state.views.names.map(\.value) }
        }) ?? []
    }
}

extension ReadWriteTransaction {
    func registerView(_ view: View, name: String) throws -> ViewRegistrationOutcome {
        release(view, when: .rolledBack)
        return try viewWork {
            if let existing = writer(named: name) {
                if existing.instance.definition.releaseHook !== view.releaseHook {
                    release(existing.instance.definition, when: .committed)
                }
                // Switching between the comparator and sort-key forms needs
                // keys built (or dropped) even under the same tag.
                let same = existing.instance.definition.versionTag == view.versionTag
                    && existing.instance.definition.isPersistent == view.isPersistent
                    && existing.instance.definition.sorting.usesSortKeys == view.sorting.usesSortKeys
                if same && view.isPersistent {
                    existing.replaceCallbacks(view)
                    existing.instance.registration = .loaded
                    installWriter(existing)
                    return .loaded
                }
                try existing.redefine(view, storageID: try freshStorage(for: view, name: name), viewContext)
                existing.instance.registration = view.isPersistent ? .rebuiltForNewVersionTag : .built
                installWriter(existing)
                return existing.instance.registration
            }
            var outcome = ViewRegistrationOutcome.built
            if view.isPersistent, let stored = try ViewStorage.registration(named: name, handle) {
                let sameDefinition = stored.versionTag == view.versionTag && stored.format == ViewStorage.formatVersion
                if sameDefinition && stored.isFresh {
                    // Keys are what a sort-key view places rows by: without
                    // every key (stored by the comparator form under the same
                    // tag) it repopulates; a comparator ignores keys.
                    let (state, allKeyed) = try ViewStorage.load(id: stored.id,
                                                                 withSortKeys: view.sorting.usesSortKeys, handle)
                    if allKeyed || !view.sorting.usesSortKeys {
                        var instance = ViewInstance(name: name, definition: view, storageID: stored.id, state: state)
                        instance.registration = .loaded
                        installWriter(ViewWriter(instance: instance))
                        return .loaded
                    }
                }
                outcome = sameDefinition ? .rebuiltBecauseStale : .rebuiltForNewVersionTag
            }
            var instance = ViewInstance(name: name, definition: view,
                                        storageID: try freshStorage(for: view, name: name), state: ViewState())
            instance.registration = outcome
            let writer = ViewWriter(instance: instance)
            try writer.repopulate(viewContext)
            installWriter(writer)
            return outcome
        }
    }

    /// Drops whatever is stored under `name` and, for a persistent view,
    /// creates an empty table for it.
    private func freshStorage(for view: View, name: String) throws -> Int64? {
        try ViewStorage.drop(named: name, handle)
        return view.isPersistent ? try ViewStorage.create(named: name, versionTag: view.versionTag, handle) : nil
    }

    func unregisterView(name: String) throws {
        try viewWork {
            try ViewStorage.drop(named: name, handle)
            if let existing = writer(named: name) {
                release(existing.instance.definition, when: .committed)
                removeWriter(named: name)
            }
        }
    }

    enum Ending { case committed, rolledBack }

    /// Releases `view`'s callbacks if this transaction ends as given: a
    /// definition it installs goes if it rolls back; one it replaces or
    /// removes goes if it commits.
    private func release(_ view: View, when ending: Ending) {
        guard let hook = view.releaseHook else { return }
        whenEnded { committed in if committed == (ending == .committed) { hook.release() } }
    }

    /// Changes a registered view's grouping and sorting inside this
    /// transaction. With the same `versionTag` nothing happens; with a new
    /// one the view regroups and resorts every row, and this commit's
    /// changeset shows the result as moves, inserts and deletes.
    public func setViewDefinition(name: String, grouping: ViewGrouping, sorting: ViewSorting,
                                  versionTag: String) throws {
        try setViewDefinition(name: name, grouping: grouping, sorting: sorting, versionTag: versionTag,
                              releaseHook: nil)
    }

    /// `setViewDefinition`, with the hook that releases the new callbacks
    /// when they stop being used (the C layer's destructor). A definition
    /// not installed (same tag, unknown view, failure) is released when the
    /// transaction ends.
    package func setViewDefinition(name: String, grouping: ViewGrouping, sorting: ViewSorting,
                                   versionTag: String, releaseHook: ReleaseHook?) throws {
        // Installed or not, the new callbacks go on rollback; on commit they
        // go only if they were not installed (same tag, or a failure).
        var installed = false
        if let releaseHook { whenEnded { committed in if !(committed && installed) { releaseHook.release() } } }
        try viewWork {
            try validateName(name, "view name")
            guard let existing = writer(named: name) else {
                throw YDBError(.notFound, "no view named '\(name)' is registered")
            }
            guard existing.instance.definition.versionTag != versionTag else { return }
            var view = existing.instance.definition
            release(view, when: .committed)
            view.grouping = grouping
            view.sorting = sorting
            view.versionTag = versionTag
            view.releaseHook = releaseHook
            if let id = existing.instance.storageID { try ViewStorage.setVersionTag(versionTag, id: id, handle) }
            try existing.redefine(view, storageID: existing.instance.storageID, viewContext)
            installWriter(existing)
            installed = true
        }
    }
}
