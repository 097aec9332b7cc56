#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// When the write-ahead log is copied back into the database file, and how
/// large it may stay. One design serves both disk and speed:
///
/// - No commit runs a checkpoint: SQLite's automatic checkpoint is off on
///   every handle, and `Checkpointer` copies the log on a thread of its own
///   once it holds `checkpointFrames` pages. SQLite starts the log again from
///   the beginning only if, when a write begins, the whole log is in the
///   file; a busy writer appends while the copy runs, so the thread then
///   pauses writers briefly (the database's write gate) to copy the last
///   few pages.
/// - A checkpoint can only copy what no reader still reads, and SQLite can
///   only start the log again from the beginning when no reader uses it. A
///   long-lived read that catches up after every commit always uses the log,
///   so it would grow forever; instead, a catch-up that finds the log long
///   checkpoints between ending its old read and beginning the new one, and
///   the new read then starts on the database file alone. The next commit
///   restarts the log and cuts the file back to `sizeLimit`.
/// - When the thread finds the log file larger than `truncationSize` (a
///   large transaction's log) and no reader using it, it empties it and cuts the
///   file to zero bytes (SQLite's TRUNCATE checkpoint, tried without
///   waiting), so the file does not linger at that size. A smaller log
///   keeps its file: SQLite then writes the next commits over
///   the old frames, and overwriting a file's blocks costs less than
///   growing it again (a bare SQLite one-row commit took about a third
///   longer when its log was cut to zero bytes every 250 commits).
/// - A reader that never catches up is released once it is
///   `Database.maxCommitsBehind` commits behind (see `Connection`), so the
///   log stays bounded in that case too.
enum WALPolicy {
    /// Pages the log may hold before a checkpoint is due (about 4 MiB).
    static let checkpointFrames = 1000
    /// Bytes the log file is cut back to when it restarts.
    static let sizeLimit = 4 << 20
    /// A log file larger than this is a large transaction's, not the usual
    /// cycle's: the checkpoint thread empties it and cuts it to zero bytes.
    /// Twice `sizeLimit`, since the usual log passes `sizeLimit` by the
    /// pages written before the thread gets to run.
    static let truncationSize = 2 * sizeLimit
}

/// Learns the log's length from SQLite's commit hook and runs due
/// checkpoints on a thread of its own, with its own SQLite handle. The same
/// thread writes what extensions deferred (the rows persistent views leave
/// waiting) once no commit has left more for
/// `Tuning.deferredWritesIdleMilliseconds`, so that a crash after a quiet
/// moment costs no repopulation.
final class Checkpointer: @unchecked Sendable {   // state guarded by `lock`
    private let path: String
    /// Runs its argument while no write transaction is open, or not at all
    /// when writers stay busy for longer than a moment.
    private let whileNoWriter: (() -> Void) -> Void
    private let lock = Mutex()
    private let wake = Semaphore(value: 0)
    private let finished = Semaphore(value: 0)
    private var frames = 0
    private var nextDue = WALPolicy.checkpointFrames
    private var pending = false
    private var started = false
    private var stopping = false
    /// Checkpoints run so far (by the thread and by catching-up readers).
    private var runs = 0
    /// Whether a commit left deferred writes (a view's rows) waiting since
    /// the thread last wrote them, and how many such commits there were in
    /// all: the thread writes them after a pause with no new one (a count,
    /// not a clock, so that a commit costs no clock read).
    private var rowsWaiting = false
    private var rowsWaitingCommits: UInt64 = 0
    /// Writes what extensions deferred (`Database.writeDeferred`); set by
    /// the database once, before its first commit.
    var writeDeferred: (() -> Void)?
    /// How long commits must pause before the thread writes what waits;
    /// tests that watch rows wait raise it.
    var deferredWritesIdleMilliseconds: Int {
        get { lock.withLock { idleMilliseconds } }
        set { lock.withLock { idleMilliseconds = newValue } }
    }
    private var idleMilliseconds = Tuning.deferredWritesIdleMilliseconds

    init(path: String, whileNoWriter: @escaping (() -> Void) -> Void) {
        self.path = path
        self.whileNoWriter = whileNoWriter
    }

