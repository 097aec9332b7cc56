/// How a `Database` opens its file.
///
/// ```swift
/// let database = try Database(path: "/var/lib/app/data.sqlite", options: DatabaseOptions(multiProcess: true))
/// ```
public struct DatabaseOptions: Sendable, Equatable {
    /// Shared mode: several processes (and several `Database` objects of one
    /// process) open the file at once, and each one's views and commit
    /// notifications follow every other's commits (docs/behaviour.md,
    /// "Several processes"). Off by default: exclusive mode, one `Database`
    /// per file on the whole host. The two modes refuse each other with
    /// `.busy`.
    public var multiProcess: Bool

    public init(multiProcess: Bool = false) {
        self.multiProcess = multiProcess
    }
}
