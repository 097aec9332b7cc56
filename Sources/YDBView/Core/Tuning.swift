#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Sizes that decide how often the engine's rare paths run. Debug builds
/// (the test suite) make them tiny, so that node splits and merges and
/// label relabelling happen in ordinary tests, with every view update
/// checked against its invariants; release builds use the real sizes.
enum Tuning {
    #if DEBUG
    static let treeCapacity = 8
    /// Gap left between order labels by appends and population.
    static let labelStep: Int64 = 8
    /// Smallest gap a relabelled window may leave between labels.
    static let relabelGap: Int64 = 2
    /// Rows a persistent view's commits leave unstored before one commit
    /// stores them all (`UnstoredRows`).
    static let viewRowsWrittenAtOnce = 4
    /// How long commits must pause before the rows a persistent view left
    /// waiting are stored off the commit path (`Checkpointer`).
    static let deferredWritesIdleMilliseconds = 20
    /// Rows a population groups (and keys) at a time (`ViewPopulation.scanGrouped`).
    static let populationBatchSize = 7
    /// How long a write that stores a view registered in the background
    /// runs at least before it lets a waiting writer in: every commit of a
    /// debug build checks the views whole, so letting one in after every
    /// batch of rows made storing 100k rows take minutes.
    static let storingYieldsAfterMilliseconds: Int64 = 250
    static let checksInvariants = true
    /// Views up to this many rows are checked whole after every write
    /// (`ViewWriter+Checks.swift`), and up to `wholeCheckRows` at every
    /// commit; otherwise where the write touched them.
    static let wholeCheckRowsAfterWrite = 256
    static let wholeCheckRows = 2_000
    #else
    static let treeCapacity = 64
    static let labelStep: Int64 = 1 << 32
    static let relabelGap: Int64 = 1 << 10
    /// At most this many log pages a write of them (2 MiB): well inside
    /// the log's bound (`WALPolicy`) even when every row is on a page of
    /// its own.
    static let viewRowsWrittenAtOnce = 512
    /// A second: a crash loses no view's stored copy unless it comes within
    /// a second of a commit, and a program committing in a loop stores its
    /// views a batch at a time.
    static let deferredWritesIdleMilliseconds = 1000
    /// A C callback's setup is made once for them (the callbacks, the
    /// thread's state, the lent transaction).
    static let populationBatchSize = 256
    /// A writer waiting is let in after the batch of rows (about a
    /// millisecond) during which it began to wait.
    static let storingYieldsAfterMilliseconds: Int64 = 0
    static let checksInvariants = false
    static let wholeCheckRowsAfterWrite = 0
    static let wholeCheckRows = 0
    #endif
}

/// How often the rare paths ran (counted in debug builds only), so a test
/// can show that they did. Counted per thread, for the work a test runs
/// inside `counting`: another test's work, on its own thread or a
/// background one, never adds to it.
package enum RarePaths {
    package struct Counts: Equatable, Sendable {
        package var splits = 0, merges = 0, relabels = 0
        /// A view's row index renumbered its group ids (`ViewState`).
        package var groupRenumbers = 0
        /// A batch's new rows for a group were merged into it at once
        /// (`ViewWriter.placeHeldRows`): all of them, and those into a
        /// group that had rows.
        package var heldGroupPlacements = 0, heldMergesIntoRows = 0
        /// A batch's held rows for a group were placed one by one.
        package var heldRowsPlacedSingly = 0
    }

    /// Runs `body` and returns what it returned with the rare paths it ran
    /// on the calling thread.
    package static func counting<T>(_ body: () throws -> T) rethrows -> (result: T, counts: Counts) {
        let recorder = Recorder()
        let outer = pthread_getspecific(recorderKey)
        pthread_setspecific(recorderKey, Unmanaged.passUnretained(recorder).toOpaque())
        defer { pthread_setspecific(recorderKey, outer) }
        let result = try body()
        return (result, recorder.counts)
    }

    static func count(_ path: WritableKeyPath<Counts, Int>) {
        #if DEBUG
        guard let recorder = pthread_getspecific(recorderKey) else { return }
        Unmanaged<Recorder>.fromOpaque(recorder).takeUnretainedValue().counts[keyPath: path] += 1
        #endif
    }

    /// The counts of one `counting` call; only its thread uses it.
    private final class Recorder {
        var counts = Counts()
    }

    private static let recorderKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
