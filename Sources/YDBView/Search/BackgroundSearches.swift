/// Queries set in the background (`Database.search`), so that typing never
/// waits for a search: one thread per database drains them while any are
/// pending, and for each search view only the newest query is run — one
/// not started yet when a newer one comes is superseded (its completion
/// says `false`), never run.
///
/// Every completion runs on the draining thread, never on the thread that
/// asked for a search: a caller holding its own lock while it types a
/// query must not have the previous query's completion run inside that
/// call. So a superseded query, and those still waiting when the
/// database closes, wait for the draining thread to complete them.
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
    /// Queries a newer one replaced in `pending`, oldest first: completed
    /// with false by the draining thread, before it runs anything else.
    private var superseded: [Request] = []
    /// True from the moment something is pending until the draining thread
    /// found nothing left; while it is, a thread is running `drain` (or is
    /// about to be started for it).
    private var draining = false
    /// The draining thread's `currentThreadID()` once it runs: a completion
    /// closing the database must not wait for its own thread.
    private var drainer: UInt?
    private var stopped = false
    /// Signalled when a draining thread ends.
    private let ended = Semaphore(value: 0)

    init() {}

    var isRecording: Bool { false }
    func record(_ rows: [Int64: RowChangeKind], snapshot: UInt64) {}

    /// Queues `query` for `view`; true when the caller must start a thread
    /// running `drain`. A query it supersedes is completed (false) by the
    /// draining thread, which is running or about to be started.
    func add(_ query: String, forView view: String, completion: Completion?) throws -> Bool {
        try lock.withLock {
            if stopped { throw YDBError(.closed, "database is closed") }
            if let replaced = pending.updateValue(Request(query: query, completion: completion), forKey: Name(view)) {
                superseded.append(replaced)
            }
            defer { draining = true }
            return !draining
        }
    }

    /// The thread could not start: nothing drains, so the caller completes
    /// what waited (only then does a completion run on the caller's thread).
    func failedToStart() {
        let (replaced, left): ([Request], [Request]) = lock.withLock {
            draining = false
            defer { pending.removeAll(); superseded.removeAll() }
            return (superseded, Array(pending.values))
        }
        for request in replaced { request.completion?(.success(false)) }
        for request in left { request.completion?(.failure(YDBError(.error, "cannot start a thread for a search"))) }
    }

    /// What the draining thread does next.
    private enum Step {
        /// Calls a completion whose outcome is known without running it.
        case complete(Request, Result<Bool, YDBError>)
        /// Runs the query of a search view.
        case run(String, Request)
    }

    /// Runs pending queries until none is left (on the thread `add` asked
    /// for), completing superseded ones first, and after a close every
    /// query still waiting with `.closed`.
    func drain(_ database: Database) {
        lock.withLock { drainer = currentThreadID() }
        while let step = next() {
            switch step {
            case .complete(let request, let outcome):
                request.completion?(outcome)
            case .run(let view, let request):
                let outcome = Result { try run(request.query, forView: view, database) }
                    .mapError { $0 as? YDBError ?? YDBError(.error, "\($0)") }
                request.completion?(outcome)
            }
        }
        ended.signal()
    }

    private func next() -> Step? {
        lock.withLock {
            if !superseded.isEmpty { return .complete(superseded.removeFirst(), .success(false)) }
            guard let (view, request) = pending.first else {
                draining = false
                drainer = nil
                return nil
            }
            pending[view] = nil
            if stopped { return .complete(request, .failure(YDBError(.closed, "database is closed"))) }
            return .run(view.value, request)
        }
    }

    /// Whether a newer query for `view` came while this one ran; `.closed`
    /// once the database is closing (the query was not superseded: it
    /// could not finish).
    private func isSuperseded(_ view: String) throws -> Bool {
        try lock.withLock {
            if stopped { throw YDBError(.closed, "database is closed") }
            return pending[Name(view)] != nil
        }
    }

    /// Finds the matches, then applies them; false when superseded.
    private func run(_ query: String, forView view: String, _ database: Database) throws -> Bool {
        let (snapshot, matches) = try database.withInternalConnection { connection in
            try connection.read { t -> (UInt64, Set<Int64>?) in
                guard let search = t.viewInstance(named: view)?.definition.filtering?.search else {
                    throw YDBError(.notFound, "no search view named '\(view)' is registered")
                }
                // A view ordered by rank needs the ranks, which the write reads.
                if search.ranking != nil { return (t.snapshot, nil) }
                return (t.snapshot, try t.access(.readViews) { try t.fullTextMatchingRowids(index: search.index, query: query) })
            }
        }
        if try isSuperseded(view) { return false }
        try database.withInternalConnection { connection in
            try connection.readWrite { t in
                try t.setSearchQuery(query, forView: view, matches: t.snapshot == snapshot ? matches : nil)
            }
        }
        return true
    }

    /// No query is taken any more; the draining thread completes those
    /// still waiting with `.closed` (anything waiting means it runs).
    func stop() {
        lock.withLock { stopped = true }
    }

    /// Waits for the draining thread (a signal left by an earlier one ends
    /// one turn of the loop, which then looks again) — unless this is that
    /// thread: a completion closing the database would wait for itself.
    func waitUntilStopped() {
        let me = currentThreadID()
        while lock.withLock({ draining && drainer != me }) { _ = ended.wait(milliseconds: 10) }
    }
}

extension Database {
    /// Sets the query of search view `view` in the background and returns
    /// at once. `completion` is called once on the search's thread (never
    /// inside this call, unless no thread can be started): true
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
