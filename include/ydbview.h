/*
** ydbview.h -- the C interface to ydbview.
**
** ydbview is a key/value store on SQLite with YapDatabase-style persistent
** views. This header is the whole public C API of libydbview.so and reads as
** its manual: each object is introduced with its constructors and
** destructors, and every function says what it does, what each argument
** means, who owns every pointer it returns, and what happens on misuse.
**
** Build and link with:   pkg-config --cflags --libs ydbview
**
** ---------------------------------------------------------------------------
** CONVENTIONS (they hold for every function below unless it says otherwise)
**
** Status codes.  Every fallible function returns an int status: YDB_OK (0)
**   on success, one of the YDB_* codes below otherwise. Treat any code you do
**   not know as an error. YDB_NOTFOUND is the one "soft" code: a lookup that
**   found nothing; output parameters are then cleared as stated.
**
** Last error.  When a function returns a status other than YDB_OK, it stores
**   that code and a human-readable message as the calling thread's last
**   error, readable with ydb_errcode() and ydb_errmsg(). A call that returns
**   YDB_OK clears it. The store is thread-local: two threads never see each
**   other's messages.
**
** Output parameters come last.  Out-pointers must not be NULL unless the
**   function says so (YDB_MISUSE otherwise). On failure they are set to
**   NULL / 0 when the pointer itself was valid. A NULL string or callback
**   where one is required gives YDB_INVALID_ARGUMENT.
**
** Handles.  ydb_database, ydb_connection, ydb_txn, ydb_notification,
**   ydb_notification_list, ydb_mappings, ydb_changeset, ydb_registration,
**   and the handles lent to one callback call (ydb_group_result,
**   ydb_sort_key, ydb_group_batch, ydb_sort_key_batch, a callback's
**   ydb_txn) are opaque. Every handle is checked on entry: NULL gives
**   YDB_MISUSE (and is a harmless no-op for destructors, which return
**   YDB_OK), and so does a handle that was already closed, freed or ended,
**   a callback's handle used after its call or on another thread, or a
**   pointer the library never handed out. (Handles are tokens -- looked up
**   in a registry, or checked against the call running on the thread --
**   and never reused, so stale handles are detected rather than
**   dereferenced.)
**
** Ownership.  Each pointer parameter or result is either
**   - borrowed: owned by the library, valid until the event the function
**     names; do not free it; or
**   - owned by the caller: free it with the function named (ydb_free() for
**     byte buffers, ydb_X_free/close for handles).
**   Input pointers are only read during the call; the library never keeps
**   them (it copies what it needs).
**
** Strings.  All strings are NUL-terminated UTF-8. A string that is not valid
**   UTF-8 gives YDB_INVALID_ARGUMENT. Collection names and keys are data:
**   any Unicode text (quotes, spaces, emoji, the empty string) is fine.
**
** Blobs.  Objects and metadata are byte strings passed as (const void *,
**   size_t), up to SQLite's blob limit (1e9 bytes unless SQLite was built
**   otherwise; larger gives YDB_TOOBIG). A NULL pointer with size 0 is the
**   empty blob; a NULL pointer with a nonzero size is YDB_INVALID_ARGUMENT.
**   Where metadata is optional, a NULL pointer means "no metadata", which is
**   different from empty metadata (non-NULL pointer, size 0).
**
** Memory.  When memory runs out the call fails, not the process, wherever
**   the library can tell beforehand: a value handed out is copied once,
**   straight from SQLite into a buffer it checks (YDB_ERROR "out of memory"
**   or YDB_SQLITE), and under an address-space limit (RLIMIT_AS, ulimit -v)
**   a view's population is refused up front (YDB_ERROR) when it would not
**   fit. An allocation that fails inside the Swift runtime itself stops
**   the process, as in any Swift or Rust program; without such a limit
**   Linux itself ends a process that exhausts memory.
**
** Callbacks.  A callback is a function pointer plus a `void *ctx` passed
**   back to it as its first argument. Enumeration callbacks return 0 to go
**   on and nonzero to stop; stopping early is not an error (the enumerating
**   function returns YDB_OK). Where a callback comes with a destructor,
**   the destructor is called exactly once -- also when registration fails.
**
** Callbacks and re-entrancy.  One rule, the engine's, the same in Swift and
**   Python:
**   - a VIEW callback (grouping, sorting, sort_key), a find and a dynamic
**     mappings' group filter and sort receive `ydb_txn *txn`: a READ-ONLY
**     handle of the transaction running them, valid only during that call
**     and on its thread (kept and used later, or elsewhere: YDB_MISUSE). It reads rows with the ydb_txn_get_*
**     / exists / count / enumerate functions, and sees that transaction's
**     own writes so far (also during a registration or
**     ydb_view_set_definition). Writing through it (set, replace, touch,
**     remove, set_definition) or ending it (commit, rollback, end) gives
**     YDB_MISUSE, "the callback's transaction is read-only", and changes
**     nothing: a callback that ignores the error leaves the transaction
**     usable;
**   - inside a VIEW callback the rows may be read (through `txn`), the
**     views may not (YDB_MISUSE: they are half-updated), and nothing may
**     write or end the running transaction; reading through another
**     connection is fine; beginning a write on any connection, registering
**     or unregistering a view give YDB_MISUSE (this thread holds the
**     write);
**   - inside an ENUMERATION callback (rows, keys, collections, view rows,
**     find) the transaction may be read and, if read-write, written; ending
**     it (commit, rollback, end) or closing its connection gives
**     YDB_MISUSE and leaves it open; an enumeration run from inside a view
**     callback keeps the view callback's rule;
**   - COMMIT OBSERVERS run after the commit, with no engine lock held: they
**     may read and write through any connection, the committing one too.
**
** Threads.  A ydb_database is thread-safe: open connections and register
**   observers from any thread. A ydb_connection (and the transactions begun
**   on it) may be used from any thread, but the connection serialises its
**   calls: use one connection per thread for concurrency. Readers never
**   block writers and writers never block readers (SQLite WAL mode); one
**   read-write transaction runs at a time per database.
**
** Example.
**
**     ydb_database *db;  ydb_connection *conn;  ydb_txn *txn;
**     void *data;  size_t size;
**     if (ydb_database_open("books.sqlite", &db) != YDB_OK)
**         fprintf(stderr, "%s\n", ydb_errmsg());
**     ydb_connection_open(db, &conn);
**     ydb_txn_begin_read_write(conn, &txn);
**     ydb_txn_set_object(txn, "books", "b1", "Dune", 4, NULL, 0);
**     ydb_txn_commit(txn);                       -- frees txn
**     ydb_txn_begin_read(conn, &txn);
**     if (ydb_txn_get_object(txn, "books", "b1", &data, &size) == YDB_OK)
**         ydb_free(data);
**     ydb_txn_end(txn);                          -- frees txn
**     ydb_connection_close(conn);
**     ydb_database_close(db);
**
** Views, mappings, changesets.  Views (ydb_view_*) keep rows grouped and
**   sorted by user callbacks; mappings (ydb_mappings_*) turn a view's groups
**   into table sections; changesets (ydb_changeset_*) say which sections and
**   rows changed between two snapshots. See their chapters below, and the
**   example at the start of the VIEWS chapter.
**
** Structs.  A struct the caller fills and the library reads
**   (ydb_view_definition, ydb_range_options) starts with `size_t
**   struct_size`: the size of the caller's version of the struct. Its
**   _INIT macro sets it to sizeof the struct in the header the caller was
**   built with; set it, or start from the macro. The library reads only the
**   members that fit in struct_size (members a smaller, older struct lacks
**   take their defaults; members of a larger, newer one it does not know
**   are ignored) and refuses 0 -- a struct never initialised -- or a size
**   below the struct's first version with YDB_INVALID_ARGUMENT, e.g.
**   "ydb_view_definition.struct_size is 0: initialise it with
**   YDB_VIEW_DEFINITION_INIT". Structs the caller allocates only for the
**   library to fill (ydb_row_change, ydb_edit_step) have no size: they
**   never grow, and a new member comes with a new struct and a new _v2
**   function. ydb_view_row is the library's, lent to callbacks: it may
**   grow at its end, so never copy it by value into storage of your own.
**
** Evolution.  Existing signatures never change (a new behaviour gets a new
**   _v2 function); structs grow only at their end (see Structs).
** ---------------------------------------------------------------------------
*/
#ifndef YDBVIEW_H
#define YDBVIEW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
** VERSION
** ======================================================================== */

/*
** YDBVIEW_VERSION is the version of this header as a string "X.Y.Z";
** YDBVIEW_VERSION_NUMBER is X*1000000 + Y*1000 + Z. ydb_libversion() and
** ydb_libversion_number() return the same facts about the library actually
** loaded, so a program can check that the two agree:
**
**     assert(ydb_libversion_number() == YDBVIEW_VERSION_NUMBER);
**
** Before 1.0 the ABI may change between minor versions: 0.2.0 gave
** ydb_view_definition and ydb_range_options their struct_size member.
**
** The returned string is static: borrowed, valid forever.
*/
#define YDBVIEW_VERSION        "0.2.0"
#define YDBVIEW_VERSION_NUMBER 2000

const char *ydb_libversion(void);
int ydb_libversion_number(void);

/* ===========================================================================
** STATUS CODES
** ======================================================================== */

#define YDB_OK               0  /* Success */
#define YDB_ERROR            1  /* Generic error */
#define YDB_MISUSE           2  /* API misuse: NULL/stale handle, ended
                                   transaction, write in a read transaction,
                                   a second transaction on one connection */
#define YDB_INVALID_ARGUMENT 3  /* Bad argument: invalid UTF-8, NUL in a name,
                                   NULL blob with nonzero size, ... */
#define YDB_NOTFOUND         4  /* Lookup found nothing (row, metadata, ...) */
#define YDB_CLOSED           5  /* The database or connection is closed */
#define YDB_BUSY             6  /* The database file is locked (also: it
                                   is already open, see ydb_database_open) */
#define YDB_SQLITE           7  /* SQLite reported an error */
#define YDB_CALLBACK_FAILED  8  /* A user callback reported failure */
#define YDB_MISMATCH         9  /* Mappings and notifications at different
                                   snapshots (used by changesets) */
#define YDB_CORRUPT         10  /* The database file is damaged */
#define YDB_TOOBIG          11  /* A value (object, metadata, key,
                                   collection) or row is longer than SQLite
                                   stores; nothing was written */
#define YDB_RELOAD          12  /* The connection fell more than the
                                   database's max_commits_behind commits
                                   behind: its notifications were dropped;
                                   reload what depends on it */
#define YDB_CANTOPEN        13  /* The database file cannot be opened or
                                   created: the message names the path and
                                   the system's reason (ENOENT, EACCES, ...) */
#define YDB_CANCELLED       14  /* A background view registration was
                                   cancelled and installed nothing (see
                                   ydb_view_register_async) */

/*
** Values SQLite cannot store. SQLite stores strings and blobs of up to
** SQLITE_LIMIT_LENGTH bytes (1,000,000,000 by default), and a row (key,
** collection, object and metadata together) of up to about the same size.
** A write of anything longer fails with YDB_TOOBIG and a message naming
** the size and the limit, before anything is written: the row and its
** metadata are untouched and, like a write refused for a bad argument, the
** transaction goes on. (A row whose parts each fit but that SQLite refuses
** as a whole -- possible only through replace_object/replace_metadata next
** to a large kept value -- also gives YDB_TOOBIG with nothing written, but
** that failure comes from SQLite and poisons the transaction.)
** A key or collection longer than the limit names no row: lookups find
** nothing and removes and touches are no-ops, as for any missing row.
**
** The environment variable YDBVIEW_MAX_VALUE_BYTES, read when a database is
** opened, lowers that limit for every SQLite handle of the database (it can
** only lower it). It is a testing and hardening knob: tests set it small to
** reach the limit without allocating a gigabyte.
*/

/*
** ydb_errcode() returns the status of the calling thread's last failed call
** (YDB_OK when the last status-returning call succeeded, or none was made).
**
** ydb_errmsg() returns the message of that failure in English, or
** "not an error". Borrowed: valid until the next ydb_ call on this thread.
** Never NULL.
**
** ydb_errstr(status) returns a static description of a status code
** ("unknown error" for codes this library does not know). Borrowed, valid
** forever. Never NULL.
*/
int ydb_errcode(void);
/* ydb_errcode_sqlite() returns SQLite's extended result code behind the
** calling thread's last failure when SQLite reported it (e.g. SQLITE_FULL,
** SQLITE_IOERR_WRITE, SQLITE_CONSTRAINT_NOTNULL), 0 otherwise: a full disk
** and an I/O error differ here although both are YDB_SQLITE. */
int ydb_errcode_sqlite(void);
const char *ydb_errmsg(void);
const char *ydb_errstr(int status);

/*
** ydb_free(p) releases a buffer the library returned as "owned by the
** caller, free with ydb_free" (object and metadata bytes, strings). NULL is
** a no-op. A handle (live or not) is refused: it is left untouched and
** YDB_MISUSE is set (see ydb_errcode). Never pass it a borrowed pointer or
** any other pointer: that cannot be detected.
*/
void ydb_free(void *p);

/* ===========================================================================
** OBJECTS
** ======================================================================== */

/* A database: one SQLite file (WAL mode) shared by all its connections. */
typedef struct ydb_database ydb_database;

/* A connection: one reader/writer of a database, with its own snapshot. */
typedef struct ydb_connection ydb_connection;

/*
** A transaction: a read transaction (sees one snapshot, however many commits
** happen meanwhile) or a read-write transaction (sees its own writes; its
** changes become visible to others at commit). One type for both; writes
** on a read transaction return YDB_MISUSE.
*/
typedef struct ydb_txn ydb_txn;

/* What one read-write commit changed (YapDatabase's modified notification). */
typedef struct ydb_notification ydb_notification;

/* An ordered list of notifications, oldest first. */
typedef struct ydb_notification_list ydb_notification_list;

/* ===========================================================================
** DATABASE
** ======================================================================== */

/*
** ydb_database_open opens (creating it if needed) the database file at
** `path` and stores a new handle in *out_db. With path == NULL the database
** is a private temporary file, deleted when the database is closed. An
** empty path gives YDB_INVALID_ARGUMENT.
**
** One process, one database handle per database file. Views live in the
** handle's memory, so the handle holds an exclusive lock on the file itself
** (flock, keyed on the file, not the path) from open until it is closed and
** every connection of it is closed too. A second open of the same file --
** the same path, a symlink, a hard link, in this process or another --
** fails with YDB_BUSY and a message naming the path. A process that dies
** holds nothing: the system drops its lock. To share one database between
** processes, every process opens it with ydb_database_open_with_options and
** YDB_OPEN_MULTI_PROCESS (below).
**
** A path that cannot be opened (a missing directory, no permission, a
** directory) fails with YDB_CANTOPEN and a message naming the path and the
** system's reason, e.g. "cannot open database /x/y.db: No such file or
** directory"; a file SQLite cannot use fails with YDB_SQLITE or
** YDB_CORRUPT.
**
** *out_db is owned by the caller: close it with ydb_database_close().
** On failure *out_db is set to NULL.
*/
int ydb_database_open(const char *path, ydb_database **out_db);

/*
** Options for ydb_database_open_with_options. Start from
** YDB_DATABASE_OPTIONS_INIT, which fills `struct_size` (see "Structs the
** caller fills" above) and the defaults; then set what you need:
**
**     ydb_database_options options = YDB_DATABASE_OPTIONS_INIT;
**     options.flags |= YDB_OPEN_MULTI_PROCESS;
**     ydb_database_open_with_options("app.sqlite", &options, &db);
*/
typedef struct ydb_database_options {
    size_t struct_size;   /* sizeof(ydb_database_options), set by the INIT */
    unsigned int flags;   /* YDB_OPEN_* flags, 0 by default */
} ydb_database_options;

