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
        semaphore.wait()
        lock.withLock { holder = (thread, ObjectIdentifier(connection)) }
    }

    /// Takes the gate for engine work that is not a transaction (the
    /// checkpointer), waiting at most `milliseconds`; false when it is busy.
    func enter(waitingAtMost milliseconds: Int) -> Bool {
        semaphore.wait(milliseconds: milliseconds)
    }

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
