/*
** test_fts_index.c -- full-text indexes through the C ABI: the index follows
** commits and rollbacks, searches come best first and stop when asked,
** snippets mark the words found, a stored index reopens without its
** callback and a new tag rebuilds it; the columns result refuses bad text
** (and so fails the callback), and every misuse -- NULL and stale handles,
** bad sizes, bad UTF-8, a name a view holds -- gives an error, never a
** crash, with each destructor run exactly once.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "view_helpers.h"

/* Objects are "title|body"; "-" is left out; key "bad" fails. */
typedef struct {
    int calls;
    int destroyed;
    int mode;                    /* what the callback does wrong (MODE_*) */
    int misuse_status;           /* what the misused call returned */
    ydb_fts_columns *kept;       /* the handle of an earlier call */
} fts_counter;

enum { MODE_FINE, MODE_PAST_LAST, MODE_BAD_UTF8, MODE_NUL, MODE_NULL_TEXT, MODE_RETURN_FAILURE,
       MODE_WRITE_THROUGH_TXN };

static void fts_destroy(void *ctx) { ((fts_counter *)ctx)->destroyed++; }

static int note_text(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_fts_columns *columns) {
    fts_counter *counter = (fts_counter *)ctx;
    const char *object = (const char *)row->object;
    size_t bar = 0;
    counter->calls++;
    counter->kept = columns;
    if (object == NULL || (row->object_size == 1 && object[0] == '-')) return 0;
    if (strcmp(row->key, "bad") == 0) {
        switch (counter->mode) {
        case MODE_PAST_LAST:
            counter->misuse_status = ydb_fts_columns_set(columns, 2, "x", 1);
            return 0;   /* the refused call fails the callback anyway */
        case MODE_BAD_UTF8:
            counter->misuse_status = ydb_fts_columns_set(columns, 0, "\xff\xfe", 2);
            return 0;
        case MODE_NUL:
            counter->misuse_status = ydb_fts_columns_set(columns, 0, "a\0b", 3);
            return 0;
        case MODE_NULL_TEXT:
            counter->misuse_status = ydb_fts_columns_set(columns, 0, NULL, 3);
            return 0;
        case MODE_RETURN_FAILURE:
            return 5;
        case MODE_WRITE_THROUGH_TXN:
            counter->misuse_status = ydb_txn_touch_object(txn, "notes", "a");
            break;
        default:
            break;
        }
    }
    while (bar < row->object_size && object[bar] != '|') bar++;
    /* Lengths, not NULs, end the texts: the object is not NUL-terminated. */
    ydb_fts_columns_set(columns, 0, object, bar);
    if (bar < row->object_size)
        return ydb_fts_columns_set(columns, 1, object + bar + 1, row->object_size - bar - 1);
    return 0;
}

static const char *const note_columns[] = {"title", "body"};

static int register_notes(ydb_database *db, const char *name, const char *tag, fts_counter *counter,
                          int *outcome) {
    ydb_fts_index_definition def = YDB_FTS_INDEX_DEFINITION_INIT;
    def.columns = note_columns;
    def.column_count = 2;
    def.extract = note_text;
    def.extract_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = tag;
    return ydb_fts_index_register(db, name, &def, counter, fts_destroy, outcome);
}

/* What a search found, as "key,key," (and whether ranks came best first). */
typedef struct {
    char keys[512];
    size_t count;
    size_t stop_after;           /* 0: never stop */
    double last_rank;
    int ranks_ascend;
} found_list;

static int collect(void *ctx, const char *collection, const char *key, double rank) {
    found_list *found = (found_list *)ctx;
    size_t used = strlen(found->keys);
    (void)collection;
    if (found->count > 0 && rank < found->last_rank) found->ranks_ascend = 0;
    found->last_rank = rank;
    found->count++;
    snprintf(found->keys + used, sizeof found->keys - used, "%s,", key);
    return found->stop_after != 0 && found->count >= found->stop_after;
}

static int search(ydb_txn *txn, const char *index, const char *query, size_t limit, found_list *found) {
    memset(found, 0, sizeof *found);
    found->ranks_ascend = 1;
    return ydb_txn_search(txn, index, query, limit, collect, found);
}

/* The keys `query` finds in "notes" through a fresh read transaction. */
static const char *found_keys(ydb_connection *conn, const char *query) {
    static found_list found;
    ydb_txn *txn = NULL;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return "(no transaction)";
    if (search(txn, "notes", query, 0, &found) != YDB_OK) snprintf(found.keys, sizeof found.keys, "(error)");
    ydb_txn_end(txn);
    return found.keys;
}

