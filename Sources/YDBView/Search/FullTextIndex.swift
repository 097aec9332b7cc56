/// A full-text index over the rows: SQLite FTS5, kept up to date in the
/// same SQLite transaction as the rows it indexes, and stored in the
/// database (docs/full-text-index.md).
///
/// A callback gives each row's text, column by column; the index finds
/// rows by FTS5 queries and ranks them by bm25.
///
/// ```swift
/// let index = FullTextIndex(columns: ["title", "body"], flavour: .object, versionTag: "1") { row in
///     let note = try decode(row.object!)
///     return ["title": note.title, "body": note.body]
/// }
/// try database.registerFullTextIndex(index, name: "notes")
/// let matches = try connection.read { try $0.search(index: "notes", query: "swift AND sqlite") }
/// ```
///
/// The callback returns nil (or an empty dictionary) to leave the row out;
/// a column it does not name is empty for that row. A form taking the
/// running transaction first reads other rows, as `ViewGrouping`'s does:
/// a read-only handle valid only during the call, and a row it reads is no
/// dependency (touch the indexed rows to index them again).
///
/// The callback is `@Sendable`: it runs on whichever thread commits a write.
public struct FullTextIndex: Sendable {
    public typealias Body = @Sendable (ViewRow) throws -> [String: String]?
    public typealias TransactionBody = @Sendable (ReadTransaction, ViewRow) throws -> [String: String]?

    /// Unicode-aware words, case folded, accents removed from Latin letters
    /// ("Café" finds "cafe").
    public static let defaultTokenizer = "unicode61 remove_diacritics 2"

    /// The FTS5 columns, in order: names a query may filter on
    /// (`title: swift`), and what the callback's dictionary is keyed by.
    public let columns: [String]
    public let flavour: ViewFlavour
    /// Which changes to an existing row index it again (an insert always does).
    public let options: InvokeOptions
    /// True when the callback takes the transaction.
    public let readsTransaction: Bool
    /// Change it whenever the callback changes what it gives: an index
    /// stored with the same tag is loaded as it is, calling nothing.
    public var versionTag: String
    /// When set, only rows of these collections are ever indexed (matched
    /// by their bytes, as `View.allowedCollections`).
    public var allowedCollections: [String]? {
        didSet { allowedNames = allowedCollections.map { Set($0.map { Name($0) }) } }
    }
    private var allowedNames: Set<Name>?
    /// FTS5's `tokenize` option (docs/full-text-index.md).
    public var tokenizer: String
    /// The callback, given the running transaction (a row-only one ignores it).
    let extract: @Sendable (ReadTransaction, ViewRow) throws -> [String: String]?
    /// Run when this definition stops being used (see `ReleaseHook`).
    package var releaseHook: ReleaseHook?

    public init(columns: [String], flavour: ViewFlavour = .row, options: InvokeOptions? = nil,
                versionTag: String = "", allowedCollections: [String]? = nil,
                tokenizer: String = FullTextIndex.defaultTokenizer, _ body: @escaping Body) {
        self.init(columns, flavour, options, versionTag, allowedCollections, tokenizer, reads: false) { _, row in
            try body(row)
        }
    }

    /// An index whose callback also reads the transaction running it.
    public init(columns: [String], flavour: ViewFlavour = .row, options: InvokeOptions? = nil,
                versionTag: String = "", allowedCollections: [String]? = nil,
                tokenizer: String = FullTextIndex.defaultTokenizer, _ body: @escaping TransactionBody) {
        self.init(columns, flavour, options, versionTag, allowedCollections, tokenizer, reads: true) { running, row in
            try CallbackTransaction.lend(running) { try body($0, row) }
        }
    }

    private init(_ columns: [String], _ flavour: ViewFlavour, _ options: InvokeOptions?, _ versionTag: String,
                 _ allowedCollections: [String]?, _ tokenizer: String, reads: Bool,
                 _ extract: @escaping @Sendable (ReadTransaction, ViewRow) throws -> [String: String]?) {
        self.columns = columns
        self.flavour = flavour
        self.options = options ?? flavour.defaultInvokeOptions
        readsTransaction = reads
        self.versionTag = versionTag
        self.allowedCollections = allowedCollections
        allowedNames = allowedCollections.map { Set($0.map { Name($0) }) }
        self.tokenizer = tokenizer
        self.extract = extract
    }

    func allows(_ collection: String) -> Bool {
        allowedNames?.contains(Name(collection)) ?? true
    }

    /// What the FTS5 table is made of, as stored with it: an index stored
    /// with another layout is rebuilt even under the same tag (its table
    /// has other columns, or splits words otherwise).
    var layout: String { columns.joined(separator: ",") + "|" + tokenizer }

    /// Refuses columns and a tokenizer that FTS5 would reject, or that
    /// could leave the quotes they are written in.
    func validate() throws {
        guard !columns.isEmpty else {
            throw YDBError(.invalidArgument, "a full-text index needs at least one column")
        }
        var seen = Set<String>()
        for column in columns {
            try Self.validateColumn(column)
            guard seen.insert(column.lowercased()).inserted else {
                throw YDBError(.invalidArgument, "full-text column '\(column)' is named twice (names ignore case)")
            }
        }
        try Self.validateTokenizer(tokenizer)
    }

    /// Plain ASCII identifiers: they are SQL column names and the names a
    /// query filters on, so anything else would need quoting in queries too.
    /// FTS5 reserves `rank` and `rowid` (and SQLite `oid`, `_rowid_`); the
    /// table's own name (`ydb_fts_<id>`) must not be a column either.
    private static func validateColumn(_ column: String) throws {
        let bytes = Array(column.utf8)
        let isIdentifier = bytes.first.map { Self.startsIdentifier($0) } == true
            && bytes.allSatisfy { Self.startsIdentifier($0) || ($0 >= 0x30 && $0 <= 0x39) }
        guard isIdentifier else {
            throw YDBError(.invalidArgument,
                           "full-text column '\(column)' is not a name of ASCII letters, digits and '_' starting with a letter or '_'")
        }
        let lowered = column.lowercased()
        if ["rank", "rowid", "oid", "_rowid_"].contains(lowered) || lowered.hasPrefix("ydb_") {
            throw YDBError(.invalidArgument, "full-text column name '\(column)' is reserved (rank, rowid, oid, _rowid_, ydb_*)")
        }
    }

    private static func startsIdentifier(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    /// Printable ASCII without `"` or `;`: the tokenizer is written into the
    /// table's `CREATE` statement between double quotes, so one could end
    /// it. (FTS5 reads quoted arguments in single quotes: `unicode61
    /// tokenchars '-_'`.) What is left, FTS5 checks when the table is created.
    private static func validateTokenizer(_ tokenizer: String) throws {
        guard !tokenizer.allSatisfy({ $0 == " " }) else {
            throw YDBError(.invalidArgument, "the full-text tokenizer is empty")
        }
        for byte in tokenizer.utf8 where byte < 0x20 || byte > 0x7E || byte == 0x22 || byte == 0x3B {
            throw YDBError(.invalidArgument,
                           "the full-text tokenizer '\(tokenizer)' may hold only printable ASCII without \" or ; (found byte \(byte))")
        }
    }
}

/// One row a full-text query found: which row, and its bm25 rank (lower is
/// a better match; FTS5's scores are negative).
public struct FullTextMatch: Sendable, Equatable, CustomStringConvertible {
    public let collection: String
    public let key: String
    public let rank: Double

    public init(collection: String, key: String, rank: Double) {
        self.collection = collection
        self.key = key
        self.rank = rank
    }

    public var description: String { "\(collection)/\(key) (\(rank))" }
}
