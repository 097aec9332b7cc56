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
            registrations.supersede(name, by: "a later registration")
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
        (latestExtensions[Name(name)] as? ViewInstance)?.registration
    }

    /// Unregisters a view and drops its stored tables. No-op for an unknown name.
    public func unregisterView(name: String) throws {
        try validateName(name, "view name")
        registrations.supersede(name, by: "unregistering it")
        try withInternalConnection { connection in
            try connection.readWrite { try $0.unregisterView(name: name) }
        }
    }

    /// Names of the views registered as of the latest snapshot.
    public var registeredViewNames: [String] {
        let extensions = latestExtensions
        return extensions.names.filter { extensions[$0] is ViewInstance }.map(\.value)
    }
}

extension ReadWriteTransaction {
    func registerView(_ view: View, name: String) throws -> ViewRegistrationOutcome {
        release(view, when: .rolledBack)
        return try extensionWork {
            let plan = try registrationPlan(view, name: name)
            guard case .populate(let outcome) = plan else { return try install(plan, view) }
            let writer = try writerToPopulate(view, name: name)
            try writer.repopulate(writeContext)
            writer.instance.registration = outcome
            installWriter(writer)
            try followParent(name, reordered: true)
            return outcome
        }
    }

    /// What registering `view` as `name` takes.
    enum RegistrationPlan {
        /// Registered with the same tag and persistent: swap the callbacks.
        case keep(ViewWriter)
        /// Stored with the same tag, fresh: loaded as stored (no callback).
        case load(ViewInstance)
        /// A population, which gives this outcome.
        case populate(ViewRegistrationOutcome)
    }

    /// Decides how `view` is registered as `name`; changes nothing.
    func registrationPlan(_ view: View, name: String) throws -> RegistrationPlan {
        try refuseNameOfOtherKind(name, registering: ViewInstance.self, as: "view")
        if let existing = viewWriter(named: name) {
            // Switching between the comparator and sort-key forms needs
            // keys built (or dropped) even under the same tag.
            let same = existing.instance.definition.versionTag == view.versionTag
                && existing.instance.definition.isPersistent == view.isPersistent
                && existing.instance.definition.sorting.usesSortKeys == view.sorting.usesSortKeys
            if same && view.isPersistent { return .keep(existing) }
            return .populate(view.isPersistent ? .rebuiltForNewVersionTag : .built)
        }
        guard stores(view), let stored = try ViewStorage.registration(named: name, handle) else {
            if let image = try viewFromSharedImage(view, name: name) { return .load(image) }
            return .populate(.built)
        }
        let sameDefinition = stored.versionTag == view.versionTag && stored.format == ViewStorage.formatVersion
        if sameDefinition && stored.isFresh {
            // Keys are what a sort-key view places rows by: without every
            // key (stored by the comparator form under the same tag) it
            // repopulates; a comparator ignores keys.
            let (state, allKeyed) = try ViewStorage.load(id: stored.id, withSortKeys: view.sorting.usesSortKeys,
                                                         handle)
            if allKeyed || !view.sorting.usesSortKeys {
                var instance = ViewInstance(name: name, definition: view, storageID: stored.id, state: state)
                instance.registration = .loaded
                return .load(instance)
            }
        }
        return .populate(sameDefinition ? .rebuiltBecauseStale : .rebuiltForNewVersionTag)
    }

    /// Installs a registration that needs no population (`.keep`, `.load`).
    func install(_ plan: RegistrationPlan, _ view: View) throws -> ViewRegistrationOutcome {
        switch plan {
        case .keep(let existing):
            releaseReplaced(existing, by: view)
            existing.replaceCallbacks(view)
            existing.instance.registration = .loaded
            installWriter(existing)
        case .load(var instance):
            try instance.loadSortingRows(RowReader(handle: handle))
            installWriter(ViewWriter(instance: instance))
        case .populate:
            preconditionFailure("a population is not installed this way")
        }
        return .loaded
    }

    /// The writer a population of `view` fills, over fresh storage: the
    /// registered view's own (its log then shows its old rows removed), or
    /// a new one.
    /// `storedLater`: an asynchronous registration stores the rows, a
    /// chunk at a time (`storeRows`).
    func writerToPopulate(_ view: View, name: String, storedLater: Bool = false) throws -> ViewWriter {
        let storageID = try freshStorage(for: view, name: name)
        let populated: ViewWriter
        if let existing = viewWriter(named: name) {
            releaseReplaced(existing, by: view)
            existing.takeDefinition(view)
            populated = existing
        } else {
            populated = ViewWriter(instance: ViewInstance(name: name, definition: view, storageID: storageID,
                                                          state: ViewState()))
        }
        populated.replaceStorage(with: storageID, complete: !storedLater)
        return populated
    }

    /// The registered view's callbacks go when this commits, unless `view`
    /// carries the same ones.
    func releaseReplaced(_ existing: ViewWriter, by view: View) {
        if existing.instance.definition.releaseHook !== view.releaseHook {
            release(existing.instance.definition, when: .committed)
        }
    }

    /// The first step of an asynchronous registration, under the write
    /// lock: a registration that needs no population (a view kept or
    /// loaded as stored) is installed now, and `installed` is true;
    /// otherwise nothing changes and `outcome` is what the population will
    /// give.
    func registerUnlessPopulating(_ view: View, name: String) throws
        -> (installed: Bool, outcome: ViewRegistrationOutcome) {
        try extensionWork {
            let plan = try registrationPlan(view, name: name)
            if case .populate(let outcome) = plan { return (false, outcome) }
            release(view, when: .rolledBack)
            return (true, try install(plan, view))
        }
    }

