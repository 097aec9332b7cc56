#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One read-write transaction at a time per database.
///
/// A semaphore, not a lock: the C API may begin a transaction on one thread
/// and commit it on another. It also remembers which thread began the open
/// one: that thread asking again (on another connection, from a callback
/// inside the write, ...) could only wait for itself, so it is refused.
final class WriteGate {
    private let semaphore = Semaphore(value: 1)
    /// Makes the checkpointer's wait fair. Writers pass through it on their
    /// way in; the checkpointer holds it while it waits for the gate, so a
    /// writer arriving meanwhile queues behind it. Without it, a program
    /// that commits in a loop took the gate back each time it left it, the
    /// checkpointer was woken for nothing at every commit and gave up, and
    /// the log grew past its limit.
    private let turnstile = Semaphore(value: 1)
    private let lock = Mutex()
    /// The thread (`currentThreadID`) that began the open read-write transaction, and its
    /// connection (named only in the message: formatting it at every commit
    /// cost more than the rest of taking the gate).
    private var holder: (thread: UInt, connection: ObjectIdentifier)?
    /// Writers waiting in `enter(for:waitingAtMost:)` now.
    private var writersWaiting = 0
    /// Set by `letAWaitingWriterIn`: the next writer to take the gate
    /// signals `handedOver`.
    private var handoverPending = false
    private let handedOver = Semaphore(value: 0)

    /// Whether a writer is waiting for the gate: long engine work under
    /// the gate (storing a view registered in the background) ends its
    /// transaction early and lets it in.
    var hasWaitingWriters: Bool { lock.withLock { writersWaiting > 0 } }

    /// Waits for the gate, at most `milliseconds` (nil: as long as it
    /// takes), unless the calling thread already holds it (`.misuse`).
    /// Throws `.busy`, naming how long it waited, when the time runs out.
    func enter(for connection: Connection, waitingAtMost milliseconds: Int?) throws {
        let thread = currentThreadID(), id = ObjectIdentifier(connection)
        try lock.withLock {
            // Only this thread can make itself the holder, so no other thread
            // can make this check stale in the way that matters (a hang).
            if let holder, holder.thread == thread {
                let which = holder.connection == id ? "this connection" : "another connection of the database"
                throw YDBError(.misuse, "this thread already holds a read-write transaction (on \(which)); a second one would wait for itself until it ends")
            }
            writersWaiting += 1
        }
        guard wait(milliseconds) else {
            lock.withLock { writersWaiting -= 1 }
            throw Self.timedOut(milliseconds ?? 0)
        }
        lock.withLock {
            writersWaiting -= 1
            holder = (thread, id)
            if handoverPending {
                handoverPending = false
                handedOver.signal()
            }
        }
    }

    /// For long engine work done in turns of short write transactions (a
    /// background registration): called between two turns, without the
    /// gate, it waits until a writer that is waiting has taken the gate, at
    /// most `milliseconds`; it returns at once when none waits or one holds
    /// it. The gate is not fair (a thread that leaves it and enters again
    /// takes it before a waiting one wakes up): this gives waiting writers
    /// their turn without sleeping.
    func letAWaitingWriterIn(waitingAtMost milliseconds: Int) {
        let waits = lock.withLock { () -> Bool in
            guard holder == nil, writersWaiting > 0 else { return false }
            handoverPending = true
            return true
        }
        guard waits, !handedOver.wait(milliseconds: milliseconds) else { return }
        // Timed out: no writer took it, or one did just now (then its
        // signal is taken, so that the next handover waits for its own).
        let signalled = lock.withLock { () -> Bool in
            defer { handoverPending = false }
            return !handoverPending
        }
        if signalled { handedOver.wait() }
    }

    /// Passes the turnstile and takes the gate, in at most `milliseconds`
    /// in all (nil: as long as it takes); false when the time ran out.
    private func wait(_ milliseconds: Int?) -> Bool {
        guard let milliseconds else {
            turnstile.wait()
            turnstile.signal()
            semaphore.wait()
            return true
        }
        let started = monotonicMilliseconds()
        guard turnstile.wait(milliseconds: milliseconds) else { return false }
        turnstile.signal()
        let left = max(0, milliseconds - Int(monotonicMilliseconds() - started))
        return semaphore.wait(milliseconds: left)
    }

    private static func timedOut(_ milliseconds: Int) -> YDBError {
        YDBError(.busy, "database is locked: waited \(describe(milliseconds: milliseconds)) (the connection's write "
                 + "timeout) for another read-write transaction to commit or roll back")
    }

    private static func describe(milliseconds: Int) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    /// Takes the gate for engine work that is not a transaction (the
    /// checkpointer), waiting at most `milliseconds` (twice, at worst: for
    /// the turnstile, then for the gate); false when it is busy. Writers
    /// that arrive while it waits wait for it.
    func enter(waitingAtMost milliseconds: Int) -> Bool {
        guard turnstile.wait(milliseconds: milliseconds) else { return false }
        defer { turnstile.signal() }
        return semaphore.wait(milliseconds: milliseconds)
    }

    /// Whether someone holds the turnstile: the checkpointer waiting for the
    /// gate (writers that arrive now wait for it), or, for an instant, a
    /// writer passing through. Tests wait on it to know the checkpointer
    /// has queued.
    var checkpointerIsWaiting: Bool { turnstile.value == 0 }

    /// Whether the calling thread began the open read-write transaction.
    var isHeldByCurrentThread: Bool {
        guard let holder = lock.withLock({ holder }) else { return false }
        return holder.thread == currentThreadID()
    }

    /// Ends the hold, on whatever thread the transaction ends.
    func leave() {
        lock.withLock { holder = nil }
        semaphore.signal()
    }
}