/*
** Shared mode: several processes (and several database handles of one
** process) open the file at once; each one's views, changesets, row caches
** and commit observers follow every other one's commits, with the same
** notifications the writing process gets (docs/behaviour.md, "Several
** processes"). Every process must open the file this way: a file open in
** shared mode refuses an exclusive open with YDB_BUSY, and the other way
** round. The file must be on a local file system: a network file system
** (NFS, SMB/CIFS, 9P, ...) gives YDB_CANTOPEN. Views are kept in each
** process's memory; a persistent view is stored whole when a process
** closes the database, and a later registration loads it and replays the
** commits since. Full-text indexes and search views are refused
** (YDB_MISUSE).
*/
#define YDB_OPEN_MULTI_PROCESS 0x1u

#define YDB_DATABASE_OPTIONS_INIT { sizeof(ydb_database_options), 0u }

/*
** ydb_database_open with options (NULL: the defaults, as ydb_database_open).
** An options struct whose struct_size is 0 or smaller than the first
** release's, or that sets an unknown flag, gives YDB_INVALID_ARGUMENT.
*/
int ydb_database_open_with_options(const char *path, const ydb_database_options *options,
                                   ydb_database **out_db);

/*
** Shared mode: how many commits the database file's commit log keeps
** (10,000 by default; at least 1). A process that falls further behind
** -- asleep, stopped in a debugger, busy -- rebuilds its views from the rows
** when it next looks, and its connections report YDB_RELOAD. Each process
** trims the log to its own setting as it commits. YDB_INVALID_ARGUMENT
** for 0.
*/
int ydb_database_set_commit_log_limit(ydb_database *db, uint64_t commits);
int ydb_database_commit_log_limit(ydb_database *db, uint64_t *out_commits);

/*
** Whether the database was opened in shared mode (1) or exclusive mode (0).
*/
int ydb_database_is_multi_process(ydb_database *db, int *out_multi_process);

/*
** ydb_database_close closes the database and frees the handle. Every commit
** observer still registered is removed (its destructor runs), and every
** transaction still open on its connections is ended (read-write ones roll
** back). Connection and transaction handles stay valid and must still be
** closed/ended, but every further operation through them fails with
** YDB_CLOSED ("database is closed"; for a transaction: "the transaction ended
** because its database was closed"). Background view registrations still
** running are cancelled (YDB_CLOSED; see ydb_view_register_async). NULL is
** a harmless no-op (YDB_OK); a stale handle gives YDB_MISUSE.
** Closing also writes the changes persistent views still keep in memory
** (commits store them 512 rows at a time, and a thread of the database
** stores the rest once commits pause for a second): a process that exits
** without closing, within a second of a commit, leaves those views marked
** stale, and they repopulate when next registered (docs/behaviour.md,
** "When a persistent view is stored").
*/
int ydb_database_close(ydb_database *db);

/*
** ydb_database_path stores the database file's path in *out_path (for a
** temporary database, the path of its temporary file). Borrowed: valid
** until ydb_database_close(db).
*/
int ydb_database_path(ydb_database *db, const char **out_path);

/*
** ydb_database_snapshot stores the latest committed snapshot number in
** *out_snapshot. Snapshot numbers grow by one with each read-write commit
** that changed something; a new database is at snapshot 0 or more. They
** never repeat, also across reopening the file or a crash, but a reopened
** database may continue from a larger number (docs/behaviour.md,
** "Snapshot numbers").
*/
int ydb_database_snapshot(ydb_database *db, uint64_t *out_snapshot);

/*
** ydb_database_set_max_commits_behind sets how many commits a connection may
** fall behind (default 1000, at least 1; 0 gives YDB_INVALID_ARGUMENT;
** UINT64_MAX means never).
** Past it the database drops the notifications it kept for that connection
** and releases its long-lived read transaction, so that neither memory nor
** the write-ahead log grows without bound: the connection's next read
** transaction gives YDB_RELOAD (while it is still in that long-lived read),
** and its next ydb_connection_begin_long_lived_read moves it to the newest
** snapshot and returns YDB_RELOAD instead of the skipped notifications.
** ydb_database_max_commits_behind stores the current limit in *out_commits.
*/
int ydb_database_set_max_commits_behind(ydb_database *db, uint64_t commits);
int ydb_database_max_commits_behind(ydb_database *db, uint64_t *out_commits);

/*
** The write timeout: how long beginning a read-write transaction waits for
** another one (on any connection of the database) to commit or roll back
** before it gives YDB_BUSY, "database is locked: waited 5 s ..." naming the
** wait -- so a transaction forgotten open fails other writers clearly
** instead of blocking them forever (as SQLite's busy timeout, 5 s in
** Python's sqlite3). In milliseconds; negative: no limit; 0: do not wait.
**
** ydb_database_set_default_write_timeout sets the timeout new connections
** start with, which ydb_view_register and ydb_view_unregister wait for the
** write lock too (default 5000; connections already open keep theirs).
** ydb_connection_set_write_timeout sets one connection's. The getters store
** the timeout in *out_timeout_ms (-1: no limit). A background registration
** (ydb_view_register_async) waits as long as it takes, but stops when
** cancelled or when the database closes.
*/
int ydb_database_set_default_write_timeout(ydb_database *db, int64_t timeout_ms);
int ydb_database_default_write_timeout(ydb_database *db, int64_t *out_timeout_ms);

/* ---------------------------------------------------------------------------
** Commit observers
**
** An observer is called once per read-write commit that changed something,
** after the commit is durable, with the commit's notification (borrowed:
** valid only during the call; copy it with ydb_notification_copy() to keep
** it). Observers registered on one database see every commit of every
** connection of it, in snapshot order: one thread calls observers at a time,
** and a commit made meanwhile by another thread is delivered by the thread
** already delivering, after the earlier ones. So an observer usually runs on
** the thread that committed, but may run on another committing thread, after
** the commit's own ydb_txn_commit returned.
**
** An observer runs after the commit, with no engine lock held: it may read
** and write through any connection, the one that committed included (its
** own commit's observers then run after it returns, in snapshot order). It
** cannot fail: it returns nothing.
** ------------------------------------------------------------------------ */

typedef void (*ydb_commit_observer_fn)(void *ctx,
                                       const ydb_notification *notification);
typedef void (*ydb_destructor_fn)(void *ctx);

/*
** ydb_database_add_commit_observer registers `observer` with `ctx` and
** stores a token for it in *out_token (never 0).
**
** `destroy` (may be NULL) is called with `ctx` exactly once: after the
** observer's last call, when it is removed, when the database is closed --
** or at once, before this function returns, when registration fails.
*/
int ydb_database_add_commit_observer(ydb_database *db,
                                     ydb_commit_observer_fn observer,
                                     void *ctx, ydb_destructor_fn destroy,
                                     uint64_t *out_token);

/*
** ydb_database_remove_commit_observer unregisters the observer with the
** given token. After it returns, the observer is not called again (a call
** already running on another thread finishes first, then the destructor
** runs). An unknown token gives YDB_NOTFOUND.
*/
int ydb_database_remove_commit_observer(ydb_database *db, uint64_t token);

/* ===========================================================================
** CONNECTION
** ======================================================================== */

/*
** ydb_connection_open opens a new connection to `db`. *out_conn is owned by
** the caller: close it with ydb_connection_close(). On failure it is NULL.
*/
int ydb_connection_open(ydb_database *db, ydb_connection **out_conn);

/*
** ydb_connection_close ends the connection's long-lived read transaction,
** if any, closes it and frees the handle. Transactions still open on it
** are ended (read-write ones roll back); their handles stay valid until
** ended with ydb_txn_end (every other operation on them returns
** YDB_MISUSE). NULL is a harmless no-op.
*/
int ydb_connection_close(ydb_connection *conn);

/*
** ydb_connection_snapshot stores in *out_snapshot the snapshot the
** connection reads at: the one of its long-lived read transaction while
** it has one, otherwise the last one it saw.
*/
int ydb_connection_snapshot(ydb_connection *conn, uint64_t *out_snapshot);

/*
** The row cache: the whole rows a connection's read transactions read
** through views (ydb_view_read_rows, ydb_view_object_at / _metadata_at /
** _row_at, and ydb_view_enumerate_rows, for a range of at most `limit`
** rows) are kept for its next read transactions, so a list on screen reads
** from SQLite after a commit only the rows that commit changed. Each commit
** makes every connection forget the rows it changed (all of them after
** emptying a collection). Read-write transactions do not use it, and a
** row whose object and metadata exceed 16 KiB together is never kept.
** ydb_connection_set_row_cache_limit sets how many rows the connection
** keeps (default 250; 0 turns the cache off and empties it; more than
** SIZE_MAX / 2 gives YDB_INVALID_ARGUMENT); ydb_connection_row_cache_limit
** stores it in *out_limit.
*/
int ydb_connection_set_row_cache_limit(ydb_connection *conn, size_t limit);
int ydb_connection_row_cache_limit(ydb_connection *conn, size_t *out_limit);

/* A connection's write timeout (see ydb_database_set_default_write_timeout). */
int ydb_connection_set_write_timeout(ydb_connection *conn, int64_t timeout_ms);
int ydb_connection_write_timeout(ydb_connection *conn, int64_t *out_timeout_ms);

/* ---------------------------------------------------------------------------
** Long-lived read transactions
**
** A connection in a long-lived read transaction "bookmarks" a snapshot:
** every read transaction begun on it reads that snapshot, however many
** commits other connections make, until the connection moves forward.
** Calling ydb_connection_begin_long_lived_read again moves the bookmark
** to the newest snapshot in one atomic step and reports the commits the
** connection skipped -- exactly those, oldest first: every commit since it
** last read (its previous bookmark, or for the first call its last
** transaction, or its opening). A connection's own commits are never
** reported to it. A connection in a long-lived read transaction cannot
** write: ydb_txn_begin_read_write gives YDB_MISUSE until it ends it.
** ------------------------------------------------------------------------ */

/*
** ydb_connection_begin_long_lived_read begins (or moves forward) the
** long-lived read transaction. If out_skipped is not NULL, *out_skipped
** receives the notifications of the commits skipped (possibly an empty
** list): owned by the caller, free with ydb_notification_list_free(). Pass
** NULL to discard them.
**
** A transaction still open on the connection gives YDB_MISUSE.
**
** YDB_RELOAD: the connection had fallen more than the database's
** max_commits_behind commits behind (see ydb_database_set_max_commits_behind),
** and the notifications in between were dropped. The call still moved the
** connection to the newest snapshot (it is in a long-lived read transaction
** there; *out_skipped is NULL): rebuild what depends on it, e.g. update
** mappings from a new read transaction instead of from notifications.
**
** Disk: between two reads, a call that finds the write-ahead log long copies
** it back into the database file first, so a reader that moves forward after
** every commit keeps the log small (a few MiB).
*/
int ydb_connection_begin_long_lived_read(ydb_connection *conn,
                                         ydb_notification_list **out_skipped);

/*
** ydb_connection_end_long_lived_read ends the long-lived read transaction;
** later read transactions see the newest snapshot again. A connection not in
** one is left as it is (YDB_OK).
*/
int ydb_connection_end_long_lived_read(ydb_connection *conn);

/*
** ydb_connection_is_in_long_lived_read stores 1 in *out_flag while the
** connection is in a long-lived read transaction, 0 otherwise.
*/
int ydb_connection_is_in_long_lived_read(ydb_connection *conn, int *out_flag);

/*
** ydb_connection_wakeup_fd stores in *out_fd a file descriptor that is
** readable while commits exist that the connection has not caught up with,
** so that an event loop can wait for changes with no thread of its own.
** Beginning any transaction on the newest snapshot (moving a long-lived
** read forward with ydb_connection_begin_long_lived_read, a read, a write)
** makes it unreadable again; the connection's own commits never make it
** readable. Readable at once if commits came since the connection last
** read. The descriptor is the connection's: do not read, write or close
** it; it stays valid until ydb_connection_close (remove it from the event
** loop first). Every call returns the same descriptor.
**
**     struct pollfd waiter = { .events = POLLIN };
**     ydb_connection_wakeup_fd(ui, &waiter.fd);
**     while (poll(&waiter, 1, -1) > 0) {
**         ydb_notification_list *skipped;
**         ydb_connection_begin_long_lived_read(ui, &skipped);
**         ... ydb_changeset_new(mappings, skipped, ...): animate, then free
**     }
**
** GLib: g_unix_fd_add(fd, G_IO_IN, on_commits, ui). Qt: a QSocketNotifier
** (fd, QSocketNotifier::Read) whose activated signal catches up. asyncio:
** loop.add_reader(fd, on_commits). In every case the handler catches up
** (ydb_connection_begin_long_lived_read), which clears the descriptor.
*/
int ydb_connection_wakeup_fd(ydb_connection *conn, int *out_fd);

/* ===========================================================================
** TRANSACTIONS
**
** A connection runs at most one transaction at a time: beginning a second
** one (a nested write, or a write inside a read) gives YDB_MISUSE and
** leaves the first one untouched.
** ======================================================================== */

/*
** ydb_txn_begin_read begins a read transaction on `conn`. *out_txn is owned
** by the caller: end it with ydb_txn_end(). On failure it is NULL.
*/
int ydb_txn_begin_read(ydb_connection *conn, ydb_txn **out_txn);

/*
** ydb_txn_begin_read_write begins a read-write transaction on `conn`, waiting
** while another connection writes, at most the connection's write timeout
** (5 s unless set: then YDB_BUSY, "database is locked", naming the wait;
** see ydb_connection_set_write_timeout). *out_txn is owned by the caller:
** finish it with ydb_txn_commit() or ydb_txn_rollback(). On failure it is
** NULL. A connection in a long-lived read transaction gives YDB_MISUSE.
**
** One writer per thread: the thread that began the open read-write
** transaction (on any connection of the database) gets YDB_MISUSE, not a
** wait, when it begins another -- directly, or from inside any callback
** (enumeration, view, observer) -- until that transaction is committed or
** rolled back, on whatever thread. It would wait for itself forever.
** Other threads wait as usual. While a thread waits here the connection is
** taken: another thread beginning a transaction on it gets YDB_MISUSE at
** once rather than waiting behind it (closing it is allowed: the waiting
** call then gives YDB_CLOSED).
*/
int ydb_txn_begin_read_write(ydb_connection *conn, ydb_txn **out_txn);

/*
** ydb_txn_commit commits a read-write transaction and frees the handle --
** whatever the result: when the commit fails, its changes are rolled back
** (nothing is half-applied) and the error is returned. The commit's
** observers have been called when it returns -- unless another thread is
** delivering observer calls at that moment: that thread then calls them,
** in snapshot order, possibly after this returns (see "Commit observers").
** On a read transaction it returns YDB_MISUSE and leaves the transaction
** (and handle) as they were.
*/
int ydb_txn_commit(ydb_txn *txn);

/*
** ydb_txn_rollback discards a read-write transaction's changes (or ends a
** read transaction) and frees the handle. NULL is a harmless no-op.
*/
int ydb_txn_rollback(ydb_txn *txn);

/*
** ydb_txn_end ends a read transaction (or rolls back a read-write one) and
** frees the handle: the same as ydb_txn_rollback, named for readers. NULL is
** a harmless no-op.
*/
int ydb_txn_end(ydb_txn *txn);

/* ydb_txn_snapshot stores the snapshot the transaction reads. */
int ydb_txn_snapshot(ydb_txn *txn, uint64_t *out_snapshot);

/* ydb_txn_is_read_write stores 1 in *out_flag for a read-write
** transaction, 0 for a read transaction. */
int ydb_txn_is_read_write(ydb_txn *txn, int *out_flag);

/* ---------------------------------------------------------------------------
** Reading (read and read-write transactions)
** ------------------------------------------------------------------------ */

/*
** ydb_txn_get_object stores the object of row (collection, key) in
** *out_object / *out_size. The buffer is owned by the caller: free it with
** ydb_free(). It is never NULL on success, even for an empty object.
** A missing row gives YDB_NOTFOUND with *out_object = NULL, *out_size = 0.
*/
int ydb_txn_get_object(ydb_txn *txn, const char *collection, const char *key,
                       void **out_object, size_t *out_size);

/*
** ydb_txn_get_metadata stores the metadata of row (collection, key), like
** ydb_txn_get_object. A missing row or a row without metadata gives
** YDB_NOTFOUND; use ydb_txn_get_row to tell the two apart.
*/
int ydb_txn_get_metadata(ydb_txn *txn, const char *collection,
                         const char *key, void **out_metadata,
                         size_t *out_size);

