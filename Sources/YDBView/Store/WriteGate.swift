#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One read-write transaction at a time per database, given in turn.
///
/// - Not a lock: the C API may begin a transaction on one thread and commit
///   it on another, so the gate is taken and left by whichever thread does.
/// - First come, first served: leaving hands the gate to the thread that
///   has waited longest, which owns it before it even wakes up. Left to
///   whoever grabs it first, a thread that commits in a loop took the gate
///   back each time before a waiting thread woke, and could keep it from
///   that thread for as long as the loop ran (the checkpointer gave up and
///   the log grew; a background search or registration starved; a write
///   timeout expired while the gate changed hands many times).
/// - It remembers which thread began the open transaction: that thread
///   asking again (on another connection, from a callback inside the
///   write, ...) could only wait for itself, so it is refused.
final class WriteGate: @unchecked Sendable {   // state guarded by `lock`
    private let lock = Mutex()
    private let turnCame = Condition()
    private var taken = false
    /// The thread (`currentThreadID`) that began the open read-write
    /// transaction, and its connection (named only in the message:
    /// formatting it at every commit cost more than the rest of taking the
    /// gate). Nil while the checkpointer holds the gate.
    private var holder: (thread: UInt, connection: ObjectIdentifier)?
    /// Who waits, oldest first: a ticket each, and whether it is the
    /// checkpointer (not a transaction).
    private var queue: [(ticket: UInt64, isCheckpointer: Bool)] = []
    private var lastTicket: UInt64 = 0
    /// The ticket the gate was handed to, until its thread wakes and takes it.
    private var handedTo: UInt64?

    /// Whether a writer waits for the gate: long engine work under the gate
    /// (storing a view registered in the background) ends its transaction
    /// early, and the writer gets the gate next.
    var hasWaitingWriters: Bool { lock.withLock { queue.contains { !$0.isCheckpointer } } }

    /// Whether the checkpointer waits for the gate (writers that arrive now
    /// wait after it). Tests wait on it to know the checkpointer has queued.
    var checkpointerIsWaiting: Bool { lock.withLock { queue.contains { $0.isCheckpointer } } }

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
            guard takeLocked(waitingAtMost: milliseconds, isCheckpointer: false) else {
                throw Self.timedOut(milliseconds ?? 0)
            }
            holder = (thread, id)
        }
    }

    /// Takes the gate for engine work that is not a transaction (the
    /// checkpointer), waiting at most `milliseconds`; false when it stayed
    /// busy. Writers that arrive while it waits wait for it.
    func enter(waitingAtMost milliseconds: Int) -> Bool {
        lock.withLock { takeLocked(waitingAtMost: milliseconds, isCheckpointer: true) }
    }

    /// Ends the hold, on whatever thread the transaction ends: the gate goes
    /// to the oldest waiter, if any.
    func leave() {
        lock.withLock {
            holder = nil
            guard let next = queue.first else {
                taken = false
                return
            }
            queue.removeFirst()
            handedTo = next.ticket   // still taken: nobody can grab it meanwhile
            turnCame.broadcast()
        }
    }

    /// Whether the calling thread began the open read-write transaction.
    var isHeldByCurrentThread: Bool {
        guard let holder = lock.withLock({ holder }) else { return false }
        return holder.thread == currentThreadID()
    }

    /// Takes the gate at once when it is free and nobody waits, else queues
    /// and sleeps until `leave` hands it over or the time runs out. Called
    /// holding `lock`.
    private func takeLocked(waitingAtMost milliseconds: Int?, isCheckpointer: Bool) -> Bool {
        if !taken && queue.isEmpty {
            taken = true
            return true
        }
        lastTicket += 1
        let ticket = lastTicket
        queue.append((ticket, isCheckpointer))
        let deadline = milliseconds.map { Condition.deadline(in: max(0, $0)) }
        while handedTo != ticket {
            if let deadline {
                if !turnCame.wait(lock, until: deadline) && handedTo != ticket {
                    queue.removeAll { $0.ticket == ticket }
                    return false
                }
            } else {
                turnCame.wait(lock)
            }
        }
        handedTo = nil
        return true
    }

    private static func timedOut(_ milliseconds: Int) -> YDBError {
        YDBError(.busy, "database is locked: waited \(describe(milliseconds: milliseconds)) (the connection's write "
                 + "timeout) for another read-write transaction to commit or roll back")
    }

    private static func describe(milliseconds: Int) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
