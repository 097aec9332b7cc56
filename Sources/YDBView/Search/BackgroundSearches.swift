/// Queries set in the background (`Database.search`), so that typing never
/// waits for a search: one thread per database drains them while any are
/// pending, and for each search view only the newest query is run — one
/// not started yet when a newer one comes is superseded (its completion
/// says `false`), never run.
///
/// Each search reads its matches in a read transaction (no write lock
/// held), then applies them in a short read-write transaction — reading
/// them again there only if a commit came in between. A `CommitFollower`
/// only so that closing the database stops it and waits for it.
final class BackgroundSearches: CommitFollower, @unchecked Sendable {   // state guarded by `lock`
    typealias Completion = @Sendable (Result<Bool, YDBError>) -> Void

    private struct Request {
        let query: String
        let completion: Completion?
    }

    private let lock = Mutex()
    /// The newest query not started yet, per search view.
    private var pending: [Name: Request] = [:]
    private var draining = false
    private var stopped = false
    /// Signalled when a draining thread ends.
    private let ended = Semaphore(value: 0)

    init() {}

    var isRecording: Bool { false }
    func record(_ rows: [Int64: RowChangeKind], snapshot: UInt64) {}

    /// Queues `query` for `view`; true when the caller must start a thread
    /// running `drain`. A query it supersedes completes with false.
    func add(_ query: String, forView view: String, completion: Completion?) throws -> Bool {
        let (superseded, start): (Request?, Bool) = try lock.withLock {
            if stopped { throw YDBError(.closed, "database is closed") }
            let superseded = pending.updateValue(Request(query: query, completion: completion), forKey: Name(view))
            defer { draining = true }
            return (superseded, !draining)
        }
        superseded?.completion?(.success(false))
        return start
    }

    /// The thread could not start: nothing drains.
    func failedToStart() {
        let left: [Request] = lock.withLock {
            draining = false
            defer { pending.removeAll() }
            return Array(pending.values)
        }
        for request in left { request.completion?(.failure(YDBError(.error, "cannot start a thread for a search"))) }
    }

    /// Runs pending queries until none is left (on the thread `add` asked for).
    func drain(_ database: Database) {
        while let (view, request) = next() {
            let outcome = Result { try run(request.query, forView: view, database) }
                .mapError { $0 as? YDBError ?? YDBError(.error, "\($0)") }
            request.completion?(outcome)
        }
        ended.signal()
    }

    private func next() -> (String, Request)? {
        lock.withLock {
            guard !stopped, let (view, request) = pending.first else {
                draining = false
                return nil
            }
            pending[view] = nil
            return (view.value, request)
        }
    }

    /// Whether a newer query for `view` came while this one ran.
    private func isSuperseded(_ view: String) -> Bool {
        lock.withLock { stopped || pending[Name(view)] != nil }
    }

    /// Finds the matches, then applies them; false when superseded.
    private func run(_ query: String, forView view: String, _ database: Database) throws -> Bool {
        let (snapshot, matches) = try database.withInternalConnection { connection in
            try connection.read { t -> (UInt64, Set<Int64>) in
                guard let search = t.viewInstance(named: view)?.definition.filtering?.search else {
                    throw YDBError(.notFound, "no search view named '\(view)' is registered")
                }
                return (t.snapshot, try t.access(.readViews) { try t.fullTextMatchingRowids(index: search.index, query: query) })
            }
        }
        if isSuperseded(view) { return false }
        try database.withInternalConnection { connection in
            try connection.readWrite { t in
                try t.setSearchQuery(query, forView: view, matches: t.snapshot == snapshot ? matches : nil)
            }
        }
        return true
    }

    func stop() {
        let left: [Request] = lock.withLock {
            stopped = true
            defer { pending.removeAll() }
            return Array(pending.values)
        }
        for request in left { request.completion?(.failure(YDBError(.closed, "database is closed"))) }
    }

    /// Waits for the draining thread (a signal left by an earlier one ends
    /// one turn of the loop, which then looks again).
    func waitUntilStopped() {
        while lock.withLock({ draining }) { _ = ended.wait(milliseconds: 10) }
    }
}

extension Database {
    /// Sets the query of search view `view` in the background and returns
    /// at once. `completion` is called once on the search's thread: true
    /// once the results are committed (their changeset reaches
    /// observers and followers like any commit's), false when a newer
    /// query for the same view superseded this one before it ran, or the
    /// error (`.notFound`, a malformed query, `.closed`).
    public func search(_ query: String, inView view: String,
                       completion: (@Sendable (Result<Bool, YDBError>) -> Void)?) throws {
        try validateName(view, "view name")
        try validateName(query, "query")
        guard let searches = follower(BackgroundSearches.self) else {
            throw YDBError(.closed, "database is closed")
        }
        guard try searches.add(query, forView: view, completion: completion) else { return }
        if !startThread({ searches.drain(self) }) { searches.failedToStart() }
    }

    /// `search(_:inView:completion:)` awaited: true once the results are
    /// committed, false when a newer query superseded this one.
    @discardableResult
    public func search(_ query: String, inView view: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try search(query, inView: view) { continuation.resume(with: $0.mapError { $0 as Error }) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