/*
** ydb_txn_get_row stores the object and metadata of row (collection, key).
** Both buffers are owned by the caller (free each with ydb_free()). The
** object pointer is never NULL on success; *out_metadata is NULL when the
** row has no metadata and non-NULL (possibly with size 0) when it has.
** out_metadata and out_metadata_size may both be NULL to skip the metadata.
** A missing row gives YDB_NOTFOUND with every output cleared.
*/
int ydb_txn_get_row(ydb_txn *txn, const char *collection, const char *key,
                    void **out_object, size_t *out_object_size,
                    void **out_metadata, size_t *out_metadata_size);

/*
** ydb_txn_get_row_hinted is ydb_txn_get_row with a hint: `rowid_hint` is
** the row's id as an edit step or row change gave it (ydb_edit_step.rowid).
** The row is looked up by that id first -- one lookup in the table, where a
** key needs the key index first -- and by (collection, key) when the id no
** longer names this row (it was removed and set again) or is 0 or less
** (no hint: ydb_txn_get_row is this with 0). The answer
** is always ydb_txn_get_row's; a list model reading the rows a commit
** placed saves about a third of each read.
*/
int ydb_txn_get_row_hinted(ydb_txn *txn, const char *collection,
                           const char *key, int64_t rowid_hint,
                           void **out_object, size_t *out_object_size,
                           void **out_metadata, size_t *out_metadata_size);

/* ydb_txn_exists stores 1 in *out_exists when the row exists, else 0. */
int ydb_txn_exists(ydb_txn *txn, const char *collection, const char *key,
                   int *out_exists);

/* ydb_txn_count stores the number of rows in `collection` in *out_count. */
int ydb_txn_count(ydb_txn *txn, const char *collection, size_t *out_count);

/* ydb_txn_count_all stores the number of rows in all collections. */
int ydb_txn_count_all(ydb_txn *txn, size_t *out_count);

/*
** Enumeration callbacks. Every pointer they receive is borrowed: valid only
** during that call. Return 0 to go on, nonzero to stop.
*/
typedef int (*ydb_name_fn)(void *ctx, const char *name);
typedef int (*ydb_row_fn)(void *ctx, const char *key,
                          const void *object, size_t object_size,
                          const void *metadata, size_t metadata_size);

/*
** ydb_txn_enumerate_collections calls `callback` with the name of each
** collection that holds at least one row, in ascending order.
*/
int ydb_txn_enumerate_collections(ydb_txn *txn, ydb_name_fn callback,
                                  void *ctx);

/*
** ydb_txn_enumerate_keys calls `callback` with each key in `collection`
** (an unknown collection has none).
*/
int ydb_txn_enumerate_keys(ydb_txn *txn, const char *collection,
                           ydb_name_fn callback, void *ctx);

/*
** ydb_txn_enumerate_rows calls `callback` with each row of `collection`:
** its key, object and metadata (metadata NULL when the row has none; the
** object pointer may be NULL when the object is empty).
*/
int ydb_txn_enumerate_rows(ydb_txn *txn, const char *collection,
                           ydb_row_fn callback, void *ctx);

/* ---------------------------------------------------------------------------
** Writing (read-write transactions only; YDB_MISUSE in a read transaction)
**
** A write refused for a bad argument (NULL or invalid UTF-8 name, NULL
** blob with a size) changes nothing, and the transaction goes on. A write
** that fails inside the engine (an SQLite error, later a view callback)
** poisons the transaction: every later write fails with YDB_MISUSE and
** ydb_txn_commit rolls everything back and returns the first error.
** ------------------------------------------------------------------------ */

/*
** ydb_txn_set_object stores `object` (and `metadata`, NULL for none) as row
** (collection, key), replacing any row already there.
*/
int ydb_txn_set_object(ydb_txn *txn, const char *collection, const char *key,
                       const void *object, size_t object_size,
                       const void *metadata, size_t metadata_size);

/*
** ydb_txn_set_objects stores `count` rows of `collection` in one call: row i
** is keys[i] with objects[i] (object_sizes[i] bytes) and, when `metadata`
** is not NULL, metadata[i] (metadata_sizes[i] bytes; a NULL entry: none).
** The same as ydb_txn_set_object for each row in order, except that a bad
** argument anywhere refuses the whole batch before anything is written,
** and that a key given twice keeps only its last row (the earlier ones are
** never stored). Views whose definitions have batch callbacks
** (grouping_batch, sort_key_batch below) are asked for the batch's groups,
** then its keys, in one call each, before any row is stored (such a
** callback reads the transaction as it was before the call); the rows are
** then stored and placed one by one. For bindings whose calls into C cost
** more than the work (Python).
*/
int ydb_txn_set_objects(ydb_txn *txn, const char *collection, size_t count,
                        const char *const *keys, const void *const *objects,
                        const size_t *object_sizes, const void *const *metadata,
                        const size_t *metadata_sizes);

/* ydb_txn_replace_object replaces the object of an existing row, keeping its
** metadata. A missing row is left missing (YDB_OK). */
int ydb_txn_replace_object(ydb_txn *txn, const char *collection,
                           const char *key, const void *object,
                           size_t object_size);

/* ydb_txn_replace_metadata replaces the metadata of an existing row (NULL
** removes it), keeping its object. A missing row is left missing (YDB_OK). */
int ydb_txn_replace_metadata(ydb_txn *txn, const char *collection,
                             const char *key, const void *metadata,
                             size_t metadata_size);

/*
** ydb_txn_touch_object / _metadata / _row mark a row's object, metadata or
** both as changed without changing them, so observers and views see them
** as updated. A missing row is ignored.
*/
int ydb_txn_touch_object(ydb_txn *txn, const char *collection,
                         const char *key);
int ydb_txn_touch_metadata(ydb_txn *txn, const char *collection,
                           const char *key);
int ydb_txn_touch_row(ydb_txn *txn, const char *collection, const char *key);

/* ydb_txn_remove_object removes one row (a missing row is ignored). */
int ydb_txn_remove_object(ydb_txn *txn, const char *collection,
                          const char *key);

/*
** ydb_txn_remove_objects removes the rows of `collection` named by the
** `count` keys in `keys` (missing rows are ignored). If any key is invalid,
** nothing is removed.
*/
int ydb_txn_remove_objects(ydb_txn *txn, const char *collection,
                           const char *const *keys, size_t count);

/* ydb_txn_remove_all_objects removes every row of `collection`. */
int ydb_txn_remove_all_objects(ydb_txn *txn, const char *collection);

/* ydb_txn_remove_all_objects_in_all_collections removes every row. */
int ydb_txn_remove_all_objects_in_all_collections(ydb_txn *txn);

/* ===========================================================================
** NOTIFICATIONS
**
** A notification tells what one commit changed: its snapshot, the rows it
** set/replaced/touched/removed one by one (with flags), the collections it
** emptied with ydb_txn_remove_all_objects, and whether it removed
** everything. Rows removed by a remove-all are not listed one by one.
** ======================================================================== */

/* Row change flags, or-ed together. */
#define YDB_ROW_OBJECT_CHANGED    1
#define YDB_ROW_METADATA_CHANGED  2
#define YDB_ROW_OBJECT_TOUCHED    4
#define YDB_ROW_METADATA_TOUCHED  8
#define YDB_ROW_REMOVED          16

/*
** ydb_notification_copy stores in *out_copy a new handle to the same
** notification (notifications never change, so this is cheap). Owned by the
** caller: free it with ydb_notification_free(). Use it to keep a
** notification received by an observer beyond the call.
*/
int ydb_notification_copy(const ydb_notification *notification,
                          ydb_notification **out_copy);

/* ydb_notification_free frees a handle from ydb_notification_copy.
** NULL is a harmless no-op. A borrowed notification, or a handle of another
** type, is left untouched and sets YDB_MISUSE (see ydb_errcode). */
void ydb_notification_free(ydb_notification *notification);

/* ydb_notification_snapshot stores the snapshot the commit produced. */
int ydb_notification_snapshot(const ydb_notification *notification,
                              uint64_t *out_snapshot);

/* ydb_notification_removed_all stores 1 when the commit removed every row
** of every collection, else 0. */
int ydb_notification_removed_all(const ydb_notification *notification,
                                 int *out_flag);

/*
** ydb_notification_has_change stores 1 in *out_flag when the commit changed
** row (collection, key): listed, or removed by a remove-all.
** ydb_notification_has_change_in_collection does the same for any row of
** `collection`.
*/
int ydb_notification_has_change(const ydb_notification *notification,
                                const char *collection, const char *key,
                                int *out_flag);
int ydb_notification_has_change_in_collection(
    const ydb_notification *notification, const char *collection,
    int *out_flag);

/* ydb_notification_changed_row_count stores the number of rows listed. */
int ydb_notification_changed_row_count(const ydb_notification *notification,
                                       size_t *out_count);

/*
** ydb_notification_enumerate_changed_rows calls `callback` for each row
** listed, with its collection, key and YDB_ROW_* flags, ordered by
** (collection, key). Strings are borrowed: valid during the call.
*/
typedef int (*ydb_row_change_fn)(void *ctx, const char *collection,
                                 const char *key, unsigned int flags);
int ydb_notification_enumerate_changed_rows(
    const ydb_notification *notification, ydb_row_change_fn callback,
    void *ctx);

/*
** ydb_notification_enumerate_removed_collections calls `callback` with each
** collection emptied by ydb_txn_remove_all_objects, in ascending order.
*/
int ydb_notification_enumerate_removed_collections(
    const ydb_notification *notification, ydb_name_fn callback, void *ctx);

/* ---------------------------------------------------------------------------
** Notification lists
** ------------------------------------------------------------------------ */

/* ydb_notification_list_free frees a list and every notification it
** lends out. NULL is a harmless no-op; a handle of another type is left
** untouched and sets YDB_MISUSE (see ydb_errcode). */
void ydb_notification_list_free(ydb_notification_list *list);

/*
** ydb_notification_list_new makes a list of `count` notifications (oldest
** first) -- for instance copies kept from commit observers -- to pass to
** ydb_changeset_new and the other list consumers. Each item is only read:
** the list takes its own reference, so the items may be freed afterwards.
** `items` may be NULL when count is 0. *out_list is owned by the caller:
** free it with ydb_notification_list_free().
*/
int ydb_notification_list_new(const ydb_notification *const *items,
                              size_t count,
                              ydb_notification_list **out_list);

/* ydb_notification_list_count stores the number of notifications. */
int ydb_notification_list_count(const ydb_notification_list *list,
                                size_t *out_count);

/*
** ydb_notification_list_get stores the notification at `index` (0 = oldest)
** in *out_notification. Borrowed: valid until ydb_notification_list_free().
** An index out of range gives YDB_INVALID_ARGUMENT.
*/
int ydb_notification_list_get(const ydb_notification_list *list,
                              size_t index,
                              const ydb_notification **out_notification);

/* ydb_notification_list_has_change(_in_collection): like the single
** notification functions, true when any notification in the list says so. */
int ydb_notification_list_has_change(const ydb_notification_list *list,
                                     const char *collection, const char *key,
                                     int *out_flag);
int ydb_notification_list_has_change_in_collection(
    const ydb_notification_list *list, const char *collection,
    int *out_flag);


/* ===========================================================================
** VIEWS
**
** A view keeps some rows of the database in named groups, each sorted. Two
** callbacks define it: the grouping callback puts a row in a group (or
** leaves it out), the sorting callback orders two rows of one group. A view
** is registered under a name with ydb_view_register; from then on every
** read-write transaction keeps it up to date (inside the same SQLite
** transaction), and any transaction can query it by name (ydb_view_* on a
** ydb_txn). A read transaction sees each view exactly as of its snapshot.
**
**     static int by_first_letter(void *ctx, ydb_txn *txn, const ydb_view_row *row,
**                                ydb_group_result *result) {
**         char group[2] = { row->key[0], 0 };
**         (void)ctx; (void)txn;
**         return ydb_group_result_set(result, group);  -- 0: success
**     }
**     static int by_key(void *ctx, ydb_txn *txn, const char *group,
**                       const ydb_view_row *a, const ydb_view_row *b,
**                       int *out_order) {
**         (void)ctx; (void)txn; (void)group;
**         *out_order = strcmp(a->key, b->key);
**         return 0;
**     }
**     ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
**     def.grouping = by_first_letter;  def.grouping_flavour = YDB_FLAVOUR_KEY;
**     def.sorting = by_key;            def.sorting_flavour = YDB_FLAVOUR_KEY;
**     def.version_tag = "1";
**     ydb_view_register(db, "byKey", &def, NULL, NULL);
**     ...
**     ydb_view_count_in_group(txn, "byKey", "a", &count);
**
** View callbacks.  A callback returns 0 on success; any other value is a
**   failure: the operation that ran it (a write, a registration, a find)
**   fails with YDB_CALLBACK_FAILED and the message "view 'NAME': grouping
**   callback failed ...". A failed write poisons its read-write transaction
**   (see Writing): nothing of it is ever committed. Callbacks run on the
**   thread making the call, inside the engine.
**
** Reading other rows.  Each callback gets `ydb_txn *txn`, a read-only
**   handle of the transaction running it (see "Callbacks and re-entrancy"
**   at the top): a book can be grouped by its author's country, a message
**   sorted by its conversation's pinned flag, reading that row with
**   ydb_txn_get_object(txn, ...). The read sees the running transaction's
**   own writes, so an author set earlier in the same transaction is found.
**   Views cannot be read there; writing or ending through `txn` gives
**   YDB_MISUSE; ydb_txn_begin_read_write, ydb_view_register and
**   ydb_view_unregister give YDB_MISUSE. Reading through another connection
**   is allowed. As in YapDatabase, a row a callback only READ is not a
**   dependency: changing the author later re-runs no callback for the
**   books, which stay where they were; touch them (ydb_txn_touch_object,
**   in the same transaction as the author's change) to regroup and resort
**   them. Every pointer a callback receives is borrowed: valid only during
**   that call.
**
** Context and destructor.  ydb_view_register and ydb_view_set_definition
**   take a `void *ctx` passed to both callbacks, and a destructor (may be
**   NULL) called with ctx EXACTLY ONCE: when the view stops using these
**   callbacks (ydb_view_unregister, a later registration or a committed
**   ydb_view_set_definition of the same name, ydb_database_close) -- or at
**   once, before the function returns, when it fails. After the destructor
**   runs the callbacks are never called again.
** ======================================================================== */

/* What a callback reads: the smallest flavour that covers it lets the view
** skip loading objects, and skip re-running it when other parts change. */
#define YDB_FLAVOUR_KEY      0  /* collection and key only */
#define YDB_FLAVOUR_OBJECT   1  /* + the object */
#define YDB_FLAVOUR_METADATA 2  /* + the metadata */
#define YDB_FLAVOUR_ROW      3  /* + object and metadata */

/*
** Invoke options: which changes to an existing row make a callback run
** again (it always runs when a row is inserted). Or-ed together; 0 means
** "on insert only". YDB_INVOKE_DEFAULT (alone) means the flavour's default:
** key -> insert only; object -> object modified or touched; metadata ->
** metadata modified or touched; row -> any change.
*/
#define YDB_INVOKE_OBJECT_MODIFIED   1u
#define YDB_INVOKE_METADATA_MODIFIED 2u
#define YDB_INVOKE_OBJECT_TOUCHED    4u
#define YDB_INVOKE_METADATA_TOUCHED  8u
#define YDB_INVOKE_ANY              15u
#define YDB_INVOKE_DEFAULT         256u

/*
** A row as a callback sees it. `object` is NULL unless the callback's
** flavour reads the object (then it is non-NULL, also for an empty object);
** `metadata` is NULL unless the flavour reads the metadata and the row has
** some (then it is non-NULL, also when empty). All borrowed: valid during
** the call.
*/
typedef struct ydb_view_row {
    const char *collection;
    const char *key;
    const void *object;
    size_t object_size;
    const void *metadata;
    size_t metadata_size;
} ydb_view_row;

/*
** Where a grouping callback writes its answer. Opaque; valid only during
** the callback that received it.
*/
typedef struct ydb_group_result ydb_group_result;

