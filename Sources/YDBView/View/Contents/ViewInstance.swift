/// A registered view as of one snapshot: its definition, where it is stored
/// and its contents.
struct ViewInstance {
    let name: String
    var definition: View
    /// The storage table id; nil for a non-persistent view.
    var storageID: Int64?
    var state: ViewState
    /// Where the last insert landed, so the next one can try there first.
    var hint: InsertHint = .none
    /// How its registration built it.
    var registration: ViewRegistrationOutcome = .built
    /// Shared by every snapshot of this view; only the writer uses it.
    var rowCache = SortingRowCache()
    /// Committed changes its storage table does not hold yet; shared by
    /// every snapshot of this view and storage, like the row cache.
    var unstored = UnstoredRows()
}

enum InsertHint {
    case none
    case beginning(String)
    case end(String)
}