    /// Whether the log is long enough that a reader catching up should
    /// checkpoint before it begins its next read.
    var isLogLong: Bool { lock.withLock { frames >= WALPolicy.checkpointFrames } }

    var checkpointCount: Int { lock.withLock { runs } }

    /// Called by SQLite's commit hook, on the committing thread, with the
    /// number of pages now in the log.
    func committed(frames newFrames: Int) {
        let due: Bool = lock.withLock {
            if newFrames < frames { nextDue = WALPolicy.checkpointFrames }   // the log restarted
            frames = newFrames
            guard newFrames >= nextDue, !pending, !stopping else { return false }
            // While a reader pins the log a checkpoint cannot finish: try again
            // only after another `checkpointFrames` pages, not every commit.
            nextDue = newFrames + WALPolicy.checkpointFrames
            // No thread to be had: the log is then copied back only by
            // readers catching up; try again after more pages.
            guard startedThread() else { return false }
            pending = true
            return true
        }
        if due { wake.signal() }
    }

    /// Called after a commit that left deferred writes waiting (under the
    /// write gate): the thread writes them once commits pause. It is woken only
    /// when rows start waiting; later commits only count.
    func deferredWritesWaiting() {
        let wakeThread: Bool = lock.withLock {
            guard !stopping else { return false }
            rowsWaitingCommits &+= 1
            if rowsWaiting { return false }
            rowsWaiting = true
            // Without a thread the rows wait for a batch or the close.
            return startedThread()
        }
        if wakeThread { wake.signal() }
    }

    /// Starts the thread unless it runs; false when none can be started.
    /// Called with `lock` held.
    private func startedThread() -> Bool {
        if !started {
            guard startThread({ [self] in run() }) else { return false }
            started = true
        }
        return true
    }

    /// Checkpoints on `handle` (a reader between two reads).
    func checkpoint(on handle: SQLiteHandle) {
        _ = handle.checkpointPassive()
        lock.withLock { runs += 1 }
    }

    /// Stops the thread and closes its handle; waits for a running
    /// checkpoint. Idempotent.
    func stop() {
        let running: Bool = lock.withLock {
            defer { stopping = true }
            return started && !stopping
        }
        guard running else { return }
        wake.signal()
        finished.wait()
    }

    /// The size of the log file; 0 when there is none.
    private var logFileBytes: Int {
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }

    private func run() {
        // Its own handle: a checkpoint never waits for a connection's lock.
        let handle = try? SQLiteHandle(path: path)
        while true {
            // While deferred writes wait, wait one pause at most, and write
            // them if no commit left more meanwhile.
            let (idle, seen) = lock.withLock { (idleMilliseconds, rowsWaiting ? rowsWaitingCommits : nil) }
            if let seen {
                if !wake.wait(milliseconds: idle) {
                    storeRowsIfQuiet(since: seen)
                    continue
                }
            } else {
                wake.wait()
            }
            let (stop, due) = lock.withLock { (stopping, pending) }
            if stop { break }
            if !due { continue }   // woken for waiting rows
            if let handle {
                checkpoint(on: handle)
                // With writers paused, copy what is left. A log file larger
                // than `truncationSize` (after a large transaction, such as a
                // view's population) is emptied and cut to zero bytes when no
                // reader uses it; otherwise it would keep that size until the
                // next restart.
                whileNoWriter {
                    if logFileBytes > WALPolicy.truncationSize, handle.truncateLog() { return }
                    handle.checkpointPassive()
                }
            }
            lock.withLock { pending = false }
        }
        handle?.close()
        finished.signal()
    }

    /// Writes what waits if no commit left more since the count
    /// was `seen`. The mark is cleared first: a commit that leaves rows
    /// while they are being stored sets it again.
    private func storeRowsIfQuiet(since seen: UInt64) {
        let quiet: Bool = lock.withLock {
            guard !stopping, rowsWaiting, rowsWaitingCommits == seen else { return false }
            rowsWaiting = false
            return true
        }
        if quiet { writeDeferred?() }
    }
}
