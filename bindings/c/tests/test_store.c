/*
** test_store.c -- every store operation through the C ABI, the commit
** notifications they produce, and commit observers.
*/
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <unistd.h> /* rmdir */

#include "check.h"

/* ---- enumeration helpers ---- */

typedef struct {
    char names[16][64];
    int count;
    int stop_after; /* 0 = never stop */
} name_list;

static int collect_name(void *ctx, const char *name) {
    name_list *list = (name_list *)ctx;
    if (list->count < 16) {
        strncpy(list->names[list->count], name, 63);
        list->names[list->count][63] = '\0';
    }
    list->count++;
    return list->stop_after != 0 && list->count >= list->stop_after;
}

typedef struct {
    int rows;
    int with_metadata;
    size_t object_bytes;
} row_tally;

static int tally_row(void *ctx, const char *key, const void *object,
                     size_t object_size, const void *metadata,
                     size_t metadata_size) {
    row_tally *tally = (row_tally *)ctx;
    (void)key;
    (void)object;
    (void)metadata_size;
    tally->rows++;
    tally->object_bytes += object_size;
    if (metadata != NULL) tally->with_metadata++;
    return 0;
}

typedef struct {
    char collection[32][64];
    char key[32][64];
    unsigned int flags[32];
    int count;
} change_list;

static int collect_change(void *ctx, const char *collection, const char *key,
                          unsigned int flags) {
    change_list *list = (change_list *)ctx;
    if (list->count < 32) {
        strncpy(list->collection[list->count], collection, 63);
        list->collection[list->count][63] = '\0';
        strncpy(list->key[list->count], key, 63);
        list->key[list->count][63] = '\0';
        list->flags[list->count] = flags;
    }
    list->count++;
    return 0;
}

/* Flags of (collection, key) in a change list, or -1 when not listed. */
static int flags_of(const change_list *list, const char *collection,
                    const char *key) {
    int i;
    for (i = 0; i < list->count && i < 32; i++) {
        if (strcmp(list->collection[i], collection) == 0 &&
            strcmp(list->key[i], key) == 0)
            return (int)list->flags[i];
    }
    return -1;
}

/* ---- commit observer used by the tests ---- */

typedef struct {
    int calls;
    int destroyed;
    uint64_t last_snapshot;
    ydb_notification *kept; /* copy of the last notification */
} observer_state;

static void observe(void *ctx, const ydb_notification *notification) {
    observer_state *state = (observer_state *)ctx;
    state->calls++;
    ydb_notification_snapshot(notification, &state->last_snapshot);
    ydb_notification_free(state->kept);
    state->kept = NULL;
    ydb_notification_copy(notification, &state->kept);
}

static void observer_destroyed(void *ctx) {
    ((observer_state *)ctx)->destroyed++;
}

/* ---- tests ---- */

static void test_version(void) {
    CHECK(strcmp(ydb_libversion(), YDBVIEW_VERSION) == 0);
    CHECK(ydb_libversion_number() == YDBVIEW_VERSION_NUMBER);
    CHECK(strcmp(ydb_errstr(YDB_OK), "not an error") == 0);
    CHECK(strcmp(ydb_errstr(12345), "unknown error") == 0);
    CHECK(ydb_errstr(YDB_MISUSE) != NULL);
}

