#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The engine's locks, semaphore and threads, on pthreads: the engine needs
// nothing from Foundation or Dispatch, so `libydbview.so` links only the
// Swift standard library (statically) besides SQLite and libc.

/// A pthread mutex; `recursive` lets the thread holding it take it again.
/// `package`: the C export layer (same package) locks with it too.
package final class Mutex: @unchecked Sendable {   // the pthread mutex is the synchronisation
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        if recursive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE)) }
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Takes the mutex if no other thread holds it; never waits.
    func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    fileprivate var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }
}

/// A condition variable used with one `Mutex`: waits release the mutex
/// while they sleep and hold it again when they return.
final class Condition: @unchecked Sendable {   // the pthread condition is the synchronisation
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Sleeps until woken (or spuriously); the caller holds `mutex`.
    func wait(_ mutex: Mutex) { pthread_cond_wait(condition, mutex.raw) }

    /// Sleeps until woken or `deadline` (from `Condition.deadline`) passes;
    /// false when it passed. The caller holds `mutex`.
    func wait(_ mutex: Mutex, until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(condition, mutex.raw, &deadline) != ETIMEDOUT
    }

    /// The time `milliseconds` from now, as `wait(_:until:)` takes it.
    static func deadline(in milliseconds: Int) -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }

    /// Wakes one waiter; `broadcast` wakes them all.
    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// A counting semaphore. Unlike a lock it may be released by another
/// thread than the one that took it (the C API may begin a transaction on
/// one thread and commit it on another).
final class Semaphore: @unchecked Sendable {   // guarded by `mutex`
    private let mutex = Mutex()
    private let changed = Condition()
    private var count: Int

    init(value: Int) {
        count = value
    }

    func wait() {
        mutex.withLock {
            while count == 0 { changed.wait(mutex) }
            count -= 1
        }
    }

    /// Waits at most `milliseconds`; false when it timed out.
    func wait(milliseconds: Int) -> Bool {
        let deadline = Condition.deadline(in: milliseconds)
        return mutex.withLock {
            while count == 0 {
                if !changed.wait(mutex, until: deadline) && count == 0 { return false }
            }
            count -= 1
            return true
        }
    }

    func signal() {
        mutex.withLock {
            count += 1
            changed.signal()
        }
    }
}

/// A number for the calling thread that no other thread ever gets, not even
/// after this one exits (a `pthread_t` is reused then, and a transaction
/// may outlive the thread that began it). Kept in a thread-specific slot as
/// the slot's pointer value itself: nothing to allocate or free.
func currentThreadID() -> UInt {
    if let stored = pthread_getspecific(threadIDKey) { return UInt(bitPattern: stored) }
    let id = threadIDs.withLock { () -> UInt in
        lastThreadID += 1
        return lastThreadID
    }
    pthread_setspecific(threadIDKey, UnsafeRawPointer(bitPattern: id))
    return id
}

private let threadIDKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
private let threadIDs = Mutex()
nonisolated(unsafe) private var lastThreadID: UInt = 0   // guarded by `threadIDs`

/// Milliseconds on the monotonic clock (which no clock change moves).
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// `duration` in whole milliseconds: negative is 0, and more than fits is `Int.max`.
package func saturatingMilliseconds(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
    let fraction = attoseconds / 1_000_000_000_000_000
    return overflow || whole > Int64.max - fraction ? .max : Int(whole + fraction)
}

/// Runs `body` on a new detached thread; false when no thread could be made.
func startThread(_ body: @escaping () -> Void) -> Bool {
    final class Work { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
    var thread = pthread_t()
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    let rc = pthread_create(&thread, nil, { context in
        let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
        work.body()
        return nil
    }, work)
    guard rc == 0 else {
        Unmanaged<Work>.fromOpaque(work).release()
        return false
    }
    pthread_detach(thread)
    return true
}