static void test_index_follows_commits(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    fts_counter counter = {0};
    found_list found;
    char *snippet = NULL;
    int outcome = 0;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_notes(db, "notes", "1", &counter, &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK_OK(set_row(conn, "notes", "a", "Swift and SQLite|full text search with swift"));
    CHECK_OK(set_row(conn, "notes", "b", "Bread|baking"));
    CHECK_OK(set_row(conn, "notes", "c", "-"));
    CHECK_OK(set_row(conn, "notes", "d", "Swift|once"));
    CHECK(counter.calls == 4);
    CHECK(strcmp(found_keys(conn, "swift"), "a,d,") == 0 || strcmp(found_keys(conn, "swift"), "d,a,") == 0);
    CHECK(strcmp(found_keys(conn, "title: bread"), "b,") == 0);
    CHECK(strcmp(found_keys(conn, "-"), "(error)") == 0);

    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(search(txn, "notes", "swift OR bread", 0, &found));
    CHECK(found.count == 3 && found.ranks_ascend);
    CHECK_OK(search(txn, "notes", "swift OR bread", 2, &found));
    CHECK(found.count == 2);
    memset(&found, 0, sizeof found);
    found.stop_after = 1;   /* the callback stops the search */
    CHECK_OK(ydb_txn_search(txn, "notes", "swift OR bread", 0, collect, &found));
    CHECK(found.count == 1);
    CHECK_OK(search(txn, "notes", "  ", 0, &found));
    CHECK(found.count == 0);
    CHECK_OK(ydb_txn_search_snippet(txn, "notes", "text", "notes", "a", "body", "[", "]", "...", 3, &snippet));
    CHECK(snippet != NULL && strcmp(snippet, "full [text] search...") == 0);
    ydb_free(snippet);
    CHECK_OK(ydb_txn_search_snippet(txn, "notes", "swift", "notes", "d", NULL, NULL, NULL, NULL, 8, &snippet));
    CHECK(snippet != NULL && strcmp(snippet, "Swift") == 0);
    ydb_free(snippet);
    snippet = (char *)1;
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "bread", "notes", "a", NULL, "<", ">", "", 8, &snippet),
             YDB_NOTFOUND);
    CHECK(snippet == NULL);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "bread", "notes", "nosuch", NULL, "<", ">", "", 8, &snippet),
             YDB_NOTFOUND);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "swift", "notes", "a", "nosuch", "<", ">", "", 8, &snippet),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "swift", "notes", "a", NULL, "<", ">", "", 0, &snippet),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "swift", "notes", "a", NULL, "<", ">", "", 65, &snippet),
             YDB_INVALID_ARGUMENT);
    ydb_txn_end(txn);

    /* Updates, removals, and a rolled-back transaction's writes. */
    CHECK_OK(set_row(conn, "notes", "a", "Kotlin|nothing"));
    CHECK_OK(remove_row(conn, "notes", "b"));
    CHECK(strcmp(found_keys(conn, "swift"), "d,") == 0);
    CHECK(strcmp(found_keys(conn, "bread OR kotlin"), "a,") == 0);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "notes", "e", "Ephemeral|words", 15, NULL, 0));
    CHECK_OK(ydb_txn_remove_object(txn, "notes", "d"));
    CHECK_OK(search(txn, "notes", "ephemeral OR swift", 0, &found));
    CHECK(strcmp(found.keys, "e,") == 0);   /* its own writes */
    CHECK_OK(ydb_txn_rollback(txn));
    CHECK(strcmp(found_keys(conn, "ephemeral OR swift"), "d,") == 0);

    CHECK_RC(ydb_fts_index_enumerate_registered(db, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK(counter.destroyed == 0);
    CHECK_OK(ydb_fts_index_unregister(db, "notes"));
    CHECK(counter.destroyed == 1);
    CHECK_RC(search(NULL, "notes", "swift", 0, &found), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_RC(search(txn, "notes", "swift", 0, &found), YDB_NOTFOUND);
    ydb_txn_end(txn);
    CHECK_OK(ydb_fts_index_unregister(db, "notes"));   /* unknown: left alone */
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(db));
}

static int count_name(void *ctx, const char *name) {
    (void)name;
    (*(int *)ctx)++;
    return 0;
}

/* A stored index reopens without its callback; a new tag rebuilds it. */
static void test_reopen_and_tags(void) {
    /* In the working directory (ctest's: the build folder), removed after. */
    char dir[] = "ydbview-fts-XXXXXX", path[64], file[80];
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    fts_counter first = {0}, second = {0}, third = {0};
    ydb_database *db;
    ydb_connection *conn;
    int outcome = 0, names = 0;
    size_t i;
    REQUIRE_OK(mkdtemp(dir) != NULL ? YDB_OK : YDB_ERROR);
    snprintf(path, sizeof path, "%s/db.sqlite", dir);
    REQUIRE_OK(ydb_database_open(path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_notes(db, "notes", "1", &first, &outcome));
    CHECK_OK(set_row(conn, "notes", "a", "Kept|across reopening"));
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(db));
    CHECK(first.destroyed == 1);

    REQUIRE_OK(ydb_database_open(path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_notes(db, "notes", "1", &second, &outcome));
    CHECK(outcome == YDB_VIEW_LOADED && second.calls == 0);
    CHECK(strcmp(found_keys(conn, "reopening"), "a,") == 0);
    CHECK_OK(register_notes(db, "notes", "2", &third, &outcome));
    CHECK(outcome == YDB_VIEW_REBUILT_NEW_TAG && third.calls == 1);
    CHECK(second.destroyed == 1);   /* replaced */
    CHECK_OK(ydb_fts_index_enumerate_registered(db, count_name, &names));
    CHECK(names == 1);
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(db));
    CHECK(third.destroyed == 1);
    for (i = 0; i < 3; i++) {
        snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
        unlink(file);
    }
    rmdir(dir);
}

/* Sets one row, keeping the failure's message (a rollback clears it). */
static int set_failing(ydb_connection *conn, const char *key, const char *object, char *message, size_t size) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(conn, &txn);
    message[0] = '\0';
    if (rc != YDB_OK) return rc;
    rc = ydb_txn_set_object(txn, "notes", key, object, strlen(object), NULL, 0);
    if (rc != YDB_OK) {
        snprintf(message, size, "%s", ydb_errmsg());
        ydb_txn_rollback(txn);
        return rc;
    }
    return ydb_txn_commit(txn);
}

