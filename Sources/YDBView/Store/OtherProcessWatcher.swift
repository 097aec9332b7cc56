#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSQLite

/// Shared mode: how a process learns promptly that another committed,
/// without polling the database in a loop.
///
/// Beside the database, a small file (`<database>-ydbview`, made by the
/// first shared-mode open) holds the latest snapshot number any process
/// committed, mapped into every process. A committing process raises it
/// (`tellOthers`: an atomic maximum, then one byte written after it, so
/// the kernel's inotify reports the file modified to every process
/// watching it). Each process's watcher thread sleeps in `poll` on its
/// inotify descriptor; woken, it compares the number with the latest
/// snapshot it published and replays what it lacks
/// (`Database.replayOtherProcessesCommits`).
///
/// The same file lists the live processes (`slot`): each claims one of
/// `slotCount` slots by locking a byte of the file (an open file
/// description lock, which the kernel drops when the process dies) and
/// keeps there the latest snapshot it replayed. Writers keep the commit
/// log's entries that a live process still needs (`slowestLiveSnapshot`),
/// and registrations compare view version tags with the live processes'
/// (`Database.recordViewTags`).
///
/// The wake-up is a hint, the commit log is the truth: every transaction
/// checks the log when it begins, so a missed or late wake-up only delays
/// observers and wakeup descriptors. A writer killed between its commit
/// and its wake-up, a plain SQLite client (which never writes the file),
/// or a system without inotify are covered by a slow fallback: the thread
/// looks at the log once a second anyway.
final class OtherProcessWatcher: @unchecked Sendable {
    /// The shared file's descriptor and its mapping: the number at 0, the
    /// byte written at 8, then `slotCount` slots of (instance, snapshot).
    private let file: Int32
    private let latest: UnsafeMutablePointer<UInt64>
    private static let mappedBytes = 4096
    private static let slotsStart = 64
    static let slotCount = 128
    /// Slot `i` is claimed by locking the byte at `lockStart + i` (past the
    /// mapped part: locks need no file behind them).
    private static let lockStart: Int64 = 8192
    /// This process's slot (nil: all were taken; it then pins no entry of
    /// the log and its view tags are not compared), and the number that
    /// names this `Database` in it.
    let slot: Int?
    let instance: UInt64
    /// inotify's descriptor (-1 when the system refused one).
    private let inotify: Int32
    /// Wakes the thread: "deliver" (a byte) or "stop" (closing the write end).
    private let controlRead: Int32
    private var controlWrite: Int32   // guarded by `lock`; -1 once stopping
    private let stopped = Semaphore(value: 0)
    private let lock = Mutex()
    private var deliveryAsked = false
    private var threadStarted = false
    /// How long the thread sleeps without a wake-up before it looks at the
    /// log anyway, in milliseconds.
    static let fallbackInterval: Int32 = 1000

