/// The thread of one asynchronous registration (`registerViewAsync`), one
/// method per phase:
///
/// 1. `claim`: under the write lock, what the registration takes. What
///    needs no population is installed at once; otherwise commits record
///    their row changes for it from here on.
/// 2. `populate`: with no lock held, a chunk of rows per read snapshot.
/// 3. `catchUpOnSnapshots`: newer snapshots' changes, while many wait and
///    fewer each time.
/// 4. `catchUpInSlices`: commits still come faster than the catch-up
///    absorbs them: slices under the write lock, waiting writers let in
///    between.
/// 5. `install`: the last changes and the view, in one write transaction.
/// 6. `storeRows`: a persistent view's rows, a chunk per short write
///    transaction.
final class BackgroundRegistration {
    /// A population with at most this many changed rows left is caught up
    /// inside the install's write transaction.
    static let catchUpLimit = 1000
    /// Catch-ups on read snapshots go on while they shrink what waits (by a
    /// tenth at least), up to this many; then the install takes the write
    /// lock with whatever is left (commits may come faster than it catches up).
    static let catchUpRounds = 32
    /// Rows placed again by the first catch-up slice under the write lock;
    /// twice as many each time the backlog did not shrink.
    static let sliceRows = 1000
    /// The longest a write transaction that stores a persistent view's rows
    /// after its install runs. It ends sooner, after the batch (256 rows,
    /// about a millisecond) during which another writer began to wait for
    /// the write lock: that writer waits no longer than a batch.
    static let storeMilliseconds: Int64 = max(100, 4 * Tuning.storingYieldsAfterMilliseconds)

    private let task: ViewRegistrationTask
    private let database: Database
    private let connection: Connection
    private var view: View { task.view }
    private var name: String { task.viewName }
    /// The view populated off to the side, then caught up.
    private let built: ViewWriter
    /// The snapshot `built` agrees with.
    private var seen: UInt64 = 0

    private init(_ task: ViewRegistrationTask, _ database: Database, _ connection: Connection) {
        self.task = task
        self.database = database
        self.connection = connection
        built = ViewWriter(instance: ViewInstance(name: task.viewName, definition: task.view, storageID: nil,
                                                  state: ViewState()))
    }

    /// Runs the registration on its own connection and reports the outcome.
    static func run(_ task: ViewRegistrationTask, in database: Database) {
        task.started()
        var connection: Connection?
        let result: Result<ViewRegistrationOutcome, YDBError>
        do {
            let opened = try Connection(database: database, tracksNotifications: false)
            connection = opened
            result = .success(try BackgroundRegistration(task, database, opened).run())
        } catch let error as YDBError {
            result = .failure(error)
        } catch {
            result = .failure(YDBError(.error, "\(error)"))
        }
        database.registrations.remove(task)
        connection?.close()
        task.leftTheDatabase()
        // Not installed: its callbacks go before the completion is called.
        if case .failure = result { task.view.releaseHook?.release() }
        task.finish(result)
    }

    private func run() throws -> ViewRegistrationOutcome {
        let (outcome, installed) = try claim()
        if installed { return outcome }
        try populate()
        try catchUpOnSnapshots()
        try catchUpInSlices()
        if let storage = try install(outcome) { storeRows(storage) }
        return outcome
    }

    /// A read-write transaction on the registration's own connection: it
    /// waits for the write lock as long as it takes (a registration must not
    /// fail because another write is long), but in short waits between
    /// which it stops when asked to (`cancel()`, a later registration, the
    /// database closing), so a transaction forgotten open elsewhere never
    /// keeps it from finishing as cancelled.
    /// Once installed (`evenInstalled`) it can no longer be cancelled: then
    /// it stops when the database closes.
    private func beginWrite(evenInstalled: Bool = false) throws -> ReadWriteTransaction {
        while true {
            if evenInstalled { try database.checkOpen() } else { try task.checkStop() }
            do {
                return try connection.beginReadWriteTransaction(waitingAtMost: 100)
            } catch let error as YDBError where error.code == .busy {
                continue
            }
        }
    }

    /// Runs `body` in a write transaction that ends with `body`'s choice:
    /// committed when it returns true, rolled back otherwise or when it throws.
    private func inWrite<T>(evenInstalled: Bool = false,
                            _ body: (ReadWriteTransaction) throws -> (T, commit: Bool)) throws -> T {
        let transaction = try beginWrite(evenInstalled: evenInstalled)
        do {
            let (result, commit) = try body(transaction)
            if commit { try transaction.commit() } else { transaction.rollback() }
            return result
        } catch {
            transaction.rollback()
            throw error
        }
    }

    // MARK: The phases

    private func claim() throws -> (ViewRegistrationOutcome, installed: Bool) {
        try inWrite { transaction in
            try task.checkStop()
            let first = try transaction.registerUnlessPopulating(view, name: name)
            if !first.installed { database.registrations.startRecording(task) }
            return ((first.outcome, first.installed), commit: first.installed)
        }
    }

