extension Database {
    /// Registers `index` under `name`, in its own read-write transaction,
    /// and returns how it was built:
    ///
    /// - `.built`: new; every allowed row was indexed (the callback ran once
    ///   per row);
    /// - `.loaded`: stored (or registered) with the same `versionTag`,
    ///   columns and tokenizer, and fresh: used as it is, no callback ran;
    /// - `.rebuiltForNewVersionTag`: stored with another tag (or other
    ///   columns or tokenizer): rebuilt from every row;
    /// - `.rebuiltBecauseStale`: rows changed while it was not registered
    ///   (by this library, or by another SQLite client): rebuilt.
    ///
    /// Views and full-text indexes share one namespace: a name registered
    /// as a view is refused (`.invalidArgument`), and the reverse. A
    /// refused definition (no columns, a bad column name or tokenizer) is
    /// `.invalidArgument`; a failing callback is `.callbackFailed` and
    /// registers nothing.
    @discardableResult
    public func registerFullTextIndex(_ index: FullTextIndex, name: String) throws -> ViewRegistrationOutcome {
        do {
            try validateName(name, "full-text index name")
            try index.validate()
            // A view still populating in the background under this name
            // would otherwise fail when it installs: the later
            // registration of a name wins, as between two views.
            registrations.supersede(name, by: "registering a full-text index")
            return try withInternalConnection { connection in
                try connection.readWrite { try $0.registerFullTextIndex(index, name: name) }
            }
        } catch {
            // Refused before its transaction began: never installed.
            index.releaseHook?.release()
            throw error
        }
    }

    /// Unregisters full-text index `name` and drops its tables (also when
    /// it is stored but not registered). No-op for a name that is not one.
    public func unregisterFullTextIndex(name: String) throws {
        try validateName(name, "full-text index name")
        try withInternalConnection { connection in
            try connection.readWrite { try $0.unregisterFullTextIndex(name: name) }
        }
    }

    /// Names of the full-text indexes registered as of the latest snapshot,
    /// in byte order.
    public var registeredFullTextIndexNames: [String] {
        let extensions = latestExtensions
        return extensions.names.filter { extensions[$0] is FullTextIndexInstance }.map(\.value)
    }

    /// How the registered full-text index `name` was built when it was last
    /// registered; nil for a name that is not one.
    public func registrationOutcome(ofFullTextIndex name: String) -> ViewRegistrationOutcome? {
        (latestExtensions[Name(name)] as? FullTextIndexInstance)?.registration
    }
}

extension ReadWriteTransaction {
    func registerFullTextIndex(_ index: FullTextIndex, name: String) throws -> ViewRegistrationOutcome {
        release(index.releaseHook, ifCommitted: false)
        if connection.database.isMultiProcess {
            // Its table is kept by the writing process: one that has not
            // registered it would leave it short (docs/behaviour.md).
            throw YDBError(.misuse, "full-text indexes (and search views) are not available in shared mode yet: open the database in exclusive mode to use them")
        }
        return try extensionWork {
            try refuseNameOfOtherKind(name, registering: FullTextIndexInstance.self, as: "full-text index",
                                      existingKind: { $0 is ViewInstance ? "a view" : $0.kindDescription })
            let registered = writer(named: name) as? FullTextIndexWriter
            let outcome: ViewRegistrationOutcome
            if let registered {
                let current = registered.instance.definition
                releaseReplaced(current, by: index)
                if current.versionTag == index.versionTag && current.layout == index.layout {
                    // Same table, new callbacks: nothing to index again.
                    registered.replace(registered.instance.replacingDefinition(index, registration: .loaded))
                    installWriter(registered)
                    return .loaded
                }
                outcome = .rebuiltForNewVersionTag
            } else if let stored = try FullTextIndexStorage.registration(named: name, handle) {
                let sameDefinition = stored.versionTag == index.versionTag && stored.layout == index.layout
                if sameDefinition && stored.isFresh {
                    let instance = FullTextIndexInstance(name: name, definition: index, id: stored.id, registration: .loaded)
                    installWriter(FullTextIndexWriter(instance: instance))
                    return .loaded
                }
                outcome = sameDefinition ? .rebuiltBecauseStale : .rebuiltForNewVersionTag
            } else {
                outcome = .built
            }
            // A fresh table, filled from the rows as this transaction sees them.
            try FullTextIndexStorage.drop(named: name, handle)
            let id = try FullTextIndexStorage.create(named: name, index, handle)
            let writer = FullTextIndexWriter(instance: FullTextIndexInstance(name: name, definition: index, id: id,
                                                                             registration: outcome))
            try writer.populate(writeContext)
            installWriter(writer)
            return outcome
        }
    }

    func unregisterFullTextIndex(name: String) throws {
        try extensionWork {
            try unregisterSearchViews(reading: name)
            try FullTextIndexStorage.drop(named: name, handle)
            if let registered = writer(named: name) as? FullTextIndexWriter {
                release(registered.instance.definition.releaseHook, ifCommitted: true)
                removeWriter(named: name)
            }
        }
    }

    /// The registered definition's callbacks go when this commits, unless
    /// `index` carries the same ones.
    private func releaseReplaced(_ current: FullTextIndex, by index: FullTextIndex) {
        if current.releaseHook !== index.releaseHook { release(current.releaseHook, ifCommitted: true) }
    }

    /// Releases `hook` when this transaction ends as said: a definition it
    /// installs goes if it rolls back; one it replaces or removes goes if
    /// it commits.
    private func release(_ hook: ReleaseHook?, ifCommitted: Bool) {
        guard let hook else { return }
        whenEnded { committed in if committed == ifCommitted { hook.release() } }
    }
}