/*
** ydb_group_result_set puts the row in `group` (copied: the string may be
** freed as soon as it returns). Call it at most once per callback (the last
** call wins); a callback that never calls it leaves the row out of the view
** ("exclude"). A NULL or invalid UTF-8 group gives YDB_INVALID_ARGUMENT and
** makes the grouping call fail, whatever the callback returns. A result
** used after its callback returned gives YDB_MISUSE.
*/
int ydb_group_result_set(ydb_group_result *result, const char *group);

/*
** The grouping callback: decide the group of `row` with
** ydb_group_result_set (or leave it out), return 0; nonzero = failure.
** `txn` is a read-only handle of the running transaction, valid during the
** call, for reading other rows (see "Reading other rows" above).
*/
typedef int (*ydb_grouping_fn)(void *ctx, ydb_txn *txn, const ydb_view_row *row,
                               ydb_group_result *result);

/*
** The sorting callback: store in *out_order a negative number when row1
** goes before row2 in `group`, 0 when they are equal, a positive number
** when row1 goes after; return 0; nonzero = failure. It must be a
** consistent total order (antisymmetric and transitive) for the group to
** be sorted; an inconsistent one never crashes, it only leaves the order
** unspecified. A row goes after every row that compares equal to it.
** `txn`: as for the grouping callback.
*/
typedef int (*ydb_sorting_fn)(void *ctx, ydb_txn *txn, const char *group,
                              const ydb_view_row *row1,
                              const ydb_view_row *row2, int *out_order);

/*
** Sort keys: the other way to order a group. Instead of comparing two rows,
** a sort_key callback gives one row its key, built with the
** ydb_sort_key_append_* functions below; rows sort by their keys' bytes
** (memcmp, a shorter key first when it is a prefix of the longer), and rows
** with equal keys keep the order they arrived in. The engine keeps every
** key in memory and stores it with the view, so it calls back once per row
** instead of once per comparison: populating is a scan and a native sort,
** and placing a changed row never reads other rows back. It costs memory:
** each row's key in a buffer of its own, plus an entry in its group's tree
** of keys.
**
**     static int by_price_then_name(void *ctx, ydb_txn *txn, const char *group,
**                                   const ydb_view_row *row, ydb_sort_key *key) {
**         const struct item *item = row->object;
**         ydb_sort_key_append_double(key, item->price, 1);   -- most expensive first
**         return ydb_sort_key_append_text(key, item->name, 0);
**     }
**     def.sort_key = by_price_then_name;   def.sorting = NULL;
**
** Each append encodes its value so that byte order is value order, and
** several appends make a tuple: the first value decides, the next breaks
** ties. Every key of one view should append the same kinds of values in the
** same order. `descending` nonzero reverses that value's order.
**
**   int64   8 bytes, big-endian, sign bit flipped
**   double  8 bytes: -inf < ... < -0.0 = 0.0 < ... < +inf < NaN
**   text    UTF-8 bytes (code point order, not a locale's collation), with
**           0x00 escaped as 00 FF and 00 01 appended; a prefix sorts first
**   blob    bytes, encoded like text
**   raw     bytes as they are, no end marker (for keys made elsewhere, or
**           the last value of a tuple); `descending` does not apply
**
** The encodings are the ones of the Swift SortKey and Python sort_key(),
** and are stored in the database: they do not change within a schema
** version. An append refused (NULL or invalid UTF-8 text) gives
** YDB_INVALID_ARGUMENT and makes the callback fail, whatever it returns.
** The key handle is valid only during its callback, on its thread: after
** that (or elsewhere) every append gives YDB_MISUSE. `txn`: as for the
** grouping callback.
*/
typedef struct ydb_sort_key ydb_sort_key;

typedef int (*ydb_sort_key_fn)(void *ctx, ydb_txn *txn, const char *group,
                               const ydb_view_row *row, ydb_sort_key *key);

int ydb_sort_key_append_int64(ydb_sort_key *key, int64_t value, int descending);
int ydb_sort_key_append_double(ydb_sort_key *key, double value, int descending);
int ydb_sort_key_append_text(ydb_sort_key *key, const char *text, int descending);
int ydb_sort_key_append_blob(ydb_sort_key *key, const void *bytes, size_t size,
                             int descending);
int ydb_sort_key_append_raw(ydb_sort_key *key, const void *bytes, size_t size);

/*
** Batch callbacks (optional).  ydb_txn_set_objects asks a view whose
** definition sets grouping_batch for the groups of all of its rows that
** need one, in one call, and (with sort_key_batch too) then for their sort
** keys -- exactly the rows the one-row callbacks would have been called for
** (the invoke options decide), each once. The one-row callbacks stay
** required: every other write and every population uses them (unless
** population_batches is set, below), so a batch callback must answer what
** they would. Row i of a call is rows[i], narrowed
** to the callback's flavour, at position indexes[i] of the
** ydb_txn_set_objects arrays (a caller that still holds them need not read
** rows[i]); sort_key_batch also gets groups[i], the group row i is being
** placed in (rows of one group in a row share one pointer). Both run before
** any row of the batch is stored: `txn` reads the transaction as it was
** before the call. The callback answers once for all rows:
**
**   ydb_group_batch_set(result, names, name_count, choices)
**                                         row i goes to group
**                                         names[choices[i]] (copied), or
**                                         is left out when choices[i] is
**                                         YDB_NO_GROUP: each group named
**                                         once, however many rows it takes
**   ydb_sort_key_batch_set(result, keys, sizes)
**                                         the rows' keys as raw bytes
**                                         (encoded as an ydb_sort_key would
**                                         build them) laid end to end in
**                                         `keys`, row i's sizes[i] long
**
** A callback that never answers leaves every row out (grouping) or gives
** every row the empty key (sort keys), as the one-row forms do; an invalid
** group name, or a choice past name_count, makes the call fail. `rows`, `indexes`, `groups` and the result
** handle are valid only during the call; `txn` as for the grouping callback.
*/
typedef struct ydb_group_batch ydb_group_batch;
typedef struct ydb_sort_key_batch ydb_sort_key_batch;

typedef int (*ydb_grouping_batch_fn)(void *ctx, ydb_txn *txn, size_t count,
                                     const size_t *indexes,
                                     const ydb_view_row *rows,
                                     ydb_group_batch *result);
typedef int (*ydb_sort_key_batch_fn)(void *ctx, ydb_txn *txn, size_t count,
                                     const size_t *indexes,
                                     const char *const *groups,
                                     const ydb_view_row *rows,
                                     ydb_sort_key_batch *result);

#define YDB_NO_GROUP ((size_t)-1)
int ydb_group_batch_set(ydb_group_batch *result, const char *const *names,
                        size_t name_count, const size_t *choices);
int ydb_sort_key_batch_set(ydb_sort_key_batch *result, const void *keys,
                           const size_t *sizes);

/*
** A view's definition, read only during the call it is passed to (strings
** and arrays are copied). Start from YDB_VIEW_DEFINITION_INIT (or
** ydb_view_definition_init()) and set the fields:
**
**   struct_size         sizeof(ydb_view_definition), set by the macro and
**                       the function (see "Structs" at the top); at least
**                       YDB_VIEW_DEFINITION_MIN_SIZE, the first version's
**                       size (through allowed_collection_count): a struct
**                       that ends there has no sort_key, grouping_batch or
**                       sort_key_batch (NULL)
**   grouping            the grouping callback (required)
**   sorting, sort_key   exactly one of them: a comparator or a sort key
**                       (above); sorting_flavour and sorting_invoke apply
**                       to either
**   *_flavour           YDB_FLAVOUR_* (default YDB_FLAVOUR_ROW)
**   *_invoke            YDB_INVOKE_* bits (default YDB_INVOKE_DEFAULT)
**   version_tag         change it whenever the callbacks change: a persistent
**                       view re-registered with the same tag does no work at
**                       all, a different tag repopulates it (NULL = "")
**   persistent          nonzero (default): stored in the database and kept
**                       across restarts; 0: in memory only, repopulated at
**                       every registration
**   allowed_collections when not NULL, an array of
**                       allowed_collection_count collection names: only rows
**                       of these collections are ever considered
**   grouping_batch      optional (above)
**   sort_key_batch      optional, with sort_key and grouping_batch (above)
**   sorting_rows_in_memory
**                       nonzero: a comparator view (sorting) keeps every
**                       row its comparator reads in memory, as
**                       sorting_flavour reads it (about 160 bytes a row
**                       beside the object and metadata read), so that a
**                       commit compares rows without reading them back
**                       from SQLite; 0 (default): it keeps the rows it
**                       compared last, up to 2 MB. Ignored with sort_key.
**                       Not stored: change it without a new version_tag
**   population_batches  nonzero: populations call grouping_batch and
**                       sort_key_batch too (when set), a chunk of rows at a
**                       time, instead of the one-row callbacks. indexes[i]
**                       is then row i's place in the chunk, not in arrays of
**                       the caller's: the callback must read rows[i]. For
**                       a binding whose one crossing costs more than a
**                       row's work (Python); 0 (default): populations use
**                       the one-row callbacks
*/
typedef struct ydb_view_definition {
    size_t struct_size;
    int grouping_flavour;
    unsigned int grouping_invoke;
    ydb_grouping_fn grouping;
    int sorting_flavour;
    unsigned int sorting_invoke;
    ydb_sorting_fn sorting;
    const char *version_tag;
    int persistent;
    const char *const *allowed_collections;
    size_t allowed_collection_count;
    ydb_sort_key_fn sort_key;
    ydb_grouping_batch_fn grouping_batch;
    ydb_sort_key_batch_fn sort_key_batch;
    int sorting_rows_in_memory;
    int population_batches;
} ydb_view_definition;

#define YDB_VIEW_DEFINITION_INIT                                  \
    { sizeof(ydb_view_definition),                                \
      YDB_FLAVOUR_ROW, YDB_INVOKE_DEFAULT, NULL,                  \
      YDB_FLAVOUR_ROW, YDB_INVOKE_DEFAULT, NULL, NULL, 1, NULL, 0, NULL, \
      NULL, NULL, 0, 0 }

/* The smallest struct_size accepted: ydb_view_definition's first version,
** the members up to and including allowed_collection_count. */
#define YDB_VIEW_DEFINITION_MIN_SIZE                              \
    (offsetof(ydb_view_definition, allowed_collection_count) + sizeof(size_t))

/* ydb_view_definition_init fills *definition with the defaults above,
** struct_size included. It writes the whole struct as the LIBRARY knows it,
** so it needs a header no older than the library; YDB_VIEW_DEFINITION_INIT,
** which the examples use, has no such limit. */
int ydb_view_definition_init(ydb_view_definition *definition);

/*
** ydb_view_register registers a view under `name` (any UTF-8 text), in a
** read-write transaction of its own, waiting while another connection
** writes. A new view populates itself from the existing rows; a persistent
** view already stored under `name` with the same version tag calls no
** callback at all -- unless it is stale (below); a different tag or a
** non-persistent view repopulates. ydb_view_registration_outcome says which
** happened. Registering a name again replaces its definition. The commit's
** notification carries the view's changes, so mappings over it get a
** changeset.
**
** ctx and destroy: see "Context and destructor" above -- destroy is called
** exactly once, also when this fails (then before it returns). A failing
** callback gives YDB_CALLBACK_FAILED and registers nothing. A read-write
** transaction open on this thread gives YDB_MISUSE (it would wait for
** itself).
*/
int ydb_view_register(ydb_database *db, const char *name,
                      const ydb_view_definition *definition, void *ctx,
                      ydb_destructor_fn destroy);

/*
** Stale views.  A commit through this library that changes rows while a
** stored view is not registered marks that view stale, in the same SQLite
** transaction. Changes made by another SQLite client advance a counter
** stored in the database (triggers, which this library's own connections
** do not fire), checked whenever the database is opened. A stored view
** that missed a change is stale, and registering it repopulates it even
** with the same version tag.
**
** ydb_view_registration_outcome stores in *out_outcome how the registered
** view `name` was built when it was last registered: one of the values
** below. An unregistered name gives YDB_NOTFOUND.
*/
#define YDB_VIEW_BUILT            1  /* populated: new, or not persistent */
#define YDB_VIEW_LOADED           2  /* loaded as stored: no callback ran */
#define YDB_VIEW_REBUILT_NEW_TAG  3  /* stored with another version tag */
#define YDB_VIEW_REBUILT_STALE    4  /* rows changed while not registered */
int ydb_view_registration_outcome(ydb_database *db, const char *name, int *out_outcome);

/*
** ydb_view_unregister unregisters the view and drops what it stored; its
** destructor runs. An unknown name is left alone (YDB_OK).
*/
int ydb_view_unregister(ydb_database *db, const char *name);

/*
** ydb_view_enumerate_registered calls `callback` with the name of each view
** registered as of the latest snapshot, in ascending (UTF-8 byte) order.
*/
int ydb_view_enumerate_registered(ydb_database *db, ydb_name_fn callback,
                                  void *ctx);

/* ---------------------------------------------------------------------------
** Registering in the background
**
** ydb_view_register_async registers a view as ydb_view_register does, but
** on a thread of the library's own, and returns at once (YapDatabase's
** asyncRegisterExtension). The population reads the rows from read
** snapshots (10,000 rows each) without holding the write lock: other
** connections keep reading and committing meanwhile, and each commit
** records which rows it changed; the registration catches up with them on
** newer snapshots (and, when commits change rows faster than it can, slows
** them down by catching up in short slices under the write lock). A last,
** short read-write transaction runs the view's callbacks for the rows
** still waiting (as a commit would) and installs the view; until that commit no transaction sees it (or, registering a name
** again, sees its previous definition). That commit's notification carries
** the view's changes, as ydb_view_register's does. A persistent view is then
** written to the database 20,000 rows per short write transaction (stored
** as stale until the last one: if the process stops before, it is
** repopulated at its next registration). A view that needs no population
** (a persistent view registered or stored with the same version tag) is
** installed at once, on that thread too.
**
**   progress   may be NULL. Called as progress(callback_ctx, done, total)
**              at most every 1% and every 10 ms: first with done = 0, last
**              with done = total once the view is installed and stored.
**              Steps, not rows: each row read counts once when it is
**              grouped and once when it is sorted (total = 2 x rows; 0 when
**              nothing is populated). Return 0 to go on; nonzero cancels.
**   done       may be NULL. Called exactly once, last, as
**              done(callback_ctx, status, outcome, message) once the view
**              is installed and stored, or the registration failed: status
**              YDB_OK and outcome a YDB_VIEW_* value; or the failure -- the
**              status (YDB_CALLBACK_FAILED, YDB_CANCELLED, YDB_CLOSED, ...),
**              outcome 0 and its message (borrowed, valid during the call;
**              NULL on success). A failed or cancelled registration
**              installed nothing and its destroy(ctx) has run before done
**              is called.
**
** Both run on the registration's thread, never on the caller's, and never
** inside a lock of the library: they may call any function, but waiting
** for their own registration (ydb_registration_wait) gives YDB_MISUSE.
** The view's callbacks run on that thread too. ctx and destroy are as for
** ydb_view_register (destroy exactly once: when the view stops using its
** callbacks if it was installed, else before done is called, or before this
** returns when it fails). callback_ctx is yours: free it in done.
**
** On success *out_registration is a handle for ydb_registration_* (free it
** with ydb_registration_free; freeing does not stop the registration).
** When this fails nothing was started: no progress or done call ever comes.
** Unlike ydb_view_register it may be called with a read-write transaction
** open: the registration waits for it on its own thread.
**
** The same name.  A later ydb_view_register, ydb_view_register_async or
** ydb_view_unregister of the same name cancels a registration still
** running: it completes with YDB_CANCELLED. (One whose install already
** committed has completed; the later call replaces or removes its view
** as usual.)
**
** Closing.  ydb_database_close cancels every registration still running
** (status YDB_CLOSED) and returns once they no longer use the database --
** the file can be opened again at once -- unless it is called from one of
** their callbacks or with a read-write transaction open on the calling
** thread. Their done calls come from their own threads.
*/
typedef struct ydb_registration ydb_registration;

typedef int (*ydb_registration_progress_fn)(void *callback_ctx, uint64_t done,
                                            uint64_t total);
