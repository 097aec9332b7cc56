/// A registered full-text index as of one snapshot: its definition, its
/// table and how it was registered. Nothing of its contents lives in
/// memory: the FTS5 table is the index, read through SQLite's snapshot
/// like the rows, so a snapshot needs no copy of anything.
final class FullTextIndexInstance: RegisteredExtension, Sendable {
    let name: String
    let definition: FullTextIndex
    /// Its row in `ydb_fts_indexes`, and its table's number.
    let id: Int64
    let sql: FullTextIndexSQL
    /// How it was built when it was last registered.
    let registration: ViewRegistrationOutcome

    init(name: String, definition: FullTextIndex, id: Int64, registration: ViewRegistrationOutcome) {
        self.name = name
        self.definition = definition
        self.id = id
        sql = FullTextIndexSQL(id: id, columns: definition.columns)
        self.registration = registration
    }

    /// The same table with another definition (same columns and tokenizer).
    func replacingDefinition(_ definition: FullTextIndex, registration: ViewRegistrationOutcome) -> FullTextIndexInstance {
        FullTextIndexInstance(name: name, definition: definition, id: id, registration: registration)
    }

    func makeWriter() -> any ExtensionWriter { FullTextIndexWriter(instance: self) }
    var releaseHook: ReleaseHook? { definition.releaseHook }
    var storageID: Int64? { id }
    var storageRegistry: StoredExtensionRegistry { .fullTextIndexes }
    var kindDescription: String { "a full-text index" }
    /// Every write goes to the FTS5 table at once, inside the transaction.
    var deferredWrites: (any DeferredWrites)? { nil }
}

/// Keeps one index's table in step with the rows, inside the transaction
/// that changes them: a row event costs one FTS5 insert or delete (two for
/// an update), through statements prepared once per connection. A rollback
/// undoes them with the rest of the SQLite transaction; nothing is kept in
/// memory to undo.
final class FullTextIndexWriter: ExtensionWriter {
    private(set) var instance: FullTextIndexInstance

    init(instance: FullTextIndexInstance) { self.instance = instance }

    var working: any RegisteredExtension { instance }
    private var definition: FullTextIndex { instance.definition }

    /// Swaps in another definition of the same table (a registration under
    /// the same tag and layout).
    func replace(_ replacement: FullTextIndexInstance) { instance = replacement }

    // MARK: Row events

    func rowInserted(_ rowid: Int64, _ row: ViewRow, _ context: ExtensionWriteContext) throws {
        guard definition.allows(row.collection) else { return }
        try index(rowid, row, context)
    }

    /// Indexed again only when the invoke options say this change matters
    /// (as a view's callbacks run again): the old text goes, the new comes.
    func rowUpdated(_ rowid: Int64, _ row: ViewRow, _ kind: RowChangeKind, _ context: ExtensionWriteContext) throws {
        guard definition.allows(row.collection), definition.options.isTriggered(by: kind) else { return }
        try delete(rowid, context.storage)
        try index(rowid, row, context)
    }

    func rowsRemoved(_ rows: [(rowid: Int64, rowKey: RowKey)], _ context: ExtensionWriteContext) throws {
        for (rowid, rowKey) in rows where definition.allows(rowKey.collection) {
            try delete(rowid, context.storage)
        }
    }

    func allRemoved(keys: RowKeys, _ context: ExtensionWriteContext) throws {
        let clear = try context.storage.statement(instance.sql.deleteAll)
        defer { clear.reset() }
        try clear.run()
    }

    /// Its callback is user code: a batch's rows of its collections are
    /// placed with it running.
    func placesBatchWithoutCallbacks(inCollection collection: String) -> Bool { !definition.allows(collection) }

    /// Every allowed row, in rowid order (a registration's build).
    func populate(_ context: ExtensionWriteContext) throws {
        let collections = definition.allowedCollections.map { Set($0.map { Name($0) }).sorted().map(\.value) }
        try context.rows.scan(definition.flavour, collections: collections) { rowid, row in
            try index(rowid, row, context)
        }
    }

    /// Adds `row` with the text the callback gives it (nothing when it
    /// gives none).
    private func index(_ rowid: Int64, _ row: ViewRow, _ context: ExtensionWriteContext) throws {
        guard let texts = try texts(of: row, context) else { return }
        let insert = try context.storage.statement(instance.sql.insert)
        defer { insert.reset() }
        insert.bind(1, rowid)
        for (offset, text) in texts.enumerated() { insert.bind(Int32(offset + 2), text) }
        try insert.run()
    }

    private func delete(_ rowid: Int64, _ storage: SQLiteHandle) throws {
        let delete = try storage.statement(instance.sql.delete)
        defer { delete.reset() }
        delete.bind(1, rowid)
        try delete.run()
    }

    /// The callback's text for each column, in column order; nil when it
    /// leaves the row out. Any failure is `.callbackFailed` naming the index
    /// (the view callbacks' rule), which poisons the transaction.
    private func texts(of row: ViewRow, _ context: ExtensionWriteContext) throws -> [String]? {
        let given: [String: String]?
        do {
            given = try definition.extract(context.transaction, row.narrowed(to: definition.flavour))
        } catch let error as YDBError where error.code == .callbackFailed {
            throw error
        } catch {
            throw YDBError(.callbackFailed, "full-text index '\(instance.name)': callback failed: \(error)")
        }
        guard let given, !given.isEmpty else { return nil }
        let columns = definition.columns
        let unknown = given.keys.filter { !columns.contains($0) }.sorted()
        if !unknown.isEmpty {
            throw YDBError(.callbackFailed, "full-text index '\(instance.name)': callback gave text for "
                           + "\(unknown.map { "'\($0)'" }.joined(separator: ", ")), not a column of \(columns)")
        }
        return try columns.map { column in
            let text = given[column] ?? ""
            // NUL cannot come back out through the C API (snippets).
            if text.utf8.contains(0) {
                throw YDBError(.callbackFailed,
                               "full-text index '\(instance.name)': the text of column '\(column)' contains a NUL character")
            }
            return text
        }
    }

    // MARK: Commit steps: everything is already in SQLite's transaction

    func checkAfterWrite() {}
    func prepareCommit(_ handle: SQLiteHandle) throws {}
    func checkBeforeCommit(_ handle: SQLiteHandle, _ database: Database) throws {}
    func finish(snapshotBefore: UInt64, snapshot: UInt64) -> (any RegisteredExtension, (any Sendable)?) {
        (instance, nil)
    }
    func committed() -> Bool { false }
    func rolledBack() {}
}
