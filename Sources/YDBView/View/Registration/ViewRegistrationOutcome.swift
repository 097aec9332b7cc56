/// How registering a view built its contents.
public enum ViewRegistrationOutcome: Int32, Sendable {
    /// Populated from the rows: a new view, or one that is not persistent.
    case built = 1
    /// Loaded from the database (a persistent view stored with the same
    /// version tag that saw every row change), or kept as registered; no
    /// callback ran.
    case loaded = 2
    /// Repopulated because the stored version tag (or storage format) differs.
    case rebuiltForNewVersionTag = 3
    /// Repopulated because rows changed while the view was not registered
    /// (by this library without it, or by another SQLite client).
    case rebuiltBecauseStale = 4
}
