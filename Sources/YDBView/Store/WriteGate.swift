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
    /// The thread that began the open read-write transaction, and its
    /// connection (named only in the message: formatting it at every commit
    /// cost more than the rest of taking the gate).
    private var holder: (thread: pthread_t, connection: ObjectIdentifier)?

    /// Waits for the gate, unless the calling thread already holds it.
    func enter(for connection: Connection) throws {
        let thread = pthread_self()
        // Only this thread can make itself the holder, so no other thread
        // can make this check stale in the way that matters (a hang).
        if let holder = lock.withLock({ holder }), pthread_equal(holder.thread, thread) != 0 {
            throw YDBError(.misuse, "this thread already holds the write transaction of connection \(holder.connection.debugDescription); a second one would wait for itself")
        }
        turnstile.wait()
        turnstile.signal()
        semaphore.wait()
        lock.withLock { holder = (thread, ObjectIdentifier(connection)) }
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
        return pthread_equal(holder.thread, pthread_self()) != 0
    }

    /// Ends the hold, on whatever thread the transaction ends.
    func leave() {
        lock.withLock { holder = nil }
        semaphore.signal()
    }
}