static void test_open_and_path(void) {
    ydb_database *db = NULL;
    const char *path = NULL;
    uint64_t snapshot = 99;
    ydb_database *none = (ydb_database *)&none;
    char file[] = "/tmp/ydbview-test-XXXXXX";
    char db_path[64];
    int fd = mkstemp(file);

    CHECK_RC(ydb_database_open("", &none), YDB_INVALID_ARGUMENT);
    CHECK(none == NULL);
    /* An unopenable path fails cleanly: the engine opens the file itself
    ** (to lock it) before SQLite does, and reports the system's reason. */
    {
        int rc = ydb_database_open("/nonexistent/dir/x.sqlite", &none);
        CHECK_RC(rc, YDB_CANTOPEN);
        CHECK(strstr(ydb_errmsg(), "No such file or directory") != NULL);
        CHECK(none == NULL);
        CHECK(strstr(ydb_errmsg(), "/nonexistent/dir/x.sqlite") != NULL);
    }
    CHECK_OK(ydb_database_open(NULL, &db));
    CHECK(db != NULL);
    CHECK_OK(ydb_database_path(db, &path));
    CHECK(path != NULL && strlen(path) > 0);
    CHECK_OK(ydb_database_snapshot(db, &snapshot));
    CHECK_OK(ydb_database_close(db));

    /* A named file keeps its data across close/open. */
    if (fd >= 0) {
        ydb_connection *conn = NULL;
        remove(file);
        snprintf(db_path, sizeof db_path, "%s.sqlite", file);
        REQUIRE_OK(ydb_database_open(db_path, &db));
        CHECK_OK(ydb_database_path(db, &path));
        CHECK(path != NULL && strstr(path, "ydbview-test-") != NULL);
        REQUIRE_OK(ydb_connection_open(db, &conn));
        CHECK_OK(put(conn, "c", "k", "persisted", NULL));
        CHECK_OK(ydb_connection_close(conn));
        CHECK_OK(ydb_database_close(db));

        REQUIRE_OK(ydb_database_open(db_path, &db));
        REQUIRE_OK(ydb_connection_open(db, &conn));
        CHECK(reads_as(conn, "c", "k", "persisted"));
        CHECK_OK(ydb_connection_close(conn));
        CHECK_OK(ydb_database_close(db));
        remove(db_path);
    }
}

/* Shared mode's options: checked like every struct the caller fills, the
** two modes refuse each other, and two shared handles see each other's
** commits. */
static void test_open_with_options(void) {
    ydb_database_options options = YDB_DATABASE_OPTIONS_INIT;
    ydb_database *db = NULL, *second = NULL, *none = (ydb_database *)&none;
    ydb_connection *writer = NULL, *reader = NULL;
    char dir[] = "/tmp/ydbview-test-XXXXXX", db_path[96];
    uint64_t limit = 0;
    int multi = -1;

    if (mkdtemp(dir) == NULL) { perror("mkdtemp"); exit(1); }
    snprintf(db_path, sizeof db_path, "%s/shared.sqlite", dir);

    options.struct_size = 0;
    CHECK_RC(ydb_database_open_with_options(db_path, &options, &none), YDB_INVALID_ARGUMENT);
    CHECK(none == NULL && strstr(ydb_errmsg(), "YDB_DATABASE_OPTIONS_INIT") != NULL);
    options.struct_size = sizeof options;
    options.flags = 0x80;
    CHECK_RC(ydb_database_open_with_options(db_path, &options, &none), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "unknown") != NULL);

    /* NULL options: exclusive, as ydb_database_open. */
    REQUIRE_OK(ydb_database_open_with_options(db_path, NULL, &db));
    CHECK_OK(ydb_database_is_multi_process(db, &multi));
    CHECK(multi == 0);
    options.flags = YDB_OPEN_MULTI_PROCESS;
    CHECK_RC(ydb_database_open_with_options(db_path, &options, &none), YDB_BUSY);
    CHECK(strstr(ydb_errmsg(), "exclusive mode") != NULL);
    CHECK_OK(ydb_database_close(db));

    REQUIRE_OK(ydb_database_open_with_options(db_path, &options, &db));
    REQUIRE_OK(ydb_database_open_with_options(db_path, &options, &second));
    CHECK_RC(ydb_database_open(db_path, &none), YDB_BUSY);
    CHECK_OK(ydb_database_is_multi_process(db, &multi));
    CHECK(multi == 1);
    CHECK_OK(ydb_database_commit_log_limit(db, &limit));
    CHECK(limit == 10000);
    CHECK_RC(ydb_database_set_commit_log_limit(db, 0), YDB_INVALID_ARGUMENT);
    CHECK_OK(ydb_database_set_commit_log_limit(db, 50));
    CHECK_OK(ydb_database_commit_log_limit(db, &limit));
    CHECK(limit == 50);

    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(second, &reader));
    CHECK_OK(put(writer, "c", "k", "from the first", NULL));
    CHECK(reads_as(reader, "c", "k", "from the first"));
    {
        uint64_t mine = 0, theirs = 1;
        CHECK_OK(ydb_database_snapshot(db, &mine));
        CHECK_OK(put(reader, "c", "k2", "from the second", NULL));
        CHECK(reads_as(writer, "c", "k2", "from the second"));
        CHECK_OK(ydb_database_snapshot(second, &theirs));
        CHECK(theirs == mine + 1);
    }
    CHECK_OK(ydb_connection_close(writer));
    CHECK_OK(ydb_connection_close(reader));
    CHECK_OK(ydb_database_close(second));
    CHECK_OK(ydb_database_close(db));
    {
        const char *suffixes[] = {"", "-wal", "-shm", "-ydbview"};
        char name[128];
        size_t index;
        for (index = 0; index < sizeof suffixes / sizeof suffixes[0]; index++) {
            snprintf(name, sizeof name, "%s%s", db_path, suffixes[index]);
            remove(name);
        }
        rmdir(dir);
    }
}

