#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file descriptor an event loop can wait on (`poll`, epoll, GLib's
/// `g_unix_fd_add`, Qt's `QSocketNotifier`, asyncio's `add_reader`): it
/// is readable while commits exist that its connection has not caught up
/// with, and stops being readable when the connection begins a transaction
/// on the latest snapshot. No thread waits behind it: the committing
/// thread marks it, the catching-up thread clears it.
///
/// The read end of a non-blocking pipe holding at most one byte. `set`
/// and `clear` are called under the database's state lock, so the byte
/// and `isSet` always agree; `isSet` keeps a commit from writing again
/// (a system call per commit and connection) while it is still set.
final class WakeupDescriptor {
    /// What the caller waits on.
    let readEnd: Int32
    private let writeEnd: Int32
    private var isSet = false

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw YDBError(.error, "cannot create the connection's wakeup descriptor: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Makes the descriptor readable (no-op when it is).
    func set() {
        guard !isSet else { return }
        var byte: UInt8 = 1
        isSet = write(writeEnd, &byte, 1) == 1
    }

    /// Makes it unreadable again (no-op when it is not readable).
    func clear() {
        guard isSet else { return }
        var bytes = [UInt8](repeating: 0, count: 16)
        while read(readEnd, &bytes, bytes.count) > 0 {}
        isSet = false
    }
}