/* The columns result refuses bad text, and the refusal fails the write. */
static void test_columns_result(void) {
    static const int modes[] = {MODE_PAST_LAST, MODE_BAD_UTF8, MODE_NUL, MODE_NULL_TEXT};
    ydb_database *db;
    ydb_connection *conn;
    fts_counter counter = {0};
    char message[512];
    size_t i;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_notes(db, "notes", "1", &counter, NULL));
    for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        counter.mode = modes[i];
        counter.misuse_status = YDB_OK;
        CHECK_RC(set_failing(conn, "bad", "Bad|row", message, sizeof message), YDB_CALLBACK_FAILED);
        CHECK(strstr(message, "full-text index 'notes': extract callback gave invalid text") != NULL);
        CHECK(counter.misuse_status == YDB_INVALID_ARGUMENT);
    }
    counter.mode = MODE_RETURN_FAILURE;
    CHECK_RC(set_failing(conn, "bad", "Bad|row", message, sizeof message), YDB_CALLBACK_FAILED);
    CHECK(strstr(message, "extract callback failed (returned 5)") != NULL);
    counter.mode = MODE_WRITE_THROUGH_TXN;
    CHECK_OK(set_row(conn, "notes", "bad", "Bad|row"));
    CHECK(counter.misuse_status == YDB_MISUSE);   /* the callback's txn is read-only */
    CHECK(strcmp(found_keys(conn, "row"), "bad,") == 0);
    /* A handle kept past its callback, a NULL one, a made-up one. */
    CHECK_RC(ydb_fts_columns_set(counter.kept, 0, "late", 4), YDB_MISUSE);
    CHECK_RC(ydb_fts_columns_set(NULL, 0, "x", 1), YDB_MISUSE);
    CHECK_RC(ydb_fts_columns_set((ydb_fts_columns *)0x1234, 0, "x", 1), YDB_MISUSE);
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(db));
    CHECK(counter.destroyed == 1);
}