static void test_set_get(ydb_connection *conn) {
    ydb_txn *txn = NULL;
    void *object = NULL, *metadata = NULL;
    size_t object_size = 0, metadata_size = 0;
    int exists = -1, flag = -1;
    uint64_t before = 0, after = 0, txn_snapshot = 0;

    REQUIRE_OK(ydb_connection_snapshot(conn, &before));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_is_read_write(txn, &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_txn_set_object(txn, "books", "b1", "dune", 4, "meta1", 5));
    CHECK_OK(ydb_txn_set_object(txn, "books", "b2", "emma", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "empty", NULL, 0, "", 0));
    CHECK_OK(ydb_txn_set_object(txn, "films", "f1", "alien", 5, NULL, 0));
    /* The transaction sees its own writes. */
    CHECK(object_is(txn, "books", "b1", "dune"));
    CHECK_OK(ydb_txn_commit(txn));

    CHECK_OK(ydb_connection_snapshot(conn, &after));
    CHECK(after == before + 1);

    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_txn_is_read_write(txn, &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_txn_snapshot(txn, &txn_snapshot));
    CHECK(txn_snapshot == after);

    CHECK(object_is(txn, "books", "b1", "dune"));
    CHECK_OK(ydb_txn_get_metadata(txn, "books", "b1", &metadata,
                                  &metadata_size));
    CHECK(metadata_size == 5 && memcmp(metadata, "meta1", 5) == 0);
    ydb_free(metadata);

    /* No metadata vs empty metadata. */
    CHECK_RC(ydb_txn_get_metadata(txn, "books", "b2", &metadata,
                                  &metadata_size), YDB_NOTFOUND);
    CHECK(metadata == NULL && metadata_size == 0);
    CHECK_OK(ydb_txn_get_row(txn, "books", "b2", &object, &object_size,
                             &metadata, &metadata_size));
    CHECK(object_size == 4 && memcmp(object, "emma", 4) == 0);
    CHECK(metadata == NULL && metadata_size == 0);
    ydb_free(object);
    CHECK_OK(ydb_txn_get_row(txn, "books", "empty", &object, &object_size,
                             &metadata, &metadata_size));
    CHECK(object != NULL && object_size == 0);
    CHECK(metadata != NULL && metadata_size == 0);
    ydb_free(object);
    ydb_free(metadata);

    /* Metadata outputs are optional. */
    CHECK_OK(ydb_txn_get_row(txn, "books", "b1", &object, &object_size, NULL,
                             NULL));
    CHECK(object_size == 4);
    ydb_free(object);

    /* A rowid hint never changes the answer: right (one of the small ids
    ** is each row's), wrong, stale or absent, each read is ydb_txn_get_row's. */
    {
        const char *hinted_keys[] = {"b1", "b2", "empty", "nope"};
        const int64_t hints[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, -1, INT64_MAX};
        for (size_t k = 0; k < sizeof hinted_keys / sizeof *hinted_keys; k++) {
            void *want_object = NULL, *want_metadata = NULL;
            size_t want_object_size = 0, want_metadata_size = 0;
            int want = ydb_txn_get_row(txn, "books", hinted_keys[k], &want_object, &want_object_size,
                                       &want_metadata, &want_metadata_size);
            for (size_t h = 0; h < sizeof hints / sizeof *hints; h++) {
                void *got_object = NULL, *got_metadata = NULL;
                size_t got_object_size = 0, got_metadata_size = 0;
                int got = ydb_txn_get_row_hinted(txn, "books", hinted_keys[k], hints[h], &got_object,
                                                 &got_object_size, &got_metadata, &got_metadata_size);
                CHECK(got == want);
                CHECK(got_object_size == want_object_size && (got_object == NULL) == (want_object == NULL));
                CHECK(got_object == NULL || memcmp(got_object, want_object, want_object_size) == 0);
                CHECK(got_metadata_size == want_metadata_size && (got_metadata == NULL) == (want_metadata == NULL));
                CHECK(got_metadata == NULL || memcmp(got_metadata, want_metadata, want_metadata_size) == 0);
                ydb_free(got_object);
                ydb_free(got_metadata);
            }
            ydb_free(want_object);
            ydb_free(want_metadata);
        }
        CHECK_RC(ydb_txn_get_row_hinted(txn, NULL, "b1", 1, &object, &object_size, NULL, NULL), YDB_INVALID_ARGUMENT);
        CHECK_RC(ydb_txn_get_row_hinted(NULL, "books", "b1", 1, &object, &object_size, NULL, NULL), YDB_MISUSE);
    }

    /* Missing rows. */
    object = (void *)&exists;
    CHECK_RC(ydb_txn_get_object(txn, "books", "nope", &object, &object_size),
             YDB_NOTFOUND);
    CHECK(object == NULL && object_size == 0);
    CHECK(ydb_errcode() == YDB_NOTFOUND);
    CHECK_RC(ydb_txn_get_row(txn, "nope", "b1", &object, &object_size,
                             &metadata, &metadata_size), YDB_NOTFOUND);
    CHECK_OK(ydb_txn_exists(txn, "books", "b1", &exists));
    CHECK(exists == 1);
    CHECK(ydb_errcode() == YDB_OK);
    CHECK_OK(ydb_txn_exists(txn, "books", "nope", &exists));
    CHECK(exists == 0);
    CHECK_OK(ydb_txn_end(txn));
}

