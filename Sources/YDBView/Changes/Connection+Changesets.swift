/// A live view for Swift concurrency: mappings' changesets as commits come.
///
/// ```swift
/// for try await changeset in ui.changesets(for: mappings) {
///     tableView.apply(changeset)      // the first one is empty: draw the initial state
/// }
/// ```
extension Connection {
    /// `mappings`' changesets as other connections commit: first an empty
    /// one, once the mappings are updated to the connection's newest
    /// snapshot (the initial state to draw), then one per catch-up
    /// (`commits()`): a consumer slower than the writers gets one changeset
    /// for every commit made meanwhile, none dropped. The connection is
    /// left in a long-lived read transaction, which the iteration moves
    /// forward. Ends on cancellation and when the connection or its
    /// database closes; throws `.reloadRequired` when it fell more than
    /// `Database.maxCommitsBehind` commits behind (update the mappings and
    /// iterate again).
    public func changesets(for mappings: Mappings) -> ChangesetSequence {
        ChangesetSequence(connection: self, mappings: mappings)
    }
}

/// `Connection.changesets(for:)`. Not `Sendable`: the mappings it updates
/// belong to the task that iterates.
public struct ChangesetSequence: AsyncSequence {
    public typealias Element = Changeset
    let connection: Connection
    let mappings: Mappings

    public func makeAsyncIterator() -> Iterator {
        Iterator(connection: connection, mappings: mappings, commits: connection.commits().makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        let connection: Connection
        let mappings: Mappings
        var commits: CommitSequence.Iterator
        var started = false

        public mutating func next() async throws -> Changeset? {
            do {
                guard started else {
                    started = true
                    try connection.beginLongLivedReadTransaction()
                    let mappings = mappings
                    return try connection.read { transaction in
                        try mappings.update(with: transaction)
                        return try mappings.changes(for: [CommitNotification](), in: transaction)
                    }
                }
                guard let skipped = try await commits.next() else { return nil }
                let mappings = mappings
                return try connection.read { try mappings.changes(for: skipped, in: $0) }
            } catch let error as YDBError where error.code == .closed {
                return nil
            }
        }
    }
}
