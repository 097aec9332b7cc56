/// A new sorting, grouping or filter for a large view, set in the
/// background: the view is populated under its new definition off to the
/// side, with progress, as `registerViewAsync` populates one (writers wait
/// only for short slices), and installed in one short commit whose log —
/// and changeset — says only what changed, as `setViewDefinition` and
/// `setFilter` do inside a transaction.
extension Database {
    /// `setViewDefinition` in the background. The returned task reports
    /// progress, can be cancelled (the view keeps its definition) and is
    /// superseded by a later registration, redefinition or unregistration
    /// of the view. Refused for an unknown view and for a filtered view.
    @discardableResult
    public func setViewDefinitionAsync(
        name: String, grouping: ViewGrouping, sorting: ViewSorting, versionTag: String,
        progress: (@Sendable (ViewRegistrationProgress) -> Void)? = nil,
        completion: (@Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void)? = nil
    ) throws -> ViewRegistrationTask {
        try validateName(name, "view name")
        guard let current = latestExtensions[Name(name)] as? ViewInstance else {
            throw YDBError(.notFound, "no view named '\(name)' is registered")
        }
        if current.definition.filtering != nil {
            throw YDBError(.misuse, "view '\(name)' is a filtered view: it takes its grouping and sorting from its parent (set its filter, or redefine the parent)")
        }
        var view = current.definition
        view.grouping = grouping
        view.sorting = sorting
        view.versionTag = versionTag
        view.releaseHook = nil
        return try registerViewAsync(view, name: name, continuing: progress.map(Self.continuing),
                                     completion: completion, logsDifference: true)
    }

    /// `setFilter` in the background, as `setViewDefinitionAsync` does it:
    /// the new filter runs on every row of the parent off to the side.
    @discardableResult
    public func setFilterAsync(
        _ filter: ViewFilter, versionTag: String, forView name: String,
        progress: (@Sendable (ViewRegistrationProgress) -> Void)? = nil,
        completion: (@Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void)? = nil
    ) throws -> ViewRegistrationTask {
        try validateName(name, "view name")
        let extensions = latestExtensions
        guard let current = extensions[Name(name)] as? ViewInstance else {
            throw YDBError(.notFound, "no view named '\(name)' is registered")
        }
        guard let filtering = current.definition.filtering, filtering.search == nil else {
            throw YDBError(.misuse, "view '\(name)' is not a filtered view")
        }
        guard let parent = extensions[Name(filtering.parent)] as? ViewInstance else {
            throw YDBError(.notFound, "the parent view '\(filtering.parent)' of view '\(name)' is not registered")
        }
        let view = Filtering.view(over: parent.definition, named: filtering.parent, filter: filter, filterTag: versionTag,
                                  isPersistent: current.definition.isPersistent, releaseHook: nil)
        return try registerViewAsync(view, name: name, continuing: progress.map(Self.continuing),
                                     completion: completion, logsDifference: true)
    }

    private static func continuing(_ progress: @escaping @Sendable (ViewRegistrationProgress) -> Void)
        -> @Sendable (ViewRegistrationProgress) -> Bool {
        { report in progress(report); return true }
    }
}