typedef void (*ydb_registration_done_fn)(void *callback_ctx, int status,
                                         int outcome, const char *message);

int ydb_view_register_async(ydb_database *db, const char *name,
                            const ydb_view_definition *definition, void *ctx,
                            ydb_destructor_fn destroy,
                            ydb_registration_progress_fn progress,
                            ydb_registration_done_fn done, void *callback_ctx,
                            ydb_registration **out_registration);

/*
** ydb_registration_cancel asks the registration to stop: it completes with
** YDB_CANCELLED and installs nothing, unless its install already committed
** (then, and after it finished, this does nothing). It stops at its next
** step (within a few thousand rows); ydb_registration_wait waits for that.
*/
int ydb_registration_cancel(ydb_registration *registration);

/*
** ydb_registration_wait waits until the registration finished and its done
** callback returned, at most timeout_ms milliseconds (negative: no limit;
** 0: just look), and stores 1 in *out_finished when it has, else 0. From the
** registration's own callbacks, or on a thread that holds a read-write
** transaction of the database while the registration runs (it needs the
** write lock to finish), it gives YDB_MISUSE: it would wait for itself.
** Just looking (0) is always allowed.
*/
int ydb_registration_wait(ydb_registration *registration, int64_t timeout_ms,
                          int *out_finished);

/*
** ydb_registration_result reports a finished registration as its done
** callback did: YDB_OK with the YDB_VIEW_* outcome in *out_outcome, or its
** failure status (YDB_CANCELLED, YDB_CALLBACK_FAILED, YDB_CLOSED, ...) with
** its message as the last error (ydb_errmsg) and *out_outcome 0. Known from
** the moment done is called. While it runs: YDB_MISUSE.
*/
int ydb_registration_result(ydb_registration *registration, int *out_outcome);

/* ydb_registration_free frees the handle (NULL: no-op). */
int ydb_registration_free(ydb_registration *registration);

/*
** ydb_view_set_definition changes the grouping and sorting of registered
** view `name` inside read-write transaction `txn`: with a version tag
** different from the view's, every row is regrouped and resorted, and this
** commit's changeset shows only what changed: rows that leave the view or
** change group (deletes, moves), rows that enter it (inserts), and within a
** group only the moves needed to reach the new order -- the rows outside a
** longest run that keeps its old order move, the others stay. A re-sort is
** never a reset: a table showing the view animates it. Views filtered over
** `name` (see "Filtered views" below) follow in the same transaction, their
** changesets shown the same way. With the same tag nothing happens. Only
** the callbacks, flavours, invoke options and version tag of `definition`
** are used (persistence and allowed collections stay as registered).
**
** ctx and destroy: destroy is called exactly once -- when the view stops
** using these callbacks if the commit installed them; otherwise (rolled
** back, failed, or nothing changed: same tag, unknown view) when the
** transaction ends, or at once when the call fails before reaching the
** engine (a NULL or read transaction, bad arguments). An unknown view gives
** YDB_NOTFOUND; a read transaction YDB_MISUSE; a filtered view YDB_MISUSE
** (its grouping and order are its parent's: change its filter with
** ydb_view_set_filter, or its parent's definition). A refusal inside the
** engine (unknown or filtered view) fails the transaction (see Writing).
*/
int ydb_view_set_definition(ydb_txn *txn, const char *name,
                            const ydb_view_definition *definition, void *ctx,
                            ydb_destructor_fn destroy);

/* ---------------------------------------------------------------------------
** Filtered views
**
** A filtered view shows the rows of another registered view, its parent,
** that a filter callback keeps: the parent's groups, in the parent's order,
** without the rows the filter leaves out (YapDatabase's filtered view). For
** every reader it is a view like any other -- ydb_view_* queries, mappings,
** changesets, notifications -- and it may itself be the parent of another
** filtered view.
**
**     static int unread(void *ctx, ydb_txn *txn, const char *group,
**                       const ydb_view_row *row, int *out_keep) {
**         (void)ctx; (void)txn; (void)group;
**         *out_keep = row->object_size > 0 && ((const char *)row->object)[0] == 'u';
**         return 0;
**     }
**     ydb_filter_definition def = YDB_FILTER_DEFINITION_INIT;
**     def.filter = unread;   def.flavour = YDB_FLAVOUR_OBJECT;
**     def.version_tag = "1";
**     ydb_filtered_view_register(db, "unread", "messages", &def, NULL, NULL);
**
** Keeping up.  Every commit keeps a filtered view level with its parent, in
**   the same transaction: a row the parent places is filtered when it is
**   inserted, and again when a change to it triggers the invoke options of
**   the filter or of the parent's grouping (the filter then sees the row's
**   new group). ydb_view_set_definition on the parent, or registering the
**   parent again, regroups and resorts the views filtered over it in the
**   same transaction (a re-sort shows as moves); unregistering the parent
**   unregisters them (and the views filtered over them). A filter that reads
**   something outside its row -- other rows through `txn`, a setting of the
**   program, the time -- is not re-run when that changes: touch the rows
**   concerned (ydb_txn_touch_rows; ydb_txn_touch_group on the PARENT to
**   re-filter a whole group, rows left out included), or set the filter
**   again with a new tag.
**
** Version tags.  A persistent filtered view is stored with its own tag and
**   its parent's: registered again with the same tag over a parent with the
**   same tag, it loads as stored (no callback runs); either tag changed, it
**   repopulates. ydb_view_version_tag of a filtered view answers both, as
**   "TAG\x1Fover\x1FPARENT_TAG".
** ------------------------------------------------------------------------ */

/*
** The filter callback: store in *out_keep a nonzero value to keep `row` --
** which the parent view puts in `group` -- or 0 to leave it out; return 0.
** *out_keep is 0 when the callback starts, so one that never writes it
** leaves the row out. A nonzero return is a failure, as for every view
** callback: the operation that ran it fails with YDB_CALLBACK_FAILED ("view
** 'NAME': filter callback failed ..."). `row` is narrowed to the filter's
** flavour; `txn`: as for the grouping callback (see "Reading other rows").
*/
typedef int (*ydb_filter_fn)(void *ctx, ydb_txn *txn, const char *group,
                             const ydb_view_row *row, int *out_keep);

/*
** A filter's definition, read only during the call it is passed to (the
** version tag is copied). Start from YDB_FILTER_DEFINITION_INIT and set the
** fields:
**
**   struct_size   sizeof(ydb_filter_definition), set by the macro (see
**                 "Structs" at the top)
**   flavour       YDB_FLAVOUR_*: what the filter reads (default
**                 YDB_FLAVOUR_ROW)
**   invoke        YDB_INVOKE_* bits: which changes to a row run the filter
**                 again (default YDB_INVOKE_DEFAULT, the flavour's; 0 =
**                 on insert only, as for a view's callbacks)
**   filter        the filter callback (required)
**   version_tag   change it whenever the filter changes (NULL = "")
**   persistent    nonzero (default): stored in the database and kept across
**                 restarts; 0: in memory only. Used by
**                 ydb_filtered_view_register only.
*/
typedef struct ydb_filter_definition {
    size_t struct_size;
    int flavour;
    unsigned int invoke;
    ydb_filter_fn filter;
    const char *version_tag;
    int persistent;
} ydb_filter_definition;

#define YDB_FILTER_DEFINITION_INIT                                \
    { sizeof(ydb_filter_definition), YDB_FLAVOUR_ROW, YDB_INVOKE_DEFAULT, \
      NULL, NULL, 1 }

/*
** ydb_filtered_view_register registers view `name` (any UTF-8 text) as the
** rows of registered view `parent` that `definition`'s filter keeps, in a
** read-write transaction of its own, as ydb_view_register registers a view:
** populated from the parent's rows (one filter call per row), or loaded as
** stored (see "Version tags" above); ydb_view_registration_outcome says
** which. Registering a name again replaces its definition. The commit's
** notification carries the view's changes, so mappings over it get a
** changeset.
**
** Refused: a parent that is not registered (YDB_NOTFOUND); a parent that is
** `name` itself or is filtered, directly or through others, over `name` (a
** cycle: YDB_INVALID_ARGUMENT); a failing filter (YDB_CALLBACK_FAILED:
** nothing is registered); a read-write transaction open on this thread
** (YDB_MISUSE, as for ydb_view_register); NULL, invalid UTF-8, a NULL
** filter, a struct_size of 0 or smaller than the struct's, an unknown
** flavour or invoke bit (YDB_INVALID_ARGUMENT); a bad handle (YDB_MISUSE).
**
** ctx and destroy: ctx is passed to the filter; destroy (may be NULL) is
** called with it EXACTLY ONCE: when the view stops using this filter
** (ydb_view_unregister of the view or of a view it is filtered over, a
** later registration of `name`, a committed ydb_view_set_filter,
** ydb_database_close) -- or, when this fails, before it returns.
*/
int ydb_filtered_view_register(ydb_database *db, const char *name,
                               const char *parent,
                               const ydb_filter_definition *definition,
                               void *ctx, ydb_destructor_fn destroy);

/*
** ydb_view_set_filter replaces the filter of filtered view `name` inside
** read-write transaction `txn`. With a version tag different from the
** filter's, it runs the new filter once on each of the parent's rows; the
** rows it keeps that the old filter left out are inserted, and the rows it
** leaves out that the old one kept are removed: this commit's changeset
** shows exactly the rows that enter and leave (a row that stays is neither
** moved nor updated). Views filtered over `name` follow in the same
** transaction. With the same tag nothing happens. Only the flavour, invoke
** options, filter and version tag of `definition` are used (persistence
** stays as registered). If the transaction rolls back the view keeps its
** old filter.
**
** Refused: an unknown view (YDB_NOTFOUND), a view that is not a filtered
** view (YDB_MISUSE: use ydb_view_set_definition), a read transaction
** (YDB_MISUSE), bad arguments as for ydb_filtered_view_register. A failing
** filter gives YDB_CALLBACK_FAILED. A refusal or failure inside the engine
** (unknown or unfiltered view, failing filter) fails the transaction: its
** commit rolls back everything (see Writing).
**
** ctx and destroy: as for ydb_view_set_definition -- destroy is called
** exactly once: when the view stops using this filter if the commit
** installed it; otherwise (rolled back, failed, or nothing changed) when
** the transaction ends, or at once when the call fails before reaching the
** engine (a NULL or read transaction, bad arguments).
*/
int ydb_view_set_filter(ydb_txn *txn, const char *name,
                        const ydb_filter_definition *definition, void *ctx,
                        ydb_destructor_fn destroy);

/*
** ydb_txn_touch_rows touches the rows of `collection` named by the `count`
** keys in `keys` (object and metadata), as ydb_txn_touch_row does each:
** observers see them updated, and every view runs its callbacks on them
** again where its invoke options include YDB_INVOKE_*_TOUCHED (the default
** of every flavour but YDB_FLAVOUR_KEY; a filtered view's filter runs when
** its own options or its parent's grouping's do) -- so a filter whose answer
** depends on something outside the row answers anew. Missing rows are
** ignored; `keys` may be NULL when `count` is 0. If any key is NULL or
** invalid UTF-8, nothing is touched (YDB_INVALID_ARGUMENT).
*/
int ydb_txn_touch_rows(ydb_txn *txn, const char *collection,
                       const char *const *keys, size_t count);

/*
** ydb_txn_touch_group touches, as ydb_txn_touch_rows does, every row that
** view `view` shows in `group` as of this transaction: a whole group
** re-evaluated without changing its rows. To re-filter rows a filtered
** view leaves out, touch the group of its parent. A group the view does not
** have touches nothing (YDB_OK); an unknown view gives YDB_NOTFOUND and, as
** a refusal inside the engine, fails the transaction (see Writing).
*/
int ydb_txn_touch_group(ydb_txn *txn, const char *view, const char *group);

/* ---------------------------------------------------------------------------
** Querying a view (read and read-write transactions)
**
** Every query names the view; a view not registered at the transaction's
** snapshot gives YDB_NOTFOUND (use ydb_view_is_registered to ask). Groups
** and indexes that do not exist give YDB_NOTFOUND with the outputs cleared,
** except the counts, which answer 0. Indexes start at 0. Strings returned
** by these functions are owned by the caller: free them with ydb_free().
** ------------------------------------------------------------------------ */

/* ydb_view_is_registered stores 1 when view `view` exists at the
** transaction's snapshot, else 0 (YDB_OK either way). */
int ydb_view_is_registered(ydb_txn *txn, const char *view, int *out_flag);

/* ydb_view_version_tag stores the view's version tag (owned: ydb_free). */
int ydb_view_version_tag(ydb_txn *txn, const char *view, char **out_tag);

/* ydb_view_group_count stores the number of non-empty groups. */
int ydb_view_group_count(ydb_txn *txn, const char *view, size_t *out_count);

/* ydb_view_enumerate_groups calls `callback` with each non-empty group, in
** ascending (UTF-8 byte) order. */
int ydb_view_enumerate_groups(ydb_txn *txn, const char *view,
                              ydb_name_fn callback, void *ctx);

/* ydb_view_has_group stores 1 when `group` holds rows, else 0. */
int ydb_view_has_group(ydb_txn *txn, const char *view, const char *group,
                       int *out_flag);

/* ydb_view_count_in_group stores the rows in `group` (0 for an unknown
** group); ydb_view_count_all the rows in all groups. */
int ydb_view_count_in_group(ydb_txn *txn, const char *view, const char *group,
                            size_t *out_count);
int ydb_view_count_all(ydb_txn *txn, const char *view, size_t *out_count);

/* ydb_view_is_empty stores 1 when the view holds no row, else 0. */
int ydb_view_is_empty(ydb_txn *txn, const char *view, int *out_flag);

/*
** ydb_view_key_at stores the collection and key of the row at `index` of
** `group` (both owned: free each with ydb_free). An unknown group or an
** index out of range gives YDB_NOTFOUND with both outputs NULL.
** ydb_view_first_key and ydb_view_last_key do the same for the first and
** last row.
*/
int ydb_view_key_at(ydb_txn *txn, const char *view, const char *group,
                    size_t index, char **out_collection, char **out_key);
int ydb_view_first_key(ydb_txn *txn, const char *view, const char *group,
                       char **out_collection, char **out_key);
int ydb_view_last_key(ydb_txn *txn, const char *view, const char *group,
                      char **out_collection, char **out_key);

/*
** ydb_view_object_at / ydb_view_metadata_at / ydb_view_row_at read the row at
** `index` of `group` like ydb_txn_get_object / _get_metadata / _get_row
** (same ownership, NULL rules and YDB_NOTFOUND cases).
*/
int ydb_view_object_at(ydb_txn *txn, const char *view, const char *group,
                       size_t index, void **out_object, size_t *out_size);
int ydb_view_metadata_at(ydb_txn *txn, const char *view, const char *group,
                         size_t index, void **out_metadata,
                         size_t *out_size);
int ydb_view_row_at(ydb_txn *txn, const char *view, const char *group,
                    size_t index, void **out_object, size_t *out_object_size,
                    void **out_metadata, size_t *out_metadata_size);

/*
** ydb_view_position stores where row (collection, key) stands in the view:
** its group (owned: ydb_free) and index. A row the view does not hold gives
** YDB_NOTFOUND with *out_group = NULL and *out_index = 0.
*/
int ydb_view_position(ydb_txn *txn, const char *view, const char *collection,
                      const char *key, char **out_group, size_t *out_index);

/* Index ranges [start, end): YDB_INDEX_END as `end` means "to the end". */
#define YDB_INDEX_END ((size_t)-1)

/*
** Enumeration callbacks for a group: the row's collection, key and index
** in the group (borrowed during the call); return 0 to go on, nonzero to
** stop. The row variant also gets the object and metadata (metadata NULL
** when the row has none; the object pointer may be NULL when empty).
*/
typedef int (*ydb_view_key_fn)(void *ctx, const char *collection,
                               const char *key, size_t index);
typedef int (*ydb_view_row_fn)(void *ctx, const char *collection,
                               const char *key, size_t index,
                               const void *object, size_t object_size,
                               const void *metadata, size_t metadata_size);