    /// The last step of an asynchronous registration: `built`, which
    /// populated `view` off to the side, replaces whatever `name` holds and
    /// catches up with `changes` (the rows changed since it last read
    /// them), in this transaction. A persistent view is stored afterwards,
    /// a chunk per transaction (`storeRows`): its storage id is returned,
    /// and until then it is stored as stale, so that a view left half
    /// stored (a crash, a close) is repopulated when next registered.
    func installPopulation(_ view: View, name: String, outcome: ViewRegistrationOutcome, built: ViewWriter,
                           changes: [Int64: RowChangeKind], logsDifference: Bool = false) throws -> Int64? {
        release(view, when: .rolledBack)
        return try extensionWork {
            // Another kind may have taken the name while this one populated.
            try refuseNameOfOtherKind(name, registering: ViewInstance.self, as: "view")
            let writer = try writerToPopulate(view, name: name, storedLater: true)
            if let id = writer.instance.storageID { try ViewStorage.setFresh(false, id: id, handle) }
            func adopt() throws {
                try writer.adopt(built, storing: false, writeContext)
                try writer.catchUp(changes, writeContext)
            }
            if logsDifference { try writer.loggingDifference(adopt) } else { try adopt() }
            writer.instance.registration = outcome
            installWriter(writer)
            try followParent(name, reordered: true)
            return writer.instance.storageID
        }
    }

    /// Stores rows of view `name`, from row id `start` on, as this
    /// transaction sees them (rows changed since the install were stored by
    /// their commits: this writes the same), `batch` rows at a time, until
    /// `stop()` says so after a batch. Returns the row id to go on from;
    /// nil once every row is stored (the view is then fresh), or when
    /// `name` no longer has storage `id` (unregistered or replaced
    /// meanwhile).
    func storeRows(ofView name: String, storageID id: Int64, from start: Int64, batch: Int = 256,
                   until stop: () -> Bool) throws -> Int64? {
        try extensionWork { () -> Int64? in
            guard let state = viewInstance(named: name).flatMap({ $0.storageID == id ? $0.state : nil }) else {
                return nil
            }
            var lower = state.rank(ofRowid: start)
            var next: Int64?
            var stored = ViewStorage.BulkPut(id: id, handle)
            repeat {
                let upper = min(state.totalCount, lower + batch)
                var failure: Error?
                state.forEachStoredRow(inRanks: lower ..< upper) { rowid, place, sortKey in
                    do {
                        try stored.put(rowid: rowid, group: place.group, label: place.label, sortKey: sortKey)
                        next = rowid + 1
                        return true
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let failure { throw failure }
                lower = upper
            } while lower < state.totalCount && !stop()
            try stored.finish()
            guard lower == state.totalCount else { return next }
            try ViewStorage.setFresh(true, id: id, handle)
            let complete = viewWriter(named: name)!
            complete.storageIsComplete()
            if Tuning.checksInvariants { try complete.checkStored(handle) }
            return nil
        }
    }

    /// Drops whatever is stored under `name` and, for a persistent view,
    /// creates an empty table for it.
    private func freshStorage(for view: View, name: String) throws -> Int64? {
        try ViewStorage.drop(named: name, handle)
        return stores(view) ? try ViewStorage.create(named: name, versionTag: view.versionTag, handle) : nil
    }

    /// Whether `view` is kept in the file. In shared mode no view is: each
    /// process keeps its own in memory, brought forward by the commit log
    /// (docs/behaviour.md, "Several processes").
    func stores(_ view: View) -> Bool {
        view.isPersistent && !connection.database.isMultiProcess
    }

    func unregisterView(name: String) throws {
        try extensionWork {
            try unregisterFilteredViews(over: name)
            try ViewStorage.drop(named: name, handle)
            if let existing = viewWriter(named: name) {
                release(existing.instance.definition, when: .committed)
                removeWriter(named: name)
            }
        }
    }

    enum Ending { case committed, rolledBack }

    /// Releases `view`'s callbacks if this transaction ends as given: a
    /// definition it installs goes if it rolls back; one it replaces or
    /// removes goes if it commits.
    func release(_ view: View, when ending: Ending) {
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
        try extensionWork {
            try validateName(name, "view name")
            guard let existing = viewWriter(named: name) else {
                throw YDBError(.notFound, "no view named '\(name)' is registered")
            }
            guard existing.instance.definition.versionTag != versionTag else { return }
            if existing.definition.filtering != nil {
                throw YDBError(.misuse, "view '\(name)' is a filtered view: it takes its grouping and sorting from its parent (set its filter, or redefine the parent)")
            }
            var view = existing.instance.definition
            release(view, when: .committed)
            view.grouping = grouping
            view.sorting = sorting
            view.versionTag = versionTag
            view.releaseHook = releaseHook
            if let id = existing.instance.storageID { try ViewStorage.setVersionTag(versionTag, id: id, handle) }
            try existing.redefine(view, writeContext)
            installWriter(existing)
            installed = true
            try followParent(name, reordered: true)
        }
    }
}

extension ViewInstance {
    /// A comparator view that keeps its sorting rows in memory, loaded as
    /// stored, reads them once, in one scan of the row table (a row at a
    /// time as commits compared them would read each at random).
    mutating func loadSortingRows(_ rows: RowReader) throws {
        guard definition.keepsSortingRowsInMemory, !definition.sorting.usesSortKeys else { return }
        let cache = SortingRowCache()
        let places = state
        try rows.scan(definition.sorting.flavour, collections: definition.scannedCollections) { rowid, row in
            if places.contains(rowid: rowid) { _ = cache.store(row, for: rowid, unbounded: true) }
        }
        rowCache = cache
    }
}