    /// Commits go on meanwhile, recorded from before its first snapshot
    /// on. It reads the rows a chunk per read snapshot, so that no
    /// snapshot pins the write-ahead log for the whole scan (rows changed
    /// after the first one are caught up later, whether or not the scan
    /// saw them). The connection is the registration's own.
    private func populate() throws {
        var reading: ReadTransaction? = try connection.beginReadTransaction()
        defer { reading?.end() }
        seen = reading!.snapshot
        try task.populationBegins(rows: try reading!.rowCount(allowedIn: view))
        built.populationTick = { [task] in try task.tick($0) }
        defer {
            built.populationTick = nil
            built.populationPause = nil
        }
        var sortReadOpened: Int64?     // when the sort's own read transaction was opened
        let connection = connection
        built.populationPause = { more in
            reading?.end()
            reading = more ? try connection.beginReadTransaction() : nil
        }
        try built.repopulate(ExtensionWriteContext(rows: RowReader(handle: connection.handle),
                                                   storage: connection.handle, currentTransaction: {
            // After the scan, the sort's callbacks still get a transaction:
            // one opened for them and renewed every 50 ms, so that it pins
            // the write-ahead log no longer than a scan chunk does.
            let now = monotonicMilliseconds()
            if let open = reading, sortReadOpened == nil || now - sortReadOpened! < 50 { return open }
            reading?.end()
            let opened = try connection.beginReadTransaction()   // ended by the defer above
            reading = opened
            sortReadOpened = now
            return opened
        }))
    }

    private func catchUpOnSnapshots() throws {
        var waiting = Int.max
        for _ in 0..<Self.catchUpRounds {
            try task.checkStop()
            let count = database.registrations.changeCount(of: task, after: seen)
            guard count > Self.catchUpLimit, count < waiting - waiting / 10 else { break }
            waiting = count
            seen = try connection.read { transaction -> UInt64 in
                let changes = database.registrations.takeChanges(of: task, after: seen, through: transaction.snapshot)
                try built.catchUp(changes, transaction.populationContext)
                return transaction.snapshot
            }
        }
    }

    /// Each slice places at most `sliceRows` rows again (twice as many
    /// each time the backlog did not shrink: a writer changes rows faster
    /// than their callbacks place them), then lets a waiting writer in, for
    /// as long as the slice took at most.
    private func catchUpInSlices() throws {
        var backlog = Int.max
        var slice = Self.sliceRows
        while true {
            let left = database.registrations.changeCount(of: task, after: seen) + built.unplacedCount
            guard left > Self.catchUpLimit else { return }
            if left >= backlog { slice *= 2 }
            backlog = left
            try task.checkStop()
            try inWrite { transaction in
                let changes = database.registrations.takeChanges(of: task, after: seen, through: transaction.snapshot)
                try built.catchUp(changes, placing: slice, transaction.populationContext)
                seen = transaction.snapshot
                return ((), commit: false)   // it wrote nothing
            }
            task.countSlice()   // a writer that waits meanwhile gets the gate before the next slice
        }
    }

    /// No commit can come between the last take and this one's. Returns
    /// the storage id of a persistent view, whose rows are stored next.
    private func install(_ outcome: ViewRegistrationOutcome) throws -> Int64? {
        var storage: Int64?
        do {
            try inWrite { transaction in
                try task.checkStop()
                let changes = database.registrations.takeChanges(of: task, after: seen, through: transaction.snapshot,
                                                                 finally: true)
                storage = try transaction.installPopulation(view, name: name, outcome: outcome, built: built,
                                                            changes: changes, logsDifference: task.logsDifference)
                if let storage { database.registrations.beginStoring(storage) }
                try task.checkStop()
                return ((), commit: true)
            }
        } catch {
            if let storage { database.registrations.endStoring(storage) }
            throw error
        }
        task.markInstalled()
        return storage
    }

    /// Its commits store the rows they change. Stopped by a close, the
    /// view stays stored as stale: the next registration repopulates it.
    private func storeRows(_ storage: Int64) {
        defer { database.registrations.endStoring(storage) }
        let gate = database.writeGate
        var next: Int64? = .min
        while let start = next {
            do {
                next = try inWrite(evenInstalled: true) { transaction in
                    let started = monotonicMilliseconds()
                    let next = try transaction.storeRows(ofView: name, storageID: storage, from: start) {
                        let took = monotonicMilliseconds() - started
                        return took >= Self.storeMilliseconds
                            || took >= Tuning.storingYieldsAfterMilliseconds && gate.hasWaitingWriters
                    }
                    return (next, commit: true)
                }
            } catch {
                return
            }
            // A writer that waits gets the gate now, before the next chunk.
        }
    }
}

extension Database {
    /// The registration's thread.
    func runRegistration(_ task: ViewRegistrationTask) {
        BackgroundRegistration.run(task, in: self)
    }
}

extension ReadTransaction {
    /// What a population on this snapshot reads the rows through (it
    /// writes nothing: the view is not stored until it is installed).
    var populationContext: ExtensionWriteContext { ExtensionWriteContext(rows: rows, storage: handle, transaction: self) }

    /// How many rows a population of `view` reads.
    func rowCount(allowedIn view: View) throws -> Int {
        guard let allowed = view.allowedCollections else { return try rows.countAll() }
        return try Set(allowed.map { Name($0) }).reduce(0) { $0 + (try rows.count(inCollection: $1.value)) }
    }
}