/*
** ydb_view_enumerate_keys calls `callback` for the rows of `group` with an
** index in [start, end) -- clipped to the group -- in index order, or from
** the last to the first when `reverse` is nonzero. start > end gives
** YDB_INVALID_ARGUMENT; an unknown group has no rows (YDB_OK).
** ydb_view_enumerate_rows does the same with objects and metadata.
*/
int ydb_view_enumerate_keys(ydb_txn *txn, const char *view, const char *group,
                            size_t start, size_t end, int reverse,
                            ydb_view_key_fn callback, void *ctx);
int ydb_view_enumerate_rows(ydb_txn *txn, const char *view, const char *group,
                            size_t start, size_t end, int reverse,
                            ydb_view_row_fn callback, void *ctx);

/*
** ydb_view_read_rows reads the rows of `group` with index in [start, end)
** (clamped; backwards when `reverse`) in one call, for callers that pay per
** call (language bindings): *out_buffer (free with ydb_free) holds
** *out_count rows, *out_size bytes. Each row is a header of four int32_t in
** native byte order -- collection size, key size, object size, metadata
** size (-1: no metadata) -- followed by those bytes, unterminated.
*/
int ydb_view_read_rows(ydb_txn *txn, const char *view, const char *group,
                       size_t start, size_t end, int reverse,
                       void **out_buffer, size_t *out_size, size_t *out_count);

/*
** The find callback: for `row`, store in *out_order a negative number when
** the row comes before the range wanted, 0 when it is inside it, a positive
** number when it comes after; return 0 (nonzero = failure). It must agree
** with the group's sort order. `txn` is a read-only handle of the
** transaction the find runs in, valid during the call: it reads rows and
** views; writing or ending through it gives YDB_MISUSE.
*/
typedef int (*ydb_find_fn)(void *ctx, ydb_txn *txn, const ydb_view_row *row,
                           int *out_order);

/*
** ydb_view_find stores in [*out_start, *out_end) the whole range of indexes
** of `group` for which `find` answers 0, found by binary search (O(log n)
** calls). `flavour` (YDB_FLAVOUR_*) says what `find` reads. No such row (or
** an unknown group) gives YDB_NOTFOUND with both outputs 0; a failing
** callback gives YDB_CALLBACK_FAILED.
*/
int ydb_view_find(ydb_txn *txn, const char *view, const char *group,
                  int flavour, ydb_find_fn find, void *ctx,
                  size_t *out_start, size_t *out_end);

/*
** ydb_view_has_changes stores 1 when any notification in `list` changed
** view `view`; ydb_view_has_changes_in_group when any changed rows of
** `group` in it (or created, emptied or reset it). Else 0.
*/
int ydb_view_has_changes(const ydb_notification_list *list, const char *view,
                         int *out_flag);
int ydb_view_has_changes_in_group(const ydb_notification_list *list,
                                  const char *view, const char *group,
                                  int *out_flag);

/* ===========================================================================
** MAPPINGS
**
** A ydb_mappings maps the groups of one view onto the sections of a table:
** which groups are shown, in which order, which part of each (ranges), in
** which direction (reverse), as separate sections or one (consolidation).
** Create it, configure it, update it once with a transaction (usually one
** on a connection in a long-lived read transaction), then read it with
** the getters; when the connection moves forward, ydb_changeset_new gives
** the changes and moves the mappings along.
**
**     const char *groups[] = { "a", "b" };
**     ydb_mappings *m;
**     ydb_mappings_new("byKey", groups, 2, &m);
**     ydb_mappings_set_range_fixed(m, "a", 20, 0, YDB_PIN_BEGINNING);
**     ydb_connection_begin_long_lived_read(ui, NULL);
**     ydb_txn_begin_read(ui, &txn);
**     ydb_mappings_update(m, txn);
**     ydb_txn_end(txn);
**     ydb_mappings_number_of_sections(m, &sections);
**
** Threads.  A mappings object is a single-thread object (use it from the
**   thread that drives its table). Each call nonetheless holds the
**   object's own lock, so two threads using one mappings never corrupt
**   memory; calls into the same mappings from its own filter or sort
**   callback return YDB_MISUSE.
**
** Before the first update.  Counts are 0, ydb_mappings_is_empty says 1 and
**   every lookup gives YDB_NOTFOUND; ydb_changeset_new gives YDB_MISMATCH.
**
** Groups and strings.  Group names returned by mappings getters are
**   borrowed: valid until ydb_mappings_free(). An argument naming a group
**   the mappings do not have, a section or row out of range, gives
**   YDB_NOTFOUND with the outputs cleared (NULL / 0).
**
** Argument order follows YapDatabase's selector names: "index for row in
**   section" takes (row, section); index paths returned are (section, row).
** ======================================================================== */

typedef struct ydb_mappings ydb_mappings;

/*
** ydb_mappings_new makes mappings over view `view` showing `groups` (an
** array of `count` group names; duplicates after the first are ignored),
** section i showing groups[i] (minus dynamic sections showing no row).
** *out_mappings is owned by the caller: free it with ydb_mappings_free().
*/
int ydb_mappings_new(const char *view, const char *const *groups,
                     size_t count, ydb_mappings **out_mappings);

/*
** Dynamic groups. The filter callback returns nonzero to show `group`; the
** sort callback returns a negative number when group1 goes before group2,
** 0 when equal, positive when after. Neither can fail. Both run during
** ydb_mappings_update, ydb_changeset_new and ydb_changeset_new_in_txn (and
** ydb_mappings_has_changes for the filter), on the calling thread.
**
** `txn` is a read-only handle, valid during the call, of the transaction
** the groups are found with: the one given to ydb_mappings_update or
** ydb_changeset_new_in_txn. It reads rows and views (a group shown only
** while the row it names exists, say); writing or ending through it gives
** YDB_MISUSE. It is NULL where there is no transaction: ydb_changeset_new
** and ydb_mappings_has_changes. A row read is not a dependency: the groups
** are found again at each update or changeset.
*/
typedef int (*ydb_group_filter_fn)(void *ctx, ydb_txn *txn, const char *group);
typedef int (*ydb_group_sort_fn)(void *ctx, ydb_txn *txn, const char *group1,
                                 const char *group2);

/*
** ydb_mappings_new_dynamic makes mappings whose groups are found in the view
** at every update: the groups `filter` accepts, ordered by `sort`. `destroy`
** (may be NULL) is called with ctx exactly once: by ydb_mappings_free -- or
** before this function returns when it fails.
*/
int ydb_mappings_new_dynamic(const char *view, ydb_group_filter_fn filter,
                             ydb_group_sort_fn sort, void *ctx,
                             ydb_destructor_fn destroy,
                             ydb_mappings **out_mappings);

/* ydb_mappings_free frees the mappings (and runs the dynamic groups'
** destructor). NULL is a harmless no-op; a handle of another type is left
** untouched and sets YDB_MISUSE (see ydb_errcode). */
void ydb_mappings_free(ydb_mappings *mappings);

/* ydb_mappings_view stores the view's name (borrowed: until free). */
int ydb_mappings_view(ydb_mappings *mappings, const char **out_view);

/* ydb_mappings_has_dynamic_groups stores 1 for ydb_mappings_new_dynamic. */
int ydb_mappings_has_dynamic_groups(ydb_mappings *mappings, int *out_flag);

/* ydb_mappings_enumerate_all_groups calls `callback` with each group of the
** mappings, visible or not, in order (dynamic groups: as of the last
** update). ydb_mappings_enumerate_visible_groups: the groups shown as
** sections, in section order (the consolidated name while consolidated). */
int ydb_mappings_enumerate_all_groups(ydb_mappings *mappings,
                                      ydb_name_fn callback, void *ctx);
int ydb_mappings_enumerate_visible_groups(ydb_mappings *mappings,
                                          ydb_name_fn callback, void *ctx);

/* ---------------------------------------------------------------------------
** Configuration. Setters may be called before or after the first update;
** after it, getters reflect the change at once. A setting may name a group
** the mappings do not (yet) have; it applies if the group appears.
** ------------------------------------------------------------------------ */

/*
** Dynamic sections: a dynamic group's section disappears while it shows no
** row. The all-groups setting forgets the per-group ones made before it;
** later per-group settings override it. Getters store 1 or 0.
*/
int ydb_mappings_set_dynamic_section(ydb_mappings *mappings,
                                     const char *group, int is_dynamic);
int ydb_mappings_is_dynamic_section(ydb_mappings *mappings,
                                    const char *group, int *out_flag);
int ydb_mappings_set_dynamic_section_for_all_groups(ydb_mappings *mappings,
                                                    int is_dynamic);
int ydb_mappings_is_dynamic_section_for_all_groups(ydb_mappings *mappings,
                                                   int *out_flag);

/* Range kinds, pins and grow options. */
#define YDB_RANGE_FIXED        1
#define YDB_RANGE_FLEXIBLE     2
#define YDB_PIN_BEGINNING      0
#define YDB_PIN_END            1
#define YDB_GROW_PIN_SIDE      0
#define YDB_GROW_NON_PIN_SIDE  1
#define YDB_GROW_BOTH_SIDES    2
/* The largest range offset: 2^53 - 1. */
#define YDB_RANGE_MAX_OFFSET   (((int64_t)1 << 53) - 1)

/*
** A group's range options: read back by ydb_mappings_range_options, set by
** ydb_mappings_set_range_options. max_length is 0 for "no limit". A fixed
** range has min_length 0, grow YDB_GROW_PIN_SIDE, and max_length equal to
** its length as set ("the length originally specified"); its length read
** back may be less (the current, clipped length).
**
** struct_size is sizeof(ydb_range_options) (see "Structs" at the top):
** start from YDB_RANGE_OPTIONS_INIT, also for a struct the library fills
** (ydb_mappings_range_options writes only the members that fit in it and
** leaves struct_size as it is). Every function taking one refuses 0 or a
** size below this first version's with YDB_INVALID_ARGUMENT (an output is
** then left untouched).
*/
typedef struct ydb_range_options {
    size_t struct_size;
    int kind;
    int64_t length;
    int64_t offset;
    int pin;
    int64_t max_length;
    int64_t min_length;
    int grow;
} ydb_range_options;

#define YDB_RANGE_OPTIONS_INIT { sizeof(ydb_range_options), 0, 0, 0, 0, 0, 0, 0 }

/*
** ydb_mappings_set_range_fixed shows only `length` rows of `group`, starting
** `offset` rows away from `pin` (YDB_PIN_*), clipped to the group; the
** window never moves. ydb_mappings_set_range_flexible starts the same way,
** then follows its rows as they are inserted and deleted; each changeset
** ends by keeping at most max_length (0: no limit) and, when the group has
** them, at least min_length rows (as in YapDatabase, not before the first
** changeset); `grow` (YDB_GROW_*) says which edges accept rows inserted
** exactly at them (docs/behaviour.md, "Flexible range", has every rule). A length < 1, a negative offset or min_length,
** an offset above 2^53 - 1 (YDB_RANGE_MAX_OFFSET: far past any group; a
** window follows its rows by counting, so larger could overflow), a
** negative max_length, min_length > max_length (when limited), or an
** unknown pin/grow value gives YDB_INVALID_ARGUMENT and changes nothing.
** Lengths may be anything up to INT64_MAX.
** On a reversed group the options are read in display order.
*/
int ydb_mappings_set_range_fixed(ydb_mappings *mappings, const char *group,
                                 int64_t length, int64_t offset, int pin);
int ydb_mappings_set_range_flexible(ydb_mappings *mappings, const char *group,
                                    int64_t length, int64_t offset, int pin,
                                    int64_t max_length, int64_t min_length,
                                    int grow);

/*
** ydb_mappings_range_options stores the group's range options in its current
** display order; none gives YDB_NOTFOUND with *out zeroed. As YapDatabase's
** rangeOptionsForGroup: promises, length and offset are the range's CURRENT
** ones as of the last update or changeset (or configuration change since):
** a flexible range's length as grown and shrunk and its offset from its pin
** as rows came and went between the window and the pin; a fixed range's
** length clipped to the group (its length as set stays in max_length) and
** its offset as set. On a reversed group the pin is flipped (display order)
** and the offset counts from it. kind, pin, max_length, min_length and grow
** are as set. Before the first update, and for a group the mappings do not
** have at the last update, the options are as set.
*/
int ydb_mappings_range_options(ydb_mappings *mappings, const char *group,
                               ydb_range_options *out_options);

/*
** ydb_mappings_set_range_options sets a group's range from a struct -- one
** read back with ydb_mappings_range_options and changed (YapDatabase's
** copyWithNewLength:, copyWithNewOffset:, and maxLength, minLength and
** growOptions changed after creation), or one filled in from scratch:
**
**     ydb_range_options o = YDB_RANGE_OPTIONS_INIT;
**     ydb_mappings_range_options(m, "chat", &o);
**     o.offset += 50;                    (scroll back 50 rows)
**     o.max_length = 300;
**     ydb_mappings_set_range_options(m, "chat", &o);
**
** It replaces the group's range like the other setters: the window is placed
** afresh from the given length and offset, at once after the first update
** (getters reflect it; no changeset describes the move: reload the table).
** Setting back unchanged what ydb_mappings_range_options read leaves the
** window where it is. Checked like ydb_mappings_set_range_fixed/_flexible,
** except that a flexible range may have length 0 (what an empty window reads
** back as; it grows when rows are inserted at its edge). A fixed range's
** length as set is max_length (or length when max_length is 0); its length
** may be anything from 0 to max_length (a clipped length read back), more
** gives YDB_INVALID_ARGUMENT, as do a min_length other than 0 or a grow other
** than YDB_GROW_PIN_SIDE. NULL options: YDB_INVALID_ARGUMENT.
*/
int ydb_mappings_set_range_options(ydb_mappings *mappings, const char *group,
                                   const ydb_range_options *options);

/*
** ydb_range_options_set_length gives *options another length (YapDatabase's
** copyWithNewLength:; for another offset, assign the offset field). For a
** fixed range it is a new length as set: max_length becomes `length` too.
** A length < 1 (fixed) or < 0 (flexible), an unknown kind or NULL options
** gives YDB_INVALID_ARGUMENT and changes nothing.
*/
int ydb_range_options_set_length(ydb_range_options *options, int64_t length);

/* ydb_mappings_remove_range_options shows all of `group` again. */
int ydb_mappings_remove_range_options(ydb_mappings *mappings,
                                      const char *group);

/* Reverse: show `group` bottom-up. Getter stores 1 or 0. */
int ydb_mappings_set_reversed(ydb_mappings *mappings, const char *group,
                              int is_reversed);
int ydb_mappings_is_reversed(ydb_mappings *mappings, const char *group,
                             int *out_flag);

/*
** Cell drawing dependencies: each cell of `group` is drawn using the cells
** `offsets[i]` rows away (-1: the one above); changesets then also reload a
** row whose neighbour at that offset changed. Replaces the group's
** previous offsets; count 0 removes them (offsets may then be NULL); 0
** offsets are ignored.
**
** ydb_mappings_cell_drawing_dependency_offsets stores up to `capacity`
** offsets (ascending) in out_offsets (may be NULL when capacity is 0) and
** the total number in *out_count.
*/
int ydb_mappings_set_cell_drawing_dependency_offsets(ydb_mappings *mappings,
                                                     const char *group,
                                                     const int *offsets,
                                                     size_t count);
int ydb_mappings_cell_drawing_dependency_offsets(ydb_mappings *mappings,
                                                 const char *group,
                                                 int *out_offsets,
                                                 size_t capacity,
                                                 size_t *out_count);

/*
** Auto-consolidation: while the visible groups together show fewer than
** `threshold` rows, show them as one section named `name`. 0 disables it.
** ydb_mappings_consolidated_group_name gives YDB_NOTFOUND (NULL) when never
** set; the name is borrowed until ydb_mappings_free.
*/
int ydb_mappings_set_auto_consolidate_groups(ydb_mappings *mappings,
                                             size_t threshold,
                                             const char *name);
int ydb_mappings_auto_consolidate_groups_threshold(ydb_mappings *mappings,
                                                   size_t *out_threshold);
int ydb_mappings_consolidated_group_name(ydb_mappings *mappings,
                                         const char **out_name);

/* ---------------------------------------------------------------------------
** Updating and reading
** ------------------------------------------------------------------------ */

