#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which file a path names, whatever the path: symlinks and hard links of
/// one file share it.
private struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// Files this process holds a `DatabaseFileLock` on.
// Guarded by `lockedFilesLock`.
nonisolated(unsafe) private var lockedFiles: Set<FileIdentity> = []
private let lockedFilesLock = Mutex()

/// One `Database` object per database file: views live in that object's
/// memory, so a second one on the same file (in this process or another)
/// would diverge from it, and its commits would make the first fail.
///
/// The lock is `flock(LOCK_EX)` on a descriptor of the database file itself,
/// so it follows the file (its inode), not a path: a symlink, a hard link or
/// a deleted side file cannot bypass it, and the kernel drops it when the
/// process dies. On Linux flock locks are separate from the POSIX (fcntl)
/// locks SQLite takes on the same file.
///
/// But closing *any* descriptor of a file drops every POSIX lock the process
/// holds on it, SQLite's included. Hence the descriptor stays open until the
/// database is closed *and* every SQLite handle on it is closed, and a
/// second open in this process is refused by file identity before it opens
/// (and then closes) a descriptor of its own.
final class DatabaseFileLock {
    let path: String
    private var descriptor: Int32
    private let identity: FileIdentity
    private let lock = Mutex()
    private var openHandles = 0
    private var databaseClosed = false

    init(path: String) throws {
        self.path = path
        let busy = YDBError(.busy, "database \(path) is already open (by another Database in this process, or by another process); one process, one Database per database file")
        (descriptor, identity) = try lockedFilesLock.withLock {
            var info = stat()
            if stat(path, &info) == 0, lockedFiles.contains(FileIdentity(info)) { throw busy }
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw YDBError(.cantOpen, "cannot open database \(path): \(String(cString: strerror(errno)))")
            }
            // Not locked by this process (checked above), so closing this
            // descriptor again drops no SQLite lock of ours.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                close(descriptor)
                if reason == EWOULDBLOCK { throw busy }
                throw YDBError(.cantOpen, "cannot lock database \(path): \(String(cString: strerror(reason)))")
            }
            guard fstat(descriptor, &info) == 0 else {
                let reason = errno
                close(descriptor)
                throw YDBError(.error, "cannot inspect database \(path): \(String(cString: strerror(reason)))")
            }
            let identity = FileIdentity(info)
            lockedFiles.insert(identity)
            return (descriptor, identity)
        }
    }

    deinit {
        lock.withLock { databaseClosed = true; openHandles = 0 }
        releaseIfUnused()
    }

    /// An SQLite handle on the file was opened.
    func handleOpened() {
        lock.withLock { openHandles += 1 }
    }

    /// An SQLite handle on the file was closed.
    func handleClosed() {
        lock.withLock { openHandles -= 1 }
        releaseIfUnused()
    }

    /// The Database was closed (or failed to open): the lock goes once its
    /// last SQLite handle is closed.
    func databaseDidClose() {
        lock.withLock { databaseClosed = true }
        releaseIfUnused()
    }

    private func releaseIfUnused() {
        lock.withLock {
            guard databaseClosed, openHandles <= 0, descriptor >= 0 else { return }
            lockedFilesLock.withLock {
                close(descriptor)   // releases the flock
                lockedFiles.remove(identity)
            }
            descriptor = -1
        }
    }
}