static void test_counts_and_enumeration(ydb_connection *conn) {
    ydb_txn *txn = NULL;
    size_t count = 0;
    name_list names;
    row_tally tally;

    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_txn_count(txn, "books", &count));
    CHECK(count == 3);
    CHECK_OK(ydb_txn_count(txn, "films", &count));
    CHECK(count == 1);
    CHECK_OK(ydb_txn_count(txn, "none", &count));
    CHECK(count == 0);
    CHECK_OK(ydb_txn_count_all(txn, &count));
    CHECK(count == 4);

    memset(&names, 0, sizeof names);
    CHECK_OK(ydb_txn_enumerate_collections(txn, collect_name, &names));
    CHECK(names.count == 2);
    CHECK(strcmp(names.names[0], "books") == 0);
    CHECK(strcmp(names.names[1], "films") == 0);

    memset(&names, 0, sizeof names);
    CHECK_OK(ydb_txn_enumerate_keys(txn, "books", collect_name, &names));
    CHECK(names.count == 3);

    /* Returning nonzero stops early, and that is not an error. */
    memset(&names, 0, sizeof names);
    names.stop_after = 1;
    CHECK_OK(ydb_txn_enumerate_keys(txn, "books", collect_name, &names));
    CHECK(names.count == 1);

    memset(&names, 0, sizeof names);
    CHECK_OK(ydb_txn_enumerate_keys(txn, "none", collect_name, &names));
    CHECK(names.count == 0);

    memset(&tally, 0, sizeof tally);
    CHECK_OK(ydb_txn_enumerate_rows(txn, "books", tally_row, &tally));
    CHECK(tally.rows == 3);
    CHECK(tally.with_metadata == 2); /* b1 and "empty" (empty metadata) */
    CHECK(tally.object_bytes == 8);
    CHECK_OK(ydb_txn_end(txn));
}