/*
** ydb_mappings_update caches the view's groups and counts as of `txn` and
** moves the mappings to its snapshot. A view not registered at that
** snapshot gives YDB_NOTFOUND naming it (a misspelt name is an error, not
** an empty table) and leaves the mappings as they were -- unless
** ydb_mappings_set_allows_unregistered_view(mappings, 1) was called: then
** it reads as empty, for mappings made before their view is registered
** (the registration's changeset inserts every row).
*/
int ydb_mappings_update(ydb_mappings *mappings, ydb_txn *txn);
int ydb_mappings_set_allows_unregistered_view(ydb_mappings *mappings, int allows);
int ydb_mappings_allows_unregistered_view(ydb_mappings *mappings, int *out_flag);

/* ydb_mappings_snapshot_of_last_update stores the snapshot of the last
** update or changeset; never updated gives YDB_NOTFOUND with 0. */
int ydb_mappings_snapshot_of_last_update(ydb_mappings *mappings,
                                         uint64_t *out_snapshot);

int ydb_mappings_number_of_sections(ydb_mappings *mappings,
                                    size_t *out_count);
/* Rows shown in `section`; no such section gives YDB_NOTFOUND. */
int ydb_mappings_number_of_items_in_section(ydb_mappings *mappings,
                                            size_t section,
                                            size_t *out_count);
/* Rows `group` shows (0 for a hidden dynamic group; all rows for the
** consolidated name while consolidated); unknown group: YDB_NOTFOUND. */
int ydb_mappings_number_of_items_in_group(ydb_mappings *mappings,
                                          const char *group,
                                          size_t *out_count);
/* Rows shown by all visible groups together. */
int ydb_mappings_number_of_items_in_all_groups(ydb_mappings *mappings,
                                               size_t *out_count);
/* 1 when no section shows any row (and before the first update). */
int ydb_mappings_is_empty(ydb_mappings *mappings, int *out_flag);
/* 1 while the visible groups are shown as one consolidated section. */
int ydb_mappings_is_using_consolidated_group(ydb_mappings *mappings,
                                             int *out_flag);

/* The group shown in `section` (borrowed until ydb_mappings_free). */
int ydb_mappings_group_for_section(ydb_mappings *mappings, size_t section,
                                   const char **out_group);
/* The section showing `group` (hidden or unknown: YDB_NOTFOUND). */
int ydb_mappings_section_for_group(ydb_mappings *mappings, const char *group,
                                   size_t *out_section);

/* The view group (borrowed) and index shown at (row, section). */
int ydb_mappings_group_and_index_for_row(ydb_mappings *mappings, size_t row,
                                         size_t section,
                                         const char **out_group,
                                         size_t *out_index);
/* The view index shown at (row, section). */
int ydb_mappings_index_for_row_in_section(ydb_mappings *mappings, size_t row,
                                          size_t section, size_t *out_index);
/* The view index shown at `row` of `group`'s own window (the inverse of
** ydb_mappings_window_row_for_index). */
int ydb_mappings_index_for_row_in_group(ydb_mappings *mappings, size_t row,
                                        const char *group, size_t *out_index);
/* Where the row at view `index` of `group` is shown (section, row); not
** shown (hidden group, outside the range) gives YDB_NOTFOUND. */
int ydb_mappings_row_and_section_for_index(ydb_mappings *mappings,
                                           size_t index, const char *group,
                                           size_t *out_section,
                                           size_t *out_row);
/* The table row showing view `index` of `group` (YapDatabase's
** rowForIndex:inGroup:, shorthand for getRow:section:forIndex:inGroup:):
** always the row ydb_mappings_row_and_section_for_index gives, so while
** consolidated the row in the consolidated section. Not shown: NOTFOUND. */
int ydb_mappings_row_for_index(ydb_mappings *mappings, size_t index,
                               const char *group, size_t *out_row);
/* The row of `group`'s own window (range and reverse applied) showing view
** `index`, whether consolidated or not; outside the window: NOTFOUND. */
int ydb_mappings_window_row_for_index(ydb_mappings *mappings, size_t index,
                                      const char *group, size_t *out_row);

/* Where `group`'s window stands in the whole group, in display order:
** offset_from_beginning + length + offset_from_end == rows in the group. */
int ydb_mappings_range_position(ydb_mappings *mappings, const char *group,
                                size_t *out_offset_from_beginning,
                                size_t *out_offset_from_end,
                                size_t *out_length);

/* The table position nearest to `row` of `group` (to keep a selection after
** its row vanished); nothing shown: YDB_NOTFOUND. */
int ydb_mappings_nearest_index_path(ydb_mappings *mappings, size_t row,
                                    const char *group, size_t *out_section,
                                    size_t *out_row);

/*
** ydb_mappings_has_changes stores 1 when `list` touches any group of the
** mappings (a cheap check; it may say 1 for changes outside a range
** window, never 0 for a change the table shows). It does not move the
** mappings.
*/
int ydb_mappings_has_changes(ydb_mappings *mappings,
                             const ydb_notification_list *list,
                             int *out_flag);

/* ---------------------------------------------------------------------------
** Rows by table position (the view is the mappings' view, read in `txn`).
** Nothing shown there gives YDB_NOTFOUND with the outputs cleared.
** ------------------------------------------------------------------------ */

/* Collection and key at (section, row); both owned: free with ydb_free. */
int ydb_view_key_at_index_path(ydb_txn *txn, ydb_mappings *mappings,
                               size_t section, size_t row,
                               char **out_collection, char **out_key);
/* Object / metadata at (section, row): like ydb_txn_get_object/_metadata. */
int ydb_view_object_at_index_path(ydb_txn *txn, ydb_mappings *mappings,
                                  size_t section, size_t row,
                                  void **out_object, size_t *out_size);
int ydb_view_metadata_at_index_path(ydb_txn *txn, ydb_mappings *mappings,
                                    size_t section, size_t row,
                                    void **out_metadata, size_t *out_size);
/* Where row (collection, key) is shown: (section, row). */
int ydb_view_index_path_for_key(ydb_txn *txn, ydb_mappings *mappings,
                                const char *collection, const char *key,
                                size_t *out_section, size_t *out_row);

/* ===========================================================================
** CHANGESETS
**
** A changeset lists the section and row changes that turn the table a
** mappings showed at one snapshot into the table it shows at a later one.
** Apply it as a batch update: first section deletes and row deletes and
** moves-out at ORIGINAL index paths, then section inserts and row inserts
** and moves-in at FINAL index paths; reload updates at their original
** index paths. At most one row change per row. Rows of inserted and deleted
** sections are reported too.
**
**     ydb_notification_list *skipped;
**     ydb_changeset *cs;
**     ydb_connection_begin_long_lived_read(ui, &skipped);
**     if (ydb_changeset_new(m, skipped, &cs) == YDB_OK) {
**         ydb_changeset_row_change_count(cs, &n);
**         ... ydb_changeset_row_type(cs, i, &type) ...
**         ydb_changeset_free(cs);
**     }
**     ydb_notification_list_free(skipped);
** ======================================================================== */

typedef struct ydb_changeset ydb_changeset;

/* Section change types. */
#define YDB_SECTION_INSERT 1
#define YDB_SECTION_DELETE 2

/* Row change types (YapDatabaseViewChangeType's values). */
#define YDB_CHANGE_INSERT 1
#define YDB_CHANGE_DELETE 2
#define YDB_CHANGE_MOVE   3
#define YDB_CHANGE_UPDATE 4

/* Row change flags, or-ed (YapDatabaseViewChangesBitMask). */
#define YDB_CHANGED_OBJECT     1
#define YDB_CHANGED_METADATA   2
#define YDB_CHANGED_DEPENDENCY 4

/*
** ydb_changeset_new computes the changes for the notifications in `list`
** (oldest first, as from ydb_connection_begin_long_lived_read) and moves the
** mappings to the snapshot of the last one. The mappings must be at the
** snapshot just before the first notification; otherwise (never updated,
** older or newer, a gap in the list) it gives YDB_MISMATCH with a message
** and leaves the mappings unchanged. An empty list gives an empty
** changeset. *out_changeset is owned by the caller: free it with
** ydb_changeset_free().
*/
int ydb_changeset_new(ydb_mappings *mappings,
                      const ydb_notification_list *list,
                      ydb_changeset **out_changeset);

/*
** ydb_changeset_new_in_txn is ydb_changeset_new for dynamic groups whose
** filter and sort read rows: they get a read-only handle of `txn`, which
** must read the last notification's snapshot (a read transaction on the
** connection that just moved forward), else YDB_MISMATCH.
*/
int ydb_changeset_new_in_txn(ydb_mappings *mappings,
                             const ydb_notification_list *list, ydb_txn *txn,
                             ydb_changeset **out_changeset);

/* ydb_changeset_free frees a changeset. NULL is a harmless no-op; a handle
** of another type is left untouched and sets YDB_MISUSE (see ydb_errcode). */
void ydb_changeset_free(ydb_changeset *changeset);

/* ydb_changeset_is_empty stores 1 when the table does not change. */
int ydb_changeset_is_empty(const ydb_changeset *changeset, int *out_flag);

/*
** Section changes: deletes (ascending original index), then inserts
** (ascending final index). ydb_changeset_section_change stores the type
** (YDB_SECTION_*), the section index (original for a delete, final for an
** insert) and the group it shows (borrowed until ydb_changeset_free). Any
** of the out pointers may be NULL. An index >= the count gives
** YDB_INVALID_ARGUMENT.
*/
int ydb_changeset_section_change_count(const ydb_changeset *changeset,
                                       size_t *out_count);
int ydb_changeset_section_change(const ydb_changeset *changeset, size_t index,
                                 int *out_type, size_t *out_section,
                                 const char **out_group);

/*
** Row changes: deletes, inserts, moves, updates. Each accessor takes the
** change's position `index` in the changeset (>= the count gives
** YDB_INVALID_ARGUMENT). An answer that does not exist for this change
** gives YDB_NOTFOUND with outputs cleared:
**
**   _type                 YDB_CHANGE_*
**   _index_path           original (section, row): delete, move, update
**   _new_index_path       final (section, row): insert, move
**   _original_position    (section, row) where the row was shown at the
**                         start (also for updates); not shown: NOTFOUND
**   _final_position       the same at the end
**   _original_group       the group of the original section (borrowed)
**   _final_group          the group of the final section (borrowed)
**   _changes              YDB_CHANGED_* flags
**   _collection, _key     the row's collection and key (borrowed); NOTFOUND
**                         (NULL) for a row the commits did not touch (it
**                         entered or left a range window, moved for
**                         consolidation, or reloads for a dependency)
**
** Borrowed strings are valid until ydb_changeset_free().
*/
int ydb_changeset_row_change_count(const ydb_changeset *changeset,
                                   size_t *out_count);
int ydb_changeset_row_type(const ydb_changeset *changeset, size_t index,
                           int *out_type);
int ydb_changeset_row_index_path(const ydb_changeset *changeset, size_t index,
                                 size_t *out_section, size_t *out_row);
int ydb_changeset_row_new_index_path(const ydb_changeset *changeset,
                                     size_t index, size_t *out_section,
                                     size_t *out_row);
int ydb_changeset_row_original_position(const ydb_changeset *changeset,
                                        size_t index, size_t *out_section,
                                        size_t *out_row);
int ydb_changeset_row_final_position(const ydb_changeset *changeset,
                                     size_t index, size_t *out_section,
                                     size_t *out_row);
int ydb_changeset_row_original_group(const ydb_changeset *changeset,
                                     size_t index, const char **out_group);
int ydb_changeset_row_final_group(const ydb_changeset *changeset, size_t index,
                                  const char **out_group);
int ydb_changeset_row_changes(const ydb_changeset *changeset, size_t index,
                              unsigned int *out_flags);
int ydb_changeset_row_collection(const ydb_changeset *changeset, size_t index,
                                 const char **out_collection);
int ydb_changeset_row_key(const ydb_changeset *changeset, size_t index,
                          const char **out_key);

/*
** ydb_changeset_row reads every answer above for one row change in one
** call (what a binding uses: one call a change). An index path or
** position the change does not have is YDB_NO_INDEX in both its fields; a
** group, collection or key it does not have is NULL. Strings are borrowed
** until ydb_changeset_free(). On failure *out_change is cleared the same
** way, with type 0.
*/
#define YDB_NO_INDEX ((size_t)-1)

typedef struct ydb_row_change {
    int type;                              /* YDB_CHANGE_* */
    unsigned int changes;                  /* YDB_CHANGED_* flags */
    size_t section, row;                   /* _index_path */
    size_t new_section, new_row;           /* _new_index_path */
    size_t original_section, original_row; /* _original_position */
    size_t final_section, final_row;       /* _final_position */
    const char *original_group;
    const char *final_group;
    const char *collection;
    const char *key;
} ydb_row_change;

int ydb_changeset_row(const ydb_changeset *changeset, size_t index,
                      ydb_row_change *out_change);

/*
** The changeset as an ordered edit script: single steps for list toolkits
** that take one change at a time (Qt's begin/end*Rows, GTK's
** items-changed, RecyclerView's notifyItem*). Each step's indexes are valid
** against the table as it stands after the steps before it; applying every
** step in order to the old table gives the new one. The order:
**
**   1. row removals, bottom-up, at their original positions;
**   2. section inserts, ascending; each section is inserted EMPTY;
**   3. row inserts and moves, in ascending final position, each placed right
**      after the row that precedes it in the new table (so `row` may differ
**      from the final index while moved rows are still waiting); a move is
**      one step, and never leaves its row where it was;
**   4. section removals, bottom-up; a section is EMPTY when removed;
**   5. reloads, at final positions, ascending: updated rows, and moved rows
**      whose content changed or that were removed and set again.
**
** ydb_edit_step fields (an answer the step does not have is YDB_NO_INDEX,
** NULL or 0):
**
**   type                      YDB_STEP_*
**   changes                   YDB_CHANGED_* flags (object + metadata for
**                             inserts and most removes; the behaviour doc,
**                             "One change per row", has the exceptions)
**   section, row              where the step applies now; row is
**                             YDB_NO_INDEX for a section step; for a move,
**                             where the row is before it moves
**   to_section, to_row        a move: where the row goes, counted after it
**                             was taken out (Qt's beginMoveRows wants
**                             to_row + 1 when moving down within one section)
**   original_section/_row     removals and moves: the row's place in the
**                             old table
**   final_section/_row        inserts, moves, reloads: its place in the new
**                             table (read the row there through the
**                             mappings when collection/key are NULL)
**   group                     section steps: the group the section shows
**   collection, key           the row, when the changeset knows it
**   rowid                     row steps: the row's id (in the old table for
**                             a removal)
**
** Strings are borrowed until ydb_changeset_free(). An index >= the count
** gives YDB_INVALID_ARGUMENT and a cleared step (type 0).
*/
#define YDB_STEP_REMOVE_SECTION 1
#define YDB_STEP_INSERT_SECTION 2
#define YDB_STEP_REMOVE_ROW     3
#define YDB_STEP_INSERT_ROW     4
#define YDB_STEP_MOVE_ROW       5
#define YDB_STEP_RELOAD_ROW     6

typedef struct ydb_edit_step {
    int type;                              /* YDB_STEP_* */
    unsigned int changes;                  /* YDB_CHANGED_* flags */
    size_t section, row;
    size_t to_section, to_row;
    size_t original_section, original_row;
    size_t final_section, final_row;
    const char *group;
    const char *collection;
    const char *key;
    int64_t rowid;
} ydb_edit_step;

int ydb_changeset_step_count(const ydb_changeset *changeset, size_t *out_count);
int ydb_changeset_step(const ydb_changeset *changeset, size_t index,
                       ydb_edit_step *out_step);

