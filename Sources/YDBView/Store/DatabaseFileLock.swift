#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSQLite

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

/// A file this process holds a lock on: its one descriptor, the mode, and
/// how many `DatabaseFileLock`s share it (several only in shared mode).
private struct LockedFile {
    let descriptor: Int32
    let shared: Bool
    var holders: Int
}

// Guarded by `lockedFilesLock`.
nonisolated(unsafe) private var lockedFiles: [FileIdentity: LockedFile] = [:]
private let lockedFilesLock = Mutex()

/// Keeps the modes of opening a database file apart.
///
/// Exclusive mode (the default): one `Database` object per database file on
/// the whole host, because views live in that object's memory and nothing
/// tells it of another's commits. Shared mode (`DatabaseOptions.multiProcess`):
/// any number of shared-mode `Database`s, in any processes, and none in
/// exclusive mode.
///
/// The lock is `flock` on a descriptor of the database file itself —
/// `LOCK_EX` exclusive, `LOCK_SH` shared — so it follows the file (its
/// inode), not a path: a symlink, a hard link or a deleted side file cannot
/// bypass it, and the kernel drops it when the process dies. On Linux flock
/// locks are separate from the POSIX (fcntl) locks SQLite takes on the same
/// file.
///
/// But closing *any* descriptor of a file drops every POSIX lock the process
/// holds on it, SQLite's included. Hence the descriptor stays open until the
/// database is closed *and* every SQLite handle on it is closed; a second
/// open in this process is decided by file identity before it opens a
/// descriptor of its own; and shared-mode `Database`s of one process share
/// one descriptor, closed by the last of them.
final class DatabaseFileLock {
    let path: String
    private var holding = true
    private let identity: FileIdentity
    private let lock = Mutex()
    private var openHandles = 0
    private var databaseClosed = false

    init(path: String, shared: Bool) throws {
        self.path = path
        let busy = shared
            ? YDBError(.busy, "database \(path) is open in exclusive mode (by another Database in this process, or by another process); shared mode needs every process to open it with the multi-process option")
            : YDBError(.busy, "database \(path) is already open (by another Database in this process, or by another process); one process, one Database per database file, unless every one opens it with the multi-process option")
        identity = try lockedFilesLock.withLock {
            var info = stat()
            if stat(path, &info) == 0, var held = lockedFiles[FileIdentity(info)] {
                guard shared && held.shared else { throw busy }
                held.holders += 1
                lockedFiles[FileIdentity(info)] = held
                return FileIdentity(info)
            }
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw YDBError(.cantOpen, "cannot open database \(path): \(String(cString: strerror(errno)))")
            }
            // Not locked by this process (checked above), so closing this
            // descriptor again drops no SQLite lock of ours.
            func fail(_ error: YDBError) -> YDBError {
                close(descriptor)
                return error
            }
            if shared, let network = networkFileSystem(descriptor) {
                throw fail(YDBError(.cantOpen, "database \(path) is on a network file system (\(network)): shared mode needs the processes on one host, with a file system whose locks and shared memory they all see"))
            }
            guard flock(descriptor, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
                let reason = errno
                if reason == EWOULDBLOCK { throw fail(busy) }
                throw fail(YDBError(.cantOpen, "cannot lock database \(path): \(String(cString: strerror(reason)))"))
            }
            guard fstat(descriptor, &info) == 0 else {
                let reason = errno
                throw fail(YDBError(.error, "cannot inspect database \(path): \(String(cString: strerror(reason)))"))
            }
            let identity = FileIdentity(info)
            lockedFiles[identity] = LockedFile(descriptor: descriptor, shared: shared, holders: 1)
            return identity
        }
    }

    deinit {
        lock.withLock { databaseClosed = true; openHandles = 0 }
        releaseIfUnused()
    }

    /// A SQLite handle on the file was opened: the lock outlives it.
    func handleOpened() {
        lock.withLock { openHandles += 1 }
    }

    func handleClosed() {
        lock.withLock { openHandles -= 1 }
        releaseIfUnused()
    }

    /// The Database closed; the lock goes once its handles have closed too.
    func databaseDidClose() {
        lock.withLock { databaseClosed = true }
        releaseIfUnused()
    }

    private func releaseIfUnused() {
        lock.withLock {
            guard databaseClosed, openHandles <= 0, holding else { return }
            holding = false
            lockedFilesLock.withLock {
                guard var held = lockedFiles[identity] else { return }
                held.holders -= 1
                if held.holders > 0 {
                    lockedFiles[identity] = held
                } else {
                    close(held.descriptor)   // releases the flock
                    lockedFiles.removeValue(forKey: identity)
                }
            }
        }
    }
}

/// The name of the network file system `descriptor` is on, or nil: locks
/// and SQLite's shared memory do not reach every client there.
private func networkFileSystem(_ descriptor: Int32) -> String? {
    let type = ydb_file_system_type(descriptor)
    guard type >= 0 else { return nil }
    let known: [UInt64: String] = [
        0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2", 0x5346_414F: "AFS",
        0x00C3_6400: "Ceph", 0x0102_1997: "9P", 0x7375_7245: "Coda", 0x564C: "NCP",
    ]
    return known[UInt64(type)]
}
