/// Calls into a view's user code (grouping, sorting, find), one by one or
/// in the batch forms a binding gives, shared by row writes, `setObjects`
/// batches and populations. Every error names the view and the callback.
enum ViewCallbacks {
    /// Runs user code; any error becomes a `.callbackFailed` naming the view.
    static func run<T>(_ view: String, _ kind: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as YDBError where error.code == .callbackFailed {
            throw error
        } catch {
            throw YDBError(.callbackFailed, "view '\(view)': \(kind) callback failed: \(error)")
        }
    }

    /// The group `grouping` gives `row` (nil: left out), its name checked.
    static func group(_ view: String, _ grouping: ViewGrouping, _ row: ViewRow,
                      _ context: ExtensionWriteContext) throws -> String? {
        let group = try run(view, "grouping") { try grouping.run(context.transaction, row.narrowed(to: grouping.flavour)) }
        if let group { try validateName(group, "group name") }
        return group
    }

    /// The groups a batch form gives `asked` (nil: left out), one a row
    /// and each name checked.
    static func askGroups(_ view: String, _ asked: [BatchedRow], _ batch: ViewGrouping.Batch,
                          _ context: ExtensionWriteContext) throws -> [String?] {
        let groups = try run(view, "grouping") { try batch(context.transaction, asked) }
        try checkCount(groups.count, asked.count, view, "grouping")
        for case let group? in groups { try validateName(group, "group name") }
        return groups
    }

    /// The keys a batch form gives `asked`, one a row (none asked: no call).
    static func askKeys(_ view: String, _ asked: [BatchedRow], _ batch: ViewSorting.KeyBatch,
                        _ context: ExtensionWriteContext) throws -> [SortKey] {
        if asked.isEmpty { return [] }
        let keys = try run(view, "sorting") { try batch(context.transaction, asked) }
        try checkCount(keys.count, asked.count, view, "sorting")
        return keys
    }

    private static func checkCount(_ answers: Int, _ asked: Int, _ view: String, _ kind: String) throws {
        guard answers != asked else { return }
        throw YDBError(.callbackFailed, "view '\(view)': \(kind) batch callback answered \(answers) rows of \(asked)")
    }
}