/* ===========================================================================
** FULL-TEXT INDEXES
**
** A full-text index finds rows by the words in them, with SQLite's FTS5. One
** callback gives each row's text, column by column. Registered under a name
** with ydb_fts_index_register, the index is kept up to date by every
** read-write transaction, inside the same SQLite transaction as the rows
** (a rollback leaves no trace of it), and any transaction searches it by
** name: a read transaction as of its snapshot, a read-write one with its
** own writes. Views and full-text indexes share one namespace: registering
** a name the other kind holds gives YDB_INVALID_ARGUMENT.
** docs/full-text-index.md tells the rest.
**
**     static int note_text(void *ctx, ydb_txn *txn, const ydb_view_row *row,
**                          ydb_fts_columns *columns) {
**         const struct note *note = row->object;
**         (void)ctx; (void)txn;
**         ydb_fts_columns_set(columns, 0, note->title, strlen(note->title));
**         return ydb_fts_columns_set(columns, 1, note->body, strlen(note->body));
**     }
**     static int print_match(void *ctx, const char *collection, const char *key,
**                            double rank) {
**         (void)ctx;
**         printf("%s/%s %f\n", collection, key, rank);
**         return 0;                                  -- nonzero stops
**     }
**     static const char *const note_columns[] = { "title", "body" };
**     ydb_fts_index_definition def = YDB_FTS_INDEX_DEFINITION_INIT;
**     def.columns = note_columns;   def.column_count = 2;
**     def.extract = note_text;      def.extract_flavour = YDB_FLAVOUR_OBJECT;
**     def.version_tag = "1";
**     ydb_fts_index_register(db, "notes", &def, NULL, NULL, NULL);
**     ...
**     ydb_txn_search(txn, "notes", "swift AND title: sqlite", 20, print_match, NULL);
**
** Queries.  `query` is an FTS5 MATCH expression: words, "phrases", AND, OR,
**   NOT, prefix*, column filters (title: word), NEAR(a b, 5). One FTS5
**   cannot parse (or naming a column the index lacks) gives
**   YDB_INVALID_ARGUMENT with FTS5's reason; an empty or blank query matches
**   nothing. A name that is not a full-text index registered at the
**   transaction's snapshot gives YDB_NOTFOUND. As views, an index cannot be
**   searched from inside a view or extract callback (YDB_MISUSE).
**
** Ranks.  Each match's rank is FTS5's bm25() score: LOWER IS BETTER (the
**   scores are negative), and results come best first, equal ranks in the
**   order the rows were first stored.
**
** Stored.  An index is always stored in the database. Registering it again
**   with the same version tag, columns and tokenizer calls nothing --
**   unless it is stale: rows changed while it was not registered, as for
**   a view ("Stale views" above). Other SQLite clients may read its table
**   but must never write it.
** ======================================================================== */

/*
** Where an extract callback writes a row's text. Opaque; valid only during
** the callback that received it.
*/
typedef struct ydb_fts_columns ydb_fts_columns;

/*
** ydb_fts_columns_set gives column `column` (its position in the
** definition's `columns`, from 0) the text of the row being indexed:
** `length` bytes of UTF-8 at `text`, copied (no NUL is needed at the end;
** NULL with length 0 is the empty text). The last call for a column wins;
** a column never set is empty, and a callback that sets none leaves the row
** out of the index. A column past the last, text that is not valid UTF-8 or
** holds a NUL byte, or NULL text with a nonzero length gives
** YDB_INVALID_ARGUMENT and makes the callback fail, whatever it returns. A
** handle used after its callback returned, or on another thread, gives
** YDB_MISUSE.
*/
int ydb_fts_columns_set(ydb_fts_columns *columns, size_t column,
                        const char *text, size_t length);

/*
** The extract callback: give the row's text with ydb_fts_columns_set (or
** none, to leave the row out), return 0; nonzero = failure: the write or
** registration that ran it fails with YDB_CALLBACK_FAILED, "full-text index
** 'NAME': extract callback failed ...", and poisons its transaction, as a
** view callback's failure does. It runs when a row of an allowed collection
** is inserted and, as the invoke options say, when one changes. `txn` and
** `row` are as for a view's grouping callback ("Reading other rows").
*/
typedef int (*ydb_fts_extract_fn)(void *ctx, ydb_txn *txn,
                                  const ydb_view_row *row,
                                  ydb_fts_columns *columns);

/*
** A full-text index's definition, read only during the call it is passed to
** (strings and arrays are copied). Start from YDB_FTS_INDEX_DEFINITION_INIT
** (or ydb_fts_index_definition_init()) and set the fields:
**
**   struct_size         sizeof(ydb_fts_index_definition), set by the macro
**                       and the function (see "Structs" at the top); at
**                       least YDB_FTS_INDEX_DEFINITION_MIN_SIZE
**   columns             column_count FTS5 column names, at least one: ASCII
**                       letters, digits and '_', not starting with a digit,
**                       distinct ignoring case; rank, rowid, oid, _rowid_
**                       and names starting with ydb_ are reserved
**   extract             the extract callback (required)
**   extract_flavour     YDB_FLAVOUR_* (default YDB_FLAVOUR_ROW)
**   extract_invoke      YDB_INVOKE_* bits (default YDB_INVOKE_DEFAULT)
**   version_tag         change it whenever the callback changes what it
**                       gives: an index stored with the same tag is used as
**                       it is, a different tag rebuilds it (NULL = "")
**   allowed_collections when not NULL, an array of
**                       allowed_collection_count collection names: only rows
**                       of these collections are ever indexed
**   tokenizer           FTS5's tokenize option, e.g. "porter unicode61" or
**                       "unicode61 tokenchars '-_'" (NULL: "unicode61
**                       remove_diacritics 2"): printable ASCII without '"'
**                       or ';'. One FTS5 does not know gives
**                       YDB_INVALID_ARGUMENT when registering.
*/
typedef struct ydb_fts_index_definition {
    size_t struct_size;
    const char *const *columns;
    size_t column_count;
    ydb_fts_extract_fn extract;
    int extract_flavour;
    unsigned int extract_invoke;
    const char *version_tag;
    const char *const *allowed_collections;
    size_t allowed_collection_count;
    const char *tokenizer;
} ydb_fts_index_definition;

#define YDB_FTS_INDEX_DEFINITION_INIT                             \
    { sizeof(ydb_fts_index_definition), NULL, 0, NULL,            \
      YDB_FLAVOUR_ROW, YDB_INVOKE_DEFAULT, NULL, NULL, 0, NULL }

/* The smallest struct_size accepted: ydb_fts_index_definition's first
** version, the members up to and including tokenizer. */
#define YDB_FTS_INDEX_DEFINITION_MIN_SIZE                         \
    (offsetof(ydb_fts_index_definition, tokenizer) + sizeof(const char *))

/* ydb_fts_index_definition_init fills *definition with the defaults above,
** struct_size included; like ydb_view_definition_init it writes the whole
** struct as the LIBRARY knows it. */
int ydb_fts_index_definition_init(ydb_fts_index_definition *definition);

/*
** ydb_fts_index_register registers a full-text index under `name` (any
** UTF-8 text no view holds), in a read-write transaction of its own,
** waiting while another connection writes, and stores in *out_outcome (may
** be NULL; 0 on failure) how it was built: YDB_VIEW_BUILT (new: every
** allowed row indexed), YDB_VIEW_LOADED (stored, or registered, with the
** same version tag, columns and tokenizer, and fresh: no callback ran),
** YDB_VIEW_REBUILT_NEW_TAG (stored with another tag, columns or tokenizer)
** or YDB_VIEW_REBUILT_STALE (rows changed while it was not registered).
** Registering a name again replaces its definition.
**
** ctx and destroy: as for ydb_view_register -- destroy is called with ctx
** exactly once, when the index stops using the callback
** (ydb_fts_index_unregister, a later registration of the name,
** ydb_database_close), or before this returns when it fails. A failing
** callback gives YDB_CALLBACK_FAILED and registers nothing. A read-write
** transaction open on this thread gives YDB_MISUSE.
*/
int ydb_fts_index_register(ydb_database *db, const char *name,
                           const ydb_fts_index_definition *definition,
                           void *ctx, ydb_destructor_fn destroy,
                           int *out_outcome);

/*
** ydb_fts_index_unregister unregisters the index and drops its tables (also
** when it is stored but not registered); its destructor runs. The search
** views that read it (and the views filtered over them) are unregistered in
** the same transaction. A name that is not a full-text index is left alone
** (YDB_OK).
*/
int ydb_fts_index_unregister(ydb_database *db, const char *name);

/*
** ydb_fts_index_enumerate_registered calls `callback` with the name of each
** full-text index registered as of the latest snapshot, in ascending (UTF-8
** byte) order.
*/
int ydb_fts_index_enumerate_registered(ydb_database *db, ydb_name_fn callback,
                                       void *ctx);

/*
** ydb_txn_search calls `callback` with each row of index `index` matching
** `query` (see "Queries"), best first (see "Ranks"), at most `limit` of
** them (0: all): its collection and key, borrowed for the call, and its
** rank. Return 0 to go on, nonzero to stop. The callback runs as an
** enumeration's body (see "Callbacks and re-entrancy").
*/
typedef int (*ydb_fts_match_fn)(void *ctx, const char *collection,
                                const char *key, double rank);
int ydb_txn_search(ydb_txn *txn, const char *index, const char *query,
                   size_t limit, ydb_fts_match_fn callback, void *ctx);

/*
** ydb_txn_search_snippet stores in *out_snippet (owned: ydb_free) FTS5's
** snippet() of row (collection, key) for `query`: a few words of `column`
** (NULL: the column that matches best) around the words found, each found
** word between `before` and `after`, `ellipsis` where text is left out, at
** most `tokens` words (1 to 64, else YDB_INVALID_ARGUMENT). NULL `before`,
** `after` or `ellipsis` is the empty string. A row that does not exist or
** does not match gives YDB_NOTFOUND (and NULL); a column the index lacks
** gives YDB_INVALID_ARGUMENT.
*/
int ydb_txn_search_snippet(ydb_txn *txn, const char *index, const char *query,
                           const char *collection, const char *key,
                           const char *column, const char *before,
                           const char *after, const char *ellipsis,
                           int tokens, char **out_snippet);

/* ===========================================================================
** SEARCH VIEWS
**
** A search view shows the rows of a parent view that a full-text query
** matches in a full-text index, in the parent's groups and order
** (YapDatabase's search-results view). It is read like any view
** (ydb_view_*), and mappings and changesets follow it like any view: a new
** query is a commit whose changeset inserts exactly the rows entering the
** results and deletes those leaving them, so a list animates as the user
** types. A commit that changes a row's text moves the row in or out of the
** results in that commit's changeset, and a re-sort of the parent
** (ydb_view_set_definition) moves the results' rows too.
**
**     static void typed(void *ctx, int status, int applied, const char *message) {
**         if (status != YDB_OK) fprintf(stderr, "search: %s\n", message);
**         else if (applied) wake_the_ui(ctx);    -- the results were committed
**     }
**     ydb_search_view_register(db, "found", "byDate", "notes", NULL, NULL);
**     ...
**     ydb_search_view_search(db, "found", "swi*", typed, ui);   -- per keystroke
**
** Queries.  As for ydb_txn_search ("Queries" above): FTS5 MATCH
**   expressions, an empty or blank query matching nothing, and one FTS5
**   cannot parse giving YDB_INVALID_ARGUMENT with FTS5's reason.
**
** Not stored.  The results depend on the query, so a search view is built
**   from the index at each registration, with its first query, whether or
**   not its parent is persistent. Unregister it with ydb_view_unregister
**   (unregistering its parent, or its index, unregisters it too).
** ======================================================================== */

/*
** ydb_search_view_register registers search view `name` over the registered
** view `parent` and the registered full-text index `index`, with `query` as
** its first query (NULL: "", no rows), in a read-write transaction of its
** own, waiting while another connection writes, and stores in *out_outcome
** (may be NULL; 0 on failure) YDB_VIEW_BUILT. Registering a name again
** replaces its view. The commit's notification carries the view's rows, so
** mappings over it get a changeset.
**
** A parent or index that is not registered gives YDB_NOTFOUND; a parent
** that is `name` itself, or filtered over it, gives YDB_INVALID_ARGUMENT,
** and so does a name a full-text index holds, or a malformed first query. A
** read-write transaction open on this thread gives YDB_MISUSE.
*/
int ydb_search_view_register(ydb_database *db, const char *name,
                             const char *parent, const char *index,
                             const char *query, int *out_outcome);

/*
** ydb_search_view_register_by_rank registers a search view as
** ydb_search_view_register does, but orders each group's rows by the
** query's bm25 rank, best first (then by collection and key), instead of in
** the parent's order. A row is ranked when it is placed: when a query is
** set (every match is placed again, and the changeset moves the rows whose
** order changed), or when a commit changes it. bm25 weighs words by how
** rare they are among all rows, so the ranks of rows placed earlier drift
** as others change; they are not ranked again until the query is set.
*/
int ydb_search_view_register_by_rank(ydb_database *db, const char *name,
                                     const char *parent, const char *index,
                                     const char *query, int *out_outcome);

/*
** ydb_search_view_set_query sets the query of search view `name` inside
** read-write transaction `txn`: one FTS5 query, whose matches are compared
** with the rows shown, so only the rows entering or leaving the results are
** inserted or deleted (and views filtered over this one follow). The same
** query again changes nothing.
**
** What the engine refuses fails the transaction, as a failing callback
** does -- a view not registered (YDB_NOTFOUND), one that is not a search
** view (YDB_MISUSE), a malformed query (YDB_INVALID_ARGUMENT): its commit
** rolls back and returns that status ("transaction rolled back: ..."), and
** the results stay as they were. Refused before and leaving the
** transaction usable: a NULL, stale or read transaction, or a callback's
** (YDB_MISUSE), and a NULL or invalid UTF-8 name or query
** (YDB_INVALID_ARGUMENT).
*/
int ydb_search_view_set_query(ydb_txn *txn, const char *name,
                              const char *query);

/*
** ydb_search_view_query stores the query search view `name` shows the
** results of as of `txn` (owned: ydb_free). A name that is not a search
** view registered at the transaction's snapshot gives YDB_NOTFOUND, with
** *out_query NULL.
*/
int ydb_search_view_query(ydb_txn *txn, const char *name, char **out_query);

/*
** ydb_search_view_search sets the query of search view `name` in the
** background and returns at once, so that typing never waits for a search.
** For each search view only the newest query runs: one still waiting when a
** newer one arrives is superseded and never runs. A thread of the
** library's own reads the matches without holding the write lock, then
** applies them in a short read-write transaction (reading them again only
** if a commit came in between), whose notification reaches observers,
** mappings and changesets like any commit's.
**
**   completion  may be NULL. Called exactly once, as
**               completion(ctx, status, applied, message): status YDB_OK
**               and applied 1 once the results are committed, or applied 0
**               when a newer query for the view superseded this one; or the
**               failure -- its status (YDB_NOTFOUND: `name` is not a search
**               view registered when the search runs; YDB_INVALID_ARGUMENT:
**               a malformed query; YDB_CLOSED: the database closed first;
**               ...), applied 0 and its message (borrowed, valid during the
**               call; NULL on success). ydb_errmsg() does not hold that
**               message: the completion runs on another thread.
**   ctx         passed back to the completion; yours: free it there.
**
** The completion runs on the search's thread -- never inside this call,
** nor inside the call whose newer query superseded it -- one at a time and
** in the order the queries of a view were given, never inside a lock of the
** library: it may call any function, a new search included. (Only when the
** system cannot start a thread at all does the calling thread complete the
** waiting queries before this returns: YDB_ERROR, or applied 0 for those
** superseded.)
**
** When this fails nothing was queued and no completion ever comes: a NULL
** or stale database, a closed one included (YDB_MISUSE), a NULL or invalid
** UTF-8 name or query (YDB_INVALID_ARGUMENT), a database being closed by
** another thread (YDB_CLOSED). It may be called with a read-write
** transaction open: the search waits for it on its own thread.
**
** Closing.  ydb_database_close completes every query still waiting with
** YDB_CLOSED (one already applying either commits first or fails with
** YDB_CLOSED) and returns once the completions have returned -- unless it
** is called with a read-write transaction open on the calling thread, or
** from a completion: it then returns at once, and the completions still
** due follow once that completion has returned.
*/
typedef void (*ydb_search_done_fn)(void *ctx, int status, int applied,
                                   const char *message);

int ydb_search_view_search(ydb_database *db, const char *name,
                           const char *query, ydb_search_done_fn completion,
                           void *ctx);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* YDBVIEW_H */
