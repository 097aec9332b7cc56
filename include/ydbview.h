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
** Handles.  ydb_database, ydb_connection, ydb_txn, ydb_notification and
**   ydb_notification_list are opaque. Every handle is checked on entry:
**   NULL gives YDB_MISUSE (and is a harmless no-op for destructors, which
**   return YDB_OK), and so does a handle that was already closed, freed or
**   ended, or a pointer the library never handed out. (Handles are tokens
**   looked up in a registry and never reused, so stale handles are detected
**   rather than dereferenced.)
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
**   otherwise; larger gives YDB_SQLITE). A NULL pointer with size 0 is the
**   empty blob; a NULL pointer with a nonzero size is YDB_INVALID_ARGUMENT.
**   Where metadata is optional, a NULL pointer means "no metadata", which is
**   different from empty metadata (non-NULL pointer, size 0).
**
** Callbacks.  A callback is a function pointer plus a `void *ctx` passed
**   back to it as its first argument. Enumeration callbacks return 0 to go
**   on and nonzero to stop; stopping early is not an error (the enumerating
**   function returns YDB_OK). A callback must not call ydb_ functions on
**   the connection (or a transaction of it) that is running the enumeration:
**   such calls return YDB_MISUSE. Where a callback comes with a destructor,
**   the destructor is called exactly once -- also when registration fails.
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
** Future.  Views (ydb_view_*), mappings (ydb_mappings_*) and changesets
**   (ydb_changeset_*) will join this header; existing signatures never
**   change (a new behaviour gets a new _v2 function).
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
** The returned string is static: borrowed, valid forever.
*/
#define YDBVIEW_VERSION        "0.1.0"
#define YDBVIEW_VERSION_NUMBER 1000

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
#define YDB_BUSY             6  /* The database file is locked */
#define YDB_SQLITE           7  /* SQLite reported an error */
#define YDB_CALLBACK_FAILED  8  /* A user callback reported failure */
#define YDB_MISMATCH         9  /* Mappings and notifications at different
                                   snapshots (used by changesets) */
#define YDB_CORRUPT         10  /* The database file is damaged */

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
const char *ydb_errmsg(void);
const char *ydb_errstr(int status);

/*
** ydb_free(p) releases a buffer the library returned as "owned by the
** caller, free with ydb_free" (object and metadata bytes). NULL is a no-op.
** Never pass it a handle or a borrowed pointer.
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
** *out_db is owned by the caller: close it with ydb_database_close().
** On failure *out_db is set to NULL.
*/
int ydb_database_open(const char *path, ydb_database **out_db);

/*
** ydb_database_close closes the database and frees the handle. Every commit
** observer still registered is removed (its destructor runs), and every
** transaction still open on its connections is ended (read-write ones roll
** back). Connection and transaction handles stay valid and must still be
** closed/ended, but every further operation through them fails: YDB_CLOSED
** on a connection, YDB_MISUSE on an ended transaction. NULL is a harmless
** no-op (YDB_OK); a stale handle gives YDB_MISUSE.
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
** that changed something; a new database is at snapshot 0 or more.
*/
int ydb_database_snapshot(ydb_database *db, uint64_t *out_snapshot);

/* ---------------------------------------------------------------------------
** Commit observers
**
** An observer is called once per read-write commit that changed something,
** after the commit is durable, on the thread that committed, with the
** commit's notification (borrowed: valid only during the call; copy it with
** ydb_notification_copy() to keep it). Observers registered on one database
** see every commit of every connection of it, in snapshot order.
**
** An observer may read through any connection but the one that committed
** (which is still busy: YDB_MISUSE). It must not write: the commit still
** holds the database's write lock, so ydb_txn_begin_read_write inside an
** observer returns YDB_MISUSE. It cannot fail: it returns nothing.
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
** while another connection writes. *out_txn is owned by the caller: finish
** it with ydb_txn_commit() or ydb_txn_rollback(). On failure it is NULL.
** A connection in a long-lived read transaction gives YDB_MISUSE.
*/
int ydb_txn_begin_read_write(ydb_connection *conn, ydb_txn **out_txn);

/*
** ydb_txn_commit commits a read-write transaction and frees the handle --
** whatever the result: when the commit fails, its changes are rolled back
** (nothing is half-applied) and the error is returned. Observers are called
** before it returns. On a read transaction it returns YDB_MISUSE and
** leaves the transaction (and handle) as they were.
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
** NULL is a harmless no-op. Never pass it a borrowed notification. */
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
** lends out. NULL is a harmless no-op. */
void ydb_notification_list_free(ydb_notification_list *list);

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

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* YDBVIEW_H */
