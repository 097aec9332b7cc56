/// Keeps or leaves out a row of a filtered view: given the group the parent
/// view puts it in, true keeps it. Throwing aborts the transaction.
///
/// ```swift
/// let unread = ViewFilter(flavour: .object) { group, row in row.object!.first == 0 }
/// ```
///
/// Like a grouping, the body may take the running transaction first, to
/// read other rows (a read-only handle valid during the call). A row it
/// reads is not a dependency: when the answer depends on other rows or on
/// the time, touch the rows concerned (`touchRows`, `touchRows(inGroup:)`)
/// or set the filter again with a new tag.
public struct ViewFilter: Sendable {
    public typealias Body = @Sendable (String, ViewRow) throws -> Bool
    public typealias TransactionBody = @Sendable (ReadTransaction, String, ViewRow) throws -> Bool

    public let flavour: ViewFlavour
    /// Which changes to a row make the filter run again (defaults by flavour,
    /// as for a grouping).
    public let options: InvokeOptions
    public let readsTransaction: Bool
    /// The body, given the running transaction (see `ViewGrouping.run`).
    let run: @Sendable (ReadTransaction, String, ViewRow) throws -> Bool

    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping Body) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        readsTransaction = false
        run = { _, group, row in try body(group, row) }
    }

    public init(flavour: ViewFlavour, options: InvokeOptions? = nil, _ body: @escaping TransactionBody) {
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        readsTransaction = true
        run = { running, group, row in try CallbackTransaction.lend(running) { try body($0, group, row) } }
    }

    /// A filter from its parts (a search view's, which reads its index).
    init(flavour: ViewFlavour, options: InvokeOptions, run: @escaping @Sendable (ReadTransaction, String, ViewRow) throws -> Bool) {
        self.flavour = flavour
        self.options = options
        readsTransaction = true
        self.run = run
    }
}

/// A view over another view (its parent): the parent's groups and order,
/// only the rows the filter keeps (YapDatabase's filtered view). Register it
/// with `Database.registerFilteredView`; change its filter inside a
/// read-write transaction with `setFilter`, which logs exactly the rows
/// that enter and leave. A filtered view may be the parent of another.
///
/// ```swift
/// try database.registerView(byDate, name: "messages")
/// try database.registerFilteredView(FilteredView(parent: "messages", filter: unread, versionTag: "1"),
///                                   name: "unread")
/// ```
public struct FilteredView: Sendable {
    /// The registered view it filters.
    public var parent: String
    public var filter: ViewFilter
    /// Change it whenever the filter changes.
    public var versionTag: String
    public var isPersistent: Bool
    /// Run when this filter stops being used (see `ReleaseHook`).
    package var releaseHook: ReleaseHook?

    public init(parent: String, filter: ViewFilter, versionTag: String = "", isPersistent: Bool = true) {
        self.parent = parent
        self.filter = filter
        self.versionTag = versionTag
        self.isPersistent = isPersistent
    }
}

/// What a filtered view's definition is made of (`View.filtering`).
struct Filtering: Sendable {
    let parent: String
    let filter: ViewFilter
    let filterTag: String
    /// Set for a search view: the full-text index and the query whose
    /// matches the filter keeps (`SearchView`).
    var search: SearchQuery?

    /// What must hear of a row change before this view (its filter reads them).
    var dependencies: [String] { [parent] + (search.map { [$0.index] } ?? []) }

    /// The stored version tag: the filter's and the parent's, so that a
    /// parent re-registered with a new tag makes a stored filtered view
    /// repopulate when it is registered again.
    static func versionTag(filterTag: String, parentTag: String) -> String {
        "\(filterTag)\u{1F}over\u{1F}\(parentTag)"
    }

    /// The definition of a view filtering `parentView` (registered as
    /// `parent`): a grouping that asks the parent's grouping — as the
    /// running transaction sees the parent, so a parent whose callbacks are
    /// swapped is followed — and then the filter; the parent's sorting.
    static func view(over parentView: View, named parent: String, filter: ViewFilter, filterTag: String,
                     search: SearchQuery? = nil, isPersistent: Bool, releaseHook: ReleaseHook?) -> View {
        let parentGrouping = parentView.grouping, parentSorting = parentView.sorting
        @Sendable func current(_ running: ReadTransaction) throws -> View {
            guard let definition = running.viewInstance(named: parent)?.definition else {
                throw YDBError(.notFound, "the parent view '\(parent)' of a filtered view is not registered")
            }
            return definition
        }
        let grouping = ViewGrouping(
            flavour: parentGrouping.flavour.union(filter.flavour),
            options: parentGrouping.options.union(filter.options),
            readsTransaction: parentGrouping.readsTransaction || filter.readsTransaction
        ) { running, row in
            let grouping = try current(running).grouping
            guard let group = try grouping.run(running, row.narrowed(to: grouping.flavour)) else { return nil }
            return try filter.run(running, group, row.narrowed(to: filter.flavour)) ? group : nil
        }
        let form: ViewSorting.Form
        switch parentSorting.form {
        case .comparator:
            form = .comparator { running, group, a, b in
                guard case .comparator(let compare) = try current(running).sorting.form else {
                    throw YDBError(.misuse, "the parent view '\(parent)' changed its sorting's form")
                }
                return try compare(running, group, a, b)
            }
        case .key:
            form = .key { running, group, row in
                guard case .key(let key) = try current(running).sorting.form else {
                    throw YDBError(.misuse, "the parent view '\(parent)' changed its sorting's form")
                }
                return try key(running, group, row)
            }
        }
        let sorting = search?.ranking
            ?? ViewSorting(parentSorting.flavour, parentSorting.options, reads: parentSorting.readsTransaction, form)
        var view = View(grouping: grouping, sorting: sorting,
                        versionTag: versionTag(filterTag: filterTag, parentTag: parentView.versionTag),
                        isPersistent: isPersistent, allowedCollections: parentView.allowedCollections)
        view.filtering = Filtering(parent: parent, filter: filter, filterTag: filterTag, search: search)
        view.keepsSortingRowsInMemory = parentView.keepsSortingRowsInMemory
        view.releaseHook = releaseHook
        return view
    }

    /// This filtering over the parent's definition as it is now (the parent
    /// was redefined, or its own filter changed).
    func view(over parentView: View, isPersistent: Bool, releaseHook: ReleaseHook?) -> View {
        Self.view(over: parentView, named: parent, filter: filter, filterTag: filterTag, search: search,
                  isPersistent: isPersistent, releaseHook: releaseHook)
    }
}

/// A search view's full-text index and current query (`Filtering.search`);
/// its filter is made in `Search/`, which reads the index.
struct SearchQuery: Sendable {
    let index: String
    let query: String
    /// Set for a view ordered by rank: the sorting it places rows by
    /// instead of its parent's.
    var ranking: ViewSorting? = nil
}