    init(databasePath: String) throws {
        let path = databasePath + "-ydbview"
        file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard file >= 0 else {
            throw YDBError(.cantOpen, "cannot open \(path), the file shared mode wakes other processes through: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        if fstat(file, &info) != 0 || info.st_size < Self.mappedBytes {
            // Grown, never shrunk: what other processes wrote stays.
            _ = ftruncate(file, off_t(Self.mappedBytes))
        }
        guard let mapped = mmap(nil, Self.mappedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0),
              mapped != MAP_FAILED else {
            let reason = errno
            close(file)
            throw YDBError(.cantOpen, "cannot map \(path): \(String(cString: strerror(reason)))")
        }
        latest = mapped.bindMemory(to: UInt64.self, capacity: Self.mappedBytes / 8)
        var instance: UInt64 = 0
        while instance == 0 { instance = UInt64.random(in: 1...UInt64.max) }
        self.instance = instance
        // The first free slot; its snapshot is 0 until the database knows
        // its own (`recordSeen`): meanwhile it keeps the whole log.
        var claimed: Int?
        for index in 0..<Self.slotCount where ydb_lock_byte(file, Self.lockStart + Int64(index)) == 0 {
            claimed = index
            ydb_atomic_store(latest + Self.slotsStart / 8 + 2 * index + 1, 0)
            ydb_atomic_store(latest + Self.slotsStart / 8 + 2 * index, instance)
            break
        }
        slot = claimed
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            munmap(mapped, 16)
            close(file)
            throw YDBError(.error, "cannot create the shared-mode watcher's pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (controlRead, controlWrite) = (ends[0], ends[1])
        let watching = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if watching >= 0 && inotify_add_watch(watching, path, UInt32(IN_MODIFY)) < 0 {
            close(watching)
            inotify = -1
        } else {
            inotify = watching
        }
    }

    deinit {
        munmap(latest, Self.mappedBytes)
        close(file)   // drops the slot's lock
        close(controlRead)
        if controlWrite >= 0 { close(controlWrite) }
        if inotify >= 0 { close(inotify) }
    }

    /// The latest snapshot number any process announced.
    var announced: UInt64 { ydb_atomic_load(latest) }

    /// Records that this process replayed everything through `snapshot`.
    func recordSeen(_ snapshot: UInt64) {
        guard let slot else { return }
        ydb_atomic_store_max(latest + Self.slotsStart / 8 + 2 * slot + 1, snapshot)
    }

    /// The live processes other than this one, as (slot, instance).
    func otherLiveProcesses() -> [(slot: Int, instance: UInt64)] {
        var live: [(slot: Int, instance: UInt64)] = []
        for index in 0..<Self.slotCount where index != slot {
            let instance = ydb_atomic_load(latest + Self.slotsStart / 8 + 2 * index)
            if instance != 0 && ydb_byte_is_locked(file, Self.lockStart + Int64(index)) == 1 {
                live.append((index, instance))
            }
        }
        return live
    }

    /// Whether the process that wrote `instance` into `slot` still holds it.
    func isLive(slot index: Int, instance: UInt64) -> Bool {
        guard index >= 0, index < Self.slotCount else { return false }
        if index == slot { return instance == self.instance }
        return ydb_atomic_load(latest + Self.slotsStart / 8 + 2 * index) == instance
            && ydb_byte_is_locked(file, Self.lockStart + Int64(index)) == 1
    }

    /// The oldest snapshot a live process other than this one has replayed
    /// through (nil: none is live).
    func slowestOtherSnapshot() -> UInt64? {
        otherLiveProcesses().map { ydb_atomic_load(latest + Self.slotsStart / 8 + 2 * $0.slot + 1) }.min()
    }

    /// Announces a commit numbered `snapshot` to every process watching.
    func tellOthers(_ snapshot: UInt64) {
        ydb_atomic_store_max(latest, snapshot)
        var byte: UInt8 = 1
        _ = pwrite(file, &byte, 1, 8)
    }

    /// Asks the thread to release lagging reads and call observers (after
    /// a replay on another thread, which may hold a connection's lock).
    func deliverSoon() {
        lock.withLock {
            guard !deliveryAsked, controlWrite >= 0 else { return }
            deliveryAsked = true
            var byte: UInt8 = 1
            _ = write(controlWrite, &byte, 1)
        }
    }

    /// Starts the thread. `replay` brings the database forward (true: the
    /// announced number was past it, or `checkLog`), `deliver` calls the
    /// observers; both are the database's, held weakly by the caller.
    func start(replay: @escaping @Sendable (_ checkLog: Bool) -> Void, deliver: @escaping @Sendable () -> Void) throws {
        let started = startThread { [self] in
            run(replay: replay, deliver: deliver)
            stopped.signal()
        }
        guard started else { throw YDBError(.error, "cannot start the shared-mode watcher thread") }
        lock.withLock { threadStarted = true }
    }

    private func run(replay: (_ checkLog: Bool) -> Void, deliver: () -> Void) {
        var waiting = [pollfd(fd: controlRead, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let ready = poll(&waiting, inotify >= 0 ? 2 : 1, Self.fallbackInterval)
            if ready < 0 && errno != EINTR { return }
            if waiting[0].revents != 0 {
                let count = read(controlRead, &buffer, buffer.count)
                if count == 0 || waiting[0].revents & Int16(POLLHUP) != 0 { return }   // stop
            }
            if inotify >= 0 && waiting[1].revents != 0 {
                while read(inotify, &buffer, buffer.count) > 0 {}
            }
            // A timeout: look at the log itself (a plain SQLite client's
            // write, or a writer that died before waking anyone).
            replay(ready == 0)
            lock.withLock { deliveryAsked = false }
            deliver()
        }
    }

    /// Gives the slot up (the database closed): it no longer holds back
    /// the log, nor counts as registering views. Once.
    private func releaseSlot() {
        guard let slot else { return }
        ydb_atomic_store(latest + Self.slotsStart / 8 + 2 * slot, 0)
        _ = ydb_unlock_byte(file, Self.lockStart + Int64(slot))
    }

    /// Stops the thread and waits for it (not from the thread itself),
    /// and gives the slot up.
    func stop(releasingSlot releasing: Bool = true) {
        let running = lock.withLock { () -> Bool in
            guard controlWrite >= 0 else { return false }
            close(controlWrite)
            controlWrite = -1
            return threadStarted
        }
        if running { stopped.wait() }
        if releasing { releaseSlot() }
    }
}