static void test_replace_touch_remove(ydb_database *db, ydb_connection *conn) {
    ydb_txn *txn = NULL;
    void *metadata = NULL;
    size_t size = 0, count = 0;
    observer_state state;
    change_list changes;
    uint64_t token = 0, snapshot = 0;
    const char *keys[3] = {"r1", "r3", "not-there"};

    memset(&state, 0, sizeof state);
    REQUIRE_OK(ydb_database_add_commit_observer(db, observe, &state,
                                                observer_destroyed, &token));
    CHECK(token != 0);

    /* replace keeps the other half of the row; missing rows stay missing. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_replace_object(txn, "books", "b1", "dune2", 5));
    CHECK_OK(ydb_txn_replace_metadata(txn, "books", "b2", "m2", 2));
    CHECK_OK(ydb_txn_replace_object(txn, "books", "ghost", "x", 1));
    CHECK_OK(ydb_txn_replace_metadata(txn, "books", "ghost", "x", 1));
    CHECK_OK(ydb_txn_touch_object(txn, "films", "f1"));
    CHECK_OK(ydb_txn_touch_metadata(txn, "books", "empty"));
    CHECK_OK(ydb_txn_touch_row(txn, "books", "ghost"));
    CHECK_OK(ydb_txn_commit(txn));

    CHECK(state.calls == 1);
    CHECK_OK(ydb_database_snapshot(db, &snapshot));
    CHECK(state.last_snapshot == snapshot);
    CHECK(state.kept != NULL);
    memset(&changes, 0, sizeof changes);
    CHECK_OK(ydb_notification_enumerate_changed_rows(state.kept,
                                                     collect_change, &changes));
    CHECK(changes.count == 4);
    CHECK(flags_of(&changes, "books", "b1") & YDB_ROW_OBJECT_CHANGED);
    CHECK(flags_of(&changes, "books", "b2") & YDB_ROW_METADATA_CHANGED);
    CHECK(flags_of(&changes, "films", "f1") == YDB_ROW_OBJECT_TOUCHED);
    CHECK(flags_of(&changes, "books", "empty") == YDB_ROW_METADATA_TOUCHED);
    CHECK(flags_of(&changes, "books", "ghost") == -1);
    CHECK_OK(ydb_notification_changed_row_count(state.kept, &count));
    CHECK(count == 4);
    {
        int flag = -1;
        CHECK_OK(ydb_notification_has_change(state.kept, "books", "b1", &flag));
        CHECK(flag == 1);
        CHECK_OK(ydb_notification_has_change(state.kept, "books", "b9", &flag));
        CHECK(flag == 0);
        CHECK_OK(ydb_notification_has_change_in_collection(state.kept, "films",
                                                           &flag));
        CHECK(flag == 1);
        CHECK_OK(ydb_notification_removed_all(state.kept, &flag));
        CHECK(flag == 0);
    }

    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK(object_is(txn, "books", "b1", "dune2"));
    CHECK_OK(ydb_txn_get_metadata(txn, "books", "b1", &metadata, &size));
    CHECK(size == 5 && memcmp(metadata, "meta1", 5) == 0);
    ydb_free(metadata);
    CHECK(object_is(txn, "books", "b2", "emma"));
    CHECK_OK(ydb_txn_get_metadata(txn, "books", "b2", &metadata, &size));
    CHECK(size == 2 && memcmp(metadata, "m2", 2) == 0);
    ydb_free(metadata);
    CHECK_OK(ydb_txn_count(txn, "books", &count));
    CHECK(count == 3);
    CHECK_OK(ydb_txn_end(txn));

    /* replace_metadata(NULL) removes the metadata. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_replace_metadata(txn, "books", "b2", NULL, 0));
    CHECK_RC(ydb_txn_get_metadata(txn, "books", "b2", &metadata, &size),
             YDB_NOTFOUND);
    CHECK_OK(ydb_txn_commit(txn));

    /* remove one, remove many, remove a collection, remove everything. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "rm", "r1", "1", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "rm", "r2", "2", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "rm", "r3", "3", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "rm", "r4", "4", 1, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_remove_object(txn, "rm", "r2"));
    CHECK_OK(ydb_txn_remove_object(txn, "rm", "never"));
    CHECK_OK(ydb_txn_remove_objects(txn, "rm", keys, 3));
    CHECK_OK(ydb_txn_remove_objects(txn, "rm", NULL, 0));
    CHECK_OK(ydb_txn_count(txn, "rm", &count));
    CHECK(count == 1);
    CHECK_OK(ydb_txn_commit(txn));
    memset(&changes, 0, sizeof changes);
    CHECK_OK(ydb_notification_enumerate_changed_rows(state.kept,
                                                     collect_change, &changes));
    CHECK(changes.count == 3);
    CHECK(flags_of(&changes, "rm", "r1") & YDB_ROW_REMOVED);
    CHECK(flags_of(&changes, "rm", "r2") & YDB_ROW_REMOVED);
    CHECK(flags_of(&changes, "rm", "r3") & YDB_ROW_REMOVED);
    CHECK(missing(conn, "rm", "r1") && missing(conn, "rm", "r3"));
    CHECK(reads_as(conn, "rm", "r4", "4"));

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_remove_all_objects(txn, "films"));
    CHECK_OK(ydb_txn_commit(txn));
    {
        name_list removed;
        int flag = -1;
        memset(&removed, 0, sizeof removed);
        CHECK_OK(ydb_notification_enumerate_removed_collections(
            state.kept, collect_name, &removed));
        CHECK(removed.count == 1 && strcmp(removed.names[0], "films") == 0);
        CHECK_OK(ydb_notification_has_change(state.kept, "films", "f1", &flag));
        CHECK(flag == 1);
    }
    CHECK(missing(conn, "films", "f1"));
    CHECK(reads_as(conn, "books", "b1", "dune2"));

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_remove_all_objects_in_all_collections(txn));
    CHECK_OK(ydb_txn_count_all(txn, &count));
    CHECK(count == 0);
    CHECK_OK(ydb_txn_commit(txn));
    {
        int flag = -1;
        CHECK_OK(ydb_notification_removed_all(state.kept, &flag));
        CHECK(flag == 1);
        CHECK_OK(ydb_notification_has_change(state.kept, "any", "thing", &flag));
        CHECK(flag == 1);
    }
    CHECK(missing(conn, "books", "b1"));

    /* A commit that changed nothing makes no snapshot and no notification. */
    {
        int calls = state.calls;
        uint64_t before = 0, after = 0;
        CHECK_OK(ydb_database_snapshot(db, &before));
        REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        CHECK_OK(ydb_txn_commit(txn));
        CHECK_OK(ydb_database_snapshot(db, &after));
        CHECK(after == before);
        CHECK(state.calls == calls);
    }

    /* Removing the observer runs its destructor once; it is not called again. */
    CHECK(state.destroyed == 0);
    CHECK_OK(ydb_database_remove_commit_observer(db, token));
    CHECK(state.destroyed == 1);
    CHECK_RC(ydb_database_remove_commit_observer(db, token), YDB_NOTFOUND);
    CHECK(state.destroyed == 1);
    {
        int calls = state.calls;
        CHECK_OK(put(conn, "after", "k", "v", NULL));
        CHECK(state.calls == calls);
    }
    ydb_notification_free(state.kept);
}

