#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one wrapper per
** setting the engine uses. */

/* Turns trigger firing on this connection off (0) or on (1). The engine's
** own connections run without the schema's triggers: they exist to count
** the writes of other SQLite clients (see Schema.swift). */
static inline int ydb_sqlite_enable_triggers(sqlite3 *db, int enable) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enable, (int *)0);
}

/* The update hook of the engine's connections: writes the row id of each
** row an INSERT, UPDATE or DELETE on ydb_rows changes into *slot. A write
** that finds its row by (collection, key) then reports which row it was,
** so one statement does what a lookup and a write by row id did
** (`UPDATE ... RETURNING` would too, but SQLite 3.40 builds a temporary
** table for every RETURNING). Triggers are off on these connections
** (above), so nothing else writes the slot during such a statement. */
static inline void ydb_sqlite_note_rowid(void *slot, int op, const char *database, const char *table,
                                         sqlite3_int64 rowid) {
    (void)op;
    (void)database;
    if (sqlite3_stricmp(table, "ydb_rows") == 0) *(sqlite3_int64 *)slot = rowid;
}

static inline void ydb_sqlite_track_rowids(sqlite3 *db, sqlite3_int64 *slot) {
    sqlite3_update_hook(db, ydb_sqlite_note_rowid, slot);
}

/* Shared mode (OtherProcessWatcher.swift): the latest snapshot number any
** process committed, kept in a small file every process maps. Raised with
** compare-and-swap so that two writers finishing in either order leave the
** larger number; these builtins are what C11 atomics compile to, and work
** on memory several processes share. */
#include <stdint.h>
#include <sys/inotify.h>

static inline void ydb_atomic_store_max(uint64_t *slot, uint64_t value) {
    uint64_t seen = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    while (seen < value &&
           !__atomic_compare_exchange_n(slot, &seen, value, 1, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
    }
}

static inline uint64_t ydb_atomic_load(const uint64_t *slot) {
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

/* The file system type of an open file (statfs's f_type, a magic number),
** or -1: shared mode refuses network file systems (DatabaseFileLock.swift). */
#include <sys/vfs.h>

static inline long long ydb_file_system_type(int descriptor) {
    struct statfs info;
    if (fstatfs(descriptor, &info) != 0) return -1;
    return (long long)(unsigned int)info.f_type;
}

/* Shared mode: each process's slot in the shared file is claimed with an
** open-file-description lock on one byte (OtherProcessWatcher.swift): the
** kernel drops it when the process dies, and another process can test it.
** (F_OFD_* need _GNU_SOURCE in glibc's headers; the numbers are Linux's.) */
#include <fcntl.h>
#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#endif

static inline void ydb_atomic_store(uint64_t *slot, uint64_t value) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

/* One byte at `offset`, for fcntl's open-file-description lock calls. */
static inline struct flock ydb_byte_range(short type, long long offset) {
    struct flock range = {0};
    range.l_type = type;
    range.l_whence = SEEK_SET;
    range.l_start = offset;
    range.l_len = 1;
    return range;
}

/* 0: locked now by this descriptor; -1: held by another (or an error). */
static inline int ydb_lock_byte(int descriptor, long long offset) {
    struct flock range = ydb_byte_range(F_WRLCK, offset);
    return fcntl(descriptor, F_OFD_SETLK, &range);
}

static inline int ydb_unlock_byte(int descriptor, long long offset) {
    struct flock range = ydb_byte_range(F_UNLCK, offset);
    return fcntl(descriptor, F_OFD_SETLK, &range);
}

/* 1: another open file description holds the byte; 0: nobody; -1: error. */
static inline int ydb_byte_is_locked(int descriptor, long long offset) {
    struct flock range = ydb_byte_range(F_WRLCK, offset);
    if (fcntl(descriptor, F_OFD_GETLK, &range) != 0) return -1;
    return range.l_type != F_UNLCK;
}