static void test_misuse(void) {
    static const char *const one_column[] = {"body"};
    static const char *const bad_utf8[] = {"\xc3\x28"};
    static const char *const reserved[] = {"rank"};
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    ydb_fts_index_definition def = YDB_FTS_INDEX_DEFINITION_INIT;
    fts_counter counter = {0};
    view_counter view = {0};
    found_list found;
    char *snippet = NULL;
    int outcome = 99;
    size_t size;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    def.columns = one_column;
    def.column_count = 1;
    def.extract = note_text;

    /* Every refusal runs the destructor once, before returning. */
    CHECK_RC(ydb_fts_index_register(NULL, "x", &def, &counter, fts_destroy, &outcome), YDB_MISUSE);
    CHECK(counter.destroyed == 1 && outcome == 0);
    CHECK_RC(ydb_fts_index_register(db, NULL, &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_fts_index_register(db, "\xff", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_fts_index_register(db, "x", NULL, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.struct_size = 0;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "YDB_FTS_INDEX_DEFINITION_INIT") != NULL);
    def.struct_size = YDB_FTS_INDEX_DEFINITION_MIN_SIZE - sizeof(void *);
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.struct_size = sizeof def;
    def.extract = NULL;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.extract = note_text;
    def.columns = NULL;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.column_count = 0;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.columns = bad_utf8;
    def.column_count = 1;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.columns = reserved;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.columns = one_column;
    def.tokenizer = "unicode61\"); DROP TABLE ydb_rows; --";
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.tokenizer = "nosuchtokenizer";
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.tokenizer = NULL;
    def.extract_flavour = 9;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.extract_flavour = YDB_FLAVOUR_ROW;
    def.extract_invoke = 1024;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.extract_invoke = YDB_INVOKE_DEFAULT;
    def.allowed_collection_count = 2;
    CHECK_RC(ydb_fts_index_register(db, "x", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    def.allowed_collection_count = 0;
    CHECK(counter.destroyed == 16);
    CHECK_RC(ydb_fts_index_definition_init(NULL), YDB_MISUSE);
    CHECK_OK(ydb_fts_index_definition_init(&def));
    CHECK(def.struct_size == sizeof def && def.extract_invoke == YDB_INVOKE_DEFAULT && def.columns == NULL);

    /* Views and indexes share one namespace, both ways. */
    CHECK_OK(register_standard(db, "taken", "1", 1, &view));
    def.columns = note_columns;
    def.column_count = 2;
    def.extract = note_text;
    counter.destroyed = 0;
    CHECK_RC(ydb_fts_index_register(db, "taken", &def, &counter, fts_destroy, NULL), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "belongs to a view") != NULL);
    CHECK(counter.destroyed == 1);
    CHECK_OK(ydb_fts_index_register(db, "notes", &def, &counter, fts_destroy, &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK_RC(register_standard(db, "notes", "1", 1, &view), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "belongs to a full-text index") != NULL);

    /* Queries: handles, NULLs, bad UTF-8, bad FTS5, unknown names. */
    CHECK_OK(set_row(conn, "notes", "a", "words|here"));
    CHECK_RC(search(NULL, "notes", "words", 0, &found), YDB_MISUSE);
    CHECK_RC(search((ydb_txn *)0x1234, "notes", "words", 0, &found), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_RC(search(txn, NULL, "words", 0, &found), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(txn, "notes", NULL, 0, &found), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(txn, "notes", "\xe2\x28\xa1", 0, &found), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_search(txn, "notes", "words", 0, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(txn, "notes", "words AND", 0, &found), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "invalid full-text query") != NULL);
    CHECK_RC(search(txn, "notes", "nosuch: words", 0, &found), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(txn, "taken", "words", 0, &found), YDB_NOTFOUND);
    CHECK_RC(search(txn, "nosuch", "words", 0, &found), YDB_NOTFOUND);
    CHECK_OK(search(txn, "notes", "words", (size_t)-1, &found));
    CHECK(found.count == 1);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "words", "notes", "a", NULL, "<", ">", "", 8, NULL), YDB_MISUSE);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "words", NULL, "a", NULL, "<", ">", "", 8, &snippet),
             YDB_INVALID_ARGUMENT);
    CHECK(snippet == NULL);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "words", "notes", "a", NULL, "\xff", ">", "", 8, &snippet),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_search_snippet(txn, "notes", "(", "notes", "a", NULL, "<", ">", "", 8, &snippet),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_search_snippet(NULL, "notes", "words", "notes", "a", NULL, "<", ">", "", 8, &snippet),
             YDB_MISUSE);
    /* The transaction is still usable after all of that. */
    CHECK_OK(ydb_txn_count(txn, "notes", &size));
    ydb_txn_end(txn);
    CHECK_RC(search(txn, "notes", "words", 0, &found), YDB_MISUSE);   /* ended */
    CHECK_RC(ydb_fts_index_unregister(NULL, "notes"), YDB_MISUSE);
    CHECK_RC(ydb_fts_index_unregister(db, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_fts_index_enumerate_registered(NULL, count_name, NULL), YDB_MISUSE);

    /* Registering from inside a read-write transaction would wait for itself. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    counter.destroyed = 0;
    CHECK_RC(ydb_fts_index_register(db, "other", &def, &counter, fts_destroy, NULL), YDB_MISUSE);
    CHECK(counter.destroyed == 1);
    ydb_txn_rollback(txn);
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(db));
    CHECK(counter.destroyed == 2);   /* "notes" went with the database */
    CHECK(view.destroyed == 2);      /* the view, and the refused registration */
}

int main(void) {
    test_index_follows_commits();
    test_reopen_and_tags();
    test_columns_result();
    test_misuse();
    return check_summary();
}