static void test_observer_destructor_rules(void) {
    ydb_database *db = NULL;
    observer_state state;
    uint64_t token = 0;

    /* Failed registration still runs the destructor, exactly once. */
    memset(&state, 0, sizeof state);
    CHECK_RC(ydb_database_add_commit_observer(NULL, observe, &state,
                                              observer_destroyed, &token),
             YDB_MISUSE);
    CHECK(state.destroyed == 1);
    memset(&state, 0, sizeof state);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    CHECK_RC(ydb_database_add_commit_observer(db, NULL, &state,
                                              observer_destroyed, &token),
             YDB_INVALID_ARGUMENT);
    CHECK(state.destroyed == 1);
    memset(&state, 0, sizeof state);
    CHECK_RC(ydb_database_add_commit_observer(db, observe, &state,
                                              observer_destroyed, NULL),
             YDB_MISUSE);
    CHECK(state.destroyed == 1);

    /* Closing the database removes observers: destructor once. */
    memset(&state, 0, sizeof state);
    CHECK_OK(ydb_database_add_commit_observer(db, observe, &state,
                                              observer_destroyed, &token));
    CHECK_OK(ydb_database_add_commit_observer(db, observe, &state, NULL,
                                              &token));
    CHECK(state.destroyed == 0);
    CHECK_OK(ydb_database_close(db));
    CHECK(state.destroyed == 1);
}

typedef struct {
    ydb_connection *committer;
    ydb_connection *other;
    int write_status;
    int read_committer_status;
    int read_other_status;
} nested_state;

/* Observers run after the commit, with no engine lock held: they may read
** and write on any connection, the committing one included. */
static void observe_and_reenter(void *ctx, const ydb_notification *n) {
    nested_state *state = (nested_state *)ctx;
    ydb_txn *txn = (ydb_txn *)&txn;
    int own = 0;
    if (ydb_notification_has_change(n, "obs", "written-by-observer", &own) == YDB_OK && own) return;
    state->write_status = ydb_txn_begin_read_write(state->committer, &txn);
    if (txn != NULL) {
        ydb_txn_set_object(txn, "obs", "written-by-observer", "w", 1, NULL, 0);
        state->write_status = ydb_txn_commit(txn);
    }
    state->read_committer_status = ydb_txn_begin_read(state->committer, &txn);
    if (txn != NULL) ydb_txn_end(txn);
    state->read_other_status = ydb_txn_begin_read(state->other, &txn);
    if (txn != NULL) {
        int same = object_is(txn, "obs", "k", "v");
        if (!same) state->read_other_status = -1;
        ydb_txn_end(txn);
    }
}

static void test_observer_calls_back(ydb_database *db, ydb_connection *conn) {
    nested_state state;
    ydb_connection *other = NULL;
    uint64_t token = 0;

    REQUIRE_OK(ydb_connection_open(db, &other));
    memset(&state, 0, sizeof state);
    state.committer = conn;
    state.other = other;
    REQUIRE_OK(ydb_database_add_commit_observer(db, observe_and_reenter, &state,
                                                NULL, &token));
    CHECK_OK(put(conn, "obs", "k", "v", NULL));
    CHECK(state.write_status == YDB_OK);
    CHECK(state.read_committer_status == YDB_OK);
    CHECK(state.read_other_status == YDB_OK);
    CHECK(reads_as(other, "obs", "written-by-observer", "w"));
    CHECK_OK(ydb_database_remove_commit_observer(db, token));
    CHECK_OK(put(other, "obs", "k2", "v", NULL));
    CHECK_OK(ydb_connection_close(other));
}

static void test_notification_handles(ydb_database *db, ydb_connection *conn) {
    observer_state state;
    uint64_t token = 0, snapshot = 0;
    ydb_notification *copy = NULL;

    memset(&state, 0, sizeof state);
    REQUIRE_OK(ydb_database_add_commit_observer(db, observe, &state, NULL,
                                                &token));
    CHECK_OK(put(conn, "n", "k", "v", NULL));
    REQUIRE_OK(ydb_database_remove_commit_observer(db, token));
    CHECK(state.kept != NULL);

    /* A copy outlives the original handle. */
    CHECK_OK(ydb_notification_copy(state.kept, &copy));
    ydb_notification_free(state.kept);
    CHECK_OK(ydb_notification_snapshot(copy, &snapshot));
    CHECK(snapshot == state.last_snapshot);
    ydb_notification_free(copy);
    /* Freed handles are detected. */
    CHECK_RC(ydb_notification_snapshot(copy, &snapshot), YDB_MISUSE);
    ydb_notification_free(copy); /* double free: harmless */
    ydb_notification_free(NULL);
}

int main(void) {
    test_open_with_options();
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;

    test_version();
    test_open_and_path();

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    test_set_get(conn);
    test_counts_and_enumeration(conn);
    test_replace_touch_remove(db, conn);
    test_notification_handles(db, conn);
    test_observer_calls_back(db, conn);
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));

    test_observer_destructor_rules();
    return check_summary();
}
