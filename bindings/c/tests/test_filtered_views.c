/*
** test_filtered_views.c -- filtered views and touching many rows through the
** C ABI: registration and its refusals, commits flowing through, a new
** filter's changeset (exactly the rows entering and leaving), stacked
** filters following their parents (a re-sort of the parent as moves only),
** ydb_txn_touch_rows / ydb_txn_touch_group re-running a filter whose answer
** depends on a global, the destructor running exactly once in every path,
** misuse; then a seeded random-history property test: random writes, new
** filters, re-sorts of the parent and touches under random mappings over a
** filtered view and one stacked over it -- each changeset's edit steps,
** applied to the old table, give the new one, and each filtered view equals
** its parent's rows filtered from scratch.
**
** Run with a seed number as argument to replay one history verbosely.
*/
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "histories.h"
#include "view_helpers.h"

/* ---- a filter over the standard view's "GROUP:RANK" rows ---- */

enum {
    KEEP_EVEN,    /* even ranks (answers 2 + rank: any nonzero keeps) */
    KEEP_BELOW,   /* ranks below the global `threshold` */
    KEEP_ALL,     /* every row, answering -7 (garbage that still means keep) */
    KEEP_NONE,    /* never writes *out_keep: every row left out */
    FAIL_ON_3,    /* fails on rank 3, keeps the others */
    KEEP_FLAGGED  /* rows whose key is also a key of collection "flags" */
};

static int threshold = 3;

typedef struct {
    int mode;
    int calls;
    int destroyed;
    int wrong_group;         /* calls whose group was not the object's prefix */
    int write_status;        /* what a write through the lent txn returned */
    ydb_txn *kept_txn;       /* the lent txn, kept past its call */
} filter_ctx;

static void filter_destroy(void *ctx) { ((filter_ctx *)ctx)->destroyed++; }

static int rank_filter(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, int *out_keep) {
    filter_ctx *f = (filter_ctx *)ctx;
    int rank;
    f->calls++;
    if (*out_keep != 0) return 99; /* the header promises 0 on entry */
    if (row->object == NULL) return 98;
    if (strlen(group) != group_length((const char *)row->object, row->object_size) ||
        memcmp(group, row->object, strlen(group)) != 0)
        f->wrong_group++;
    rank = parse_rank(row->object, row->object_size);
    switch (f->mode) {
    case KEEP_EVEN:
        if (rank % 2 == 0) *out_keep = 2 + rank;
        return 0;
    case KEEP_BELOW: *out_keep = rank < threshold; return 0;
    case KEEP_ALL: *out_keep = -7; return 0;
    case KEEP_NONE: return 0;
    case FAIL_ON_3:
        if (rank == 3) return 5;
        *out_keep = 1;
        return 0;
    case KEEP_FLAGGED: {
        int exists = 0;
        f->write_status = ydb_txn_set_object(txn, "flags", "x", "1", 1, NULL, 0);
        f->kept_txn = txn;
        if (ydb_txn_exists(txn, "flags", row->key, &exists) != YDB_OK) return 1;
        *out_keep = exists;
        return 0;
    }
    default: return 1;
    }
}

/* A filter definition of object flavour with `tag`. */
static ydb_filter_definition filter_def(const char *tag) {
    ydb_filter_definition def = YDB_FILTER_DEFINITION_INIT;
    def.filter = rank_filter;
    def.flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = tag;
    return def;
}

static int register_filter(ydb_database *db, const char *name, const char *parent, const char *tag,
                           filter_ctx *ctx, int mode) {
    ydb_filter_definition def = filter_def(tag);
    ctx->mode = mode;
    return ydb_filtered_view_register(db, name, parent, &def, ctx, filter_destroy);
}

/* Sets the filter of `name` to `mode` in a commit of its own. */
static int set_filter(ydb_connection *conn, const char *name, const char *tag, filter_ctx *ctx, int mode) {
    ydb_filter_definition def = filter_def(tag);
    ydb_txn *txn = NULL;
    int rc;
    ctx->mode = mode;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    rc = ydb_view_set_filter(txn, name, &def, ctx, filter_destroy);
    if (rc != YDB_OK) {
        ydb_txn_rollback(txn);
        return rc;
    }
    return ydb_txn_commit(txn);
}

/* ---- fixture: the standard view "byGroup" over collection "c" ---- */


static void setup(fixture *f) { open_fixture(f, "byGroup", "1"); }

static void teardown(fixture *f) {
    CHECK_OK(ydb_connection_close(f->reader));
    CHECK_OK(ydb_connection_close(f->writer));
    CHECK_OK(ydb_database_close(f->db));
}

/* Row `key` in group `group` with rank `rank` ("g:07"). */
static int put_rank(ydb_connection *conn, const char *key, const char *group, int rank) {
    char object[32];
    snprintf(object, sizeof object, "%s:%02d", group, rank);
    return set_row(conn, "c", key, object);
}

/* ---- reading views as text: "a[k0 k2] b[k6]" ---- */

typedef struct {
    char text[1024];
    size_t length;
    int with_collection;
} dump_buffer;

static void append(dump_buffer *d, const char *piece) {
    size_t n = strlen(piece);
    if (d->length + n + 1 > sizeof d->text) return;
    memcpy(d->text + d->length, piece, n + 1);
    d->length += n;
}

static int dump_key(void *ctx, const char *collection, const char *key, size_t index) {
    dump_buffer *d = (dump_buffer *)ctx;
    if (index > 0) append(d, " ");
    if (d->with_collection) {
        append(d, collection);
        append(d, "/");
    }
    append(d, key);
    return 0;
}

typedef struct {
    char names[16][NAME_SIZE];
    size_t count;
} group_list;

static int list_group(void *ctx, const char *name) {
    group_list *groups = (group_list *)ctx;
    if (groups->count < 16) snprintf(groups->names[groups->count++], NAME_SIZE, "%s", name);
    return 0;
}

/* The view's groups and keys in `txn`, as text. */
static const char *dump_in(ydb_txn *txn, const char *view, dump_buffer *d, int with_collection) {
    group_list groups;
    memset(d, 0, sizeof *d);
    memset(&groups, 0, sizeof groups);
    d->with_collection = with_collection;
    if (ydb_view_enumerate_groups(txn, view, list_group, &groups) != YDB_OK) return "(no view)";
    for (size_t g = 0; g < groups.count; g++) {
        if (g > 0) append(d, " ");
        append(d, groups.names[g]);
        append(d, "[");
        CHECK_OK(ydb_view_enumerate_keys(txn, view, groups.names[g], 0, YDB_INDEX_END, 0, dump_key, d));
        append(d, "]");
    }
    return d->text;
}

/* True when `view` reads as `want` in a fresh read transaction. */
static int dump_is(ydb_connection *conn, const char *view, const char *want) {
    ydb_txn *txn = NULL;
    dump_buffer d;
    int same;
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    same = strcmp(dump_in(txn, view, &d, 0), want) == 0;
    if (!same) fprintf(stderr, "  view %s reads \"%s\", wanted \"%s\"\n", view, d.text, want);
    ydb_txn_end(txn);
    return same;
}

static int outcome_of(ydb_database *db, const char *view) {
    int outcome = -1;
    if (ydb_view_registration_outcome(db, view, &outcome) != YDB_OK) return -1;
    return outcome;
}

/* How many views are registered. */
static int count_name(void *ctx, const char *name) {
    (void)name;
    (*(int *)ctx)++;
    return 0;
}

static int registered_count(ydb_database *db) {
    int n = 0;
    CHECK_OK(ydb_view_enumerate_registered(db, count_name, &n));
    return n;
}

/* ---- mappings and changesets, as test_changesets.c uses them ---- */

static ydb_mappings *follow(fixture *f, const char *view) {
    const char *groups[] = {"g", "h"};
    ydb_mappings *m = NULL;
    ydb_txn *txn = NULL;
    REQUIRE_OK(ydb_mappings_new(view, groups, 2, &m));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(f->reader, &txn));
    REQUIRE_OK(ydb_mappings_update(m, txn));
    ydb_txn_end(txn);
    return m;
}

static ydb_changeset *catch_up(fixture *f, ydb_mappings *m) {
    ydb_notification_list *skipped = NULL;
    ydb_changeset *cs = NULL;
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, &skipped));
    CHECK_OK(ydb_changeset_new(m, skipped, &cs));
    ydb_notification_list_free(skipped);
    return cs;
}

/* The changeset's row changes of `type`, their keys sorted, as text. */
static const char *keys_of(ydb_changeset *cs, int type, dump_buffer *d) {
    char keys[32][NAME_SIZE];
    size_t n = 0, count = 0;
    memset(d, 0, sizeof *d);
    CHECK_OK(ydb_changeset_row_change_count(cs, &count));
    for (size_t i = 0; i < count; i++) {
        ydb_row_change c;
        CHECK_OK(ydb_changeset_row(cs, i, &c));
        if (c.type == type && n < 32) snprintf(keys[n++], NAME_SIZE, "%s", c.key ? c.key : "?");
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            char swap[NAME_SIZE];
            memcpy(swap, keys[j], NAME_SIZE);
            memcpy(keys[j], keys[j - 1], NAME_SIZE);
            memcpy(keys[j - 1], swap, NAME_SIZE);
        }
    for (size_t i = 0; i < n; i++) {
        if (i > 0) append(d, " ");
        append(d, keys[i]);
    }
    return d->text;
}

/* The changeset's row changes of `type`. */
static size_t count_of(ydb_changeset *cs, int type) {
    size_t n = 0, count = 0;
    CHECK_OK(ydb_changeset_row_change_count(cs, &count));
    for (size_t i = 0; i < count; i++) {
        int found = 0;
        CHECK_OK(ydb_changeset_row_type(cs, i, &found));
        if (found == type) n++;
    }
    return n;
}

static size_t change_count(ydb_changeset *cs) {
    size_t n = 999;
    CHECK_OK(ydb_changeset_row_change_count(cs, &n));
    return n;
}

/* ---- registration and commits ---- */

static void test_registration_and_commits(void) {
    fixture f;
    filter_ctx even = {0};
    ydb_txn *txn = NULL;
    char *tag = NULL;

    setup(&f);
    for (int i = 0; i < 6; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(put_rank(f.writer, key, i < 3 ? "g" : "h", i));
    }
    CHECK_OK(register_filter(f.db, "even", "byGroup", "1", &even, KEEP_EVEN));
    CHECK(outcome_of(f.db, "even") == YDB_VIEW_BUILT);
    CHECK(even.calls == 6);
    CHECK(dump_is(f.writer, "even", "g[k0 k2] h[k4]"));
    CHECK(dump_is(f.writer, "byGroup", "g[k0 k1 k2] h[k3 k4 k5]"));

    /* Commits flow through: one enters (in its place), one leaves, one goes. */
    CHECK_OK(put_rank(f.writer, "k1", "h", 8));
    CHECK_OK(put_rank(f.writer, "k2", "g", 3));
    CHECK_OK(remove_row(f.writer, "c", "k4"));
    CHECK_OK(put_rank(f.writer, "k9", "h", 6));
    CHECK(dump_is(f.writer, "even", "g[k0] h[k9 k1]"));
    CHECK(even.wrong_group == 0);

    /* A filtered view is a view like any other for queries. */
    REQUIRE_OK(ydb_txn_begin_read(f.writer, &txn));
    CHECK_OK(ydb_view_version_tag(txn, "even", &tag));
    CHECK(tag != NULL && strcmp(tag, "1\x1Fover\x1F" "1") == 0);
    ydb_free(tag);
    ydb_txn_end(txn);
    CHECK(group_count(f.writer, "even", "h") == 2);
    CHECK(key_at_is(f.writer, "even", "h", 1, "k1"));

    /* Registering the same name again with the same tag keeps it as it is. */
    {
        filter_ctx again = {0};
        CHECK_OK(register_filter(f.db, "even", "byGroup", "1", &again, KEEP_EVEN));
        CHECK(outcome_of(f.db, "even") == YDB_VIEW_LOADED);
        CHECK(again.calls == 0);
        CHECK(even.destroyed == 1); /* replaced */
        CHECK(again.destroyed == 0);
        teardown(&f);
        CHECK(again.destroyed == 1);
    }
    CHECK(even.destroyed == 1);
}

/* ---- a new filter: exactly the rows that enter and leave ---- */

static void test_set_filter_changeset(void) {
    fixture f;
    filter_ctx even = {0}, below = {0}, same = {0};
    ydb_mappings *m;
    ydb_changeset *cs;
    dump_buffer d;

    setup(&f);
    {
        ydb_txn *txn = NULL;
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        for (int i = 0; i < 12; i++) {
            char key[8], object[16];
            snprintf(key, sizeof key, "k%02d", i);
            snprintf(object, sizeof object, "g:%02d", i);
            CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
        }
        CHECK_OK(ydb_txn_commit(txn));
    }
    CHECK_OK(register_filter(f.db, "f", "byGroup", "even", &even, KEEP_EVEN));
    m = follow(&f, "f");

    /* even -> below 5: k01, k03 enter; k06, k08, k10 leave; k00, k02, k04 stay. */
    threshold = 5;
    CHECK_OK(set_filter(f.writer, "f", "below5", &below, KEEP_BELOW));
    CHECK(even.destroyed == 1 && below.destroyed == 0);
    CHECK(below.calls == 12); /* the parent's rows, once each */
    cs = catch_up(&f, m);
    CHECK(strcmp(keys_of(cs, YDB_CHANGE_INSERT, &d), "k01 k03") == 0);
    CHECK(strcmp(keys_of(cs, YDB_CHANGE_DELETE, &d), "k06 k08 k10") == 0);
    CHECK(change_count(cs) == 5);
    ydb_changeset_free(cs);
    CHECK(dump_is(f.writer, "f", "g[k00 k01 k02 k03 k04]"));

    /* The same tag again: nothing happens, and the unused filter is
    ** released when its transaction ends. */
    CHECK_OK(set_filter(f.writer, "f", "below5", &same, KEEP_NONE));
    CHECK(same.destroyed == 1 && same.calls == 0 && below.destroyed == 0);
    cs = catch_up(&f, m);
    CHECK(change_count(cs) == 0);
    ydb_changeset_free(cs);
    CHECK(dump_is(f.writer, "f", "g[k00 k01 k02 k03 k04]"));

    ydb_mappings_free(m);
    teardown(&f);
    CHECK(below.destroyed == 1 && even.destroyed == 1);
}

/* ---- stacked filters follow their parents ---- */

static int sort_by_suffix_descending(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                                     const ydb_view_row *b, int *out_order) {
    return sort_by_suffix(ctx, txn, group, b, a, out_order);
}

static void test_stacking(void) {
    fixture f;
    filter_ctx low = {0}, even = {0}, all = {0};
    view_counter redefined = {0};
    ydb_mappings *m;
    ydb_changeset *cs;
    ydb_txn *txn = NULL;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    dump_buffer d;

    setup(&f);
    for (int i = 0; i < 10; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(put_rank(f.writer, key, "g", i));
    }
    threshold = 7;
    CHECK_OK(register_filter(f.db, "low", "byGroup", "1", &low, KEEP_BELOW));
    CHECK_OK(register_filter(f.db, "lowEven", "low", "1", &even, KEEP_EVEN));
    CHECK(dump_is(f.writer, "lowEven", "g[k0 k2 k4 k6]"));
    CHECK(dump_is(f.writer, "low", "g[k0 k1 k2 k3 k4 k5 k6]"));

    /* The middle filter changes: the view over it follows, in the same commit. */
    CHECK_OK(set_filter(f.writer, "low", "all", &all, KEEP_ALL));
    CHECK(dump_is(f.writer, "lowEven", "g[k0 k2 k4 k6 k8]"));
    CHECK(low.destroyed == 1);

    /* The root is re-sorted descending: both follow, and the changeset of
    ** the view on top is moves only -- five rows reversed, four moves. */
    m = follow(&f, "lowEven");
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sort_by_suffix_descending;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "2";
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_view_set_definition(txn, "byGroup", &def, &redefined, counter_destroy));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "lowEven", "g[k8 k6 k4 k2 k0]"));
    CHECK(dump_is(f.writer, "low", "g[k9 k8 k7 k6 k5 k4 k3 k2 k1 k0]"));
    cs = catch_up(&f, m);
    CHECK(change_count(cs) == 4);
    CHECK(strcmp(keys_of(cs, YDB_CHANGE_INSERT, &d), "") == 0);
    CHECK(strcmp(keys_of(cs, YDB_CHANGE_DELETE, &d), "") == 0);
    CHECK(count_of(cs, YDB_CHANGE_MOVE) == 4);
    ydb_changeset_free(cs);
    ydb_mappings_free(m);

    /* A filter over a parent that a view is filtered over: refused, a cycle. */
    {
        filter_ctx cycle = {0};
        CHECK_RC(register_filter(f.db, "low", "lowEven", "9", &cycle, KEEP_ALL), YDB_INVALID_ARGUMENT);
        CHECK(cycle.destroyed == 1);
        CHECK_RC(register_filter(f.db, "self", "self", "9", &cycle, KEEP_ALL), YDB_NOTFOUND);
        CHECK(cycle.destroyed == 2);
    }

    /* Unregistering the root unregisters the views over it. */
    CHECK(registered_count(f.db) == 3);
    CHECK_OK(ydb_view_unregister(f.db, "byGroup"));
    CHECK(registered_count(f.db) == 0);
    CHECK(all.destroyed == 1 && even.destroyed == 1);
    CHECK(redefined.destroyed == 1);
    teardown(&f);
    CHECK(all.destroyed == 1 && even.destroyed == 1 && low.destroyed == 1);
}

/* ---- touching rows re-runs a filter that depends on a global ---- */

static void test_touch(void) {
    fixture f;
    filter_ctx below = {0};
    ydb_txn *txn = NULL, *read = NULL;
    const char *keys[] = {"k3", "nope", "k5"};
    const char *with_null[] = {"k3", NULL};
    const char *invalid[] = {"k3", "\xff"};

    setup(&f);
    for (int i = 0; i < 6; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(put_rank(f.writer, key, "g", i));
    }
    threshold = 3;
    CHECK_OK(register_filter(f.db, "f", "byGroup", "1", &below, KEEP_BELOW));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2]"));

    /* The global changes: nothing moves until the rows are touched. */
    threshold = 6;
    CHECK_OK(put_rank(f.writer, "k9", "g", 9));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2]"));
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_touch_rows(txn, "c", keys, 3)); /* a missing key is ignored */
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2 k3 k5]"));

    /* Touching the filtered view's group re-runs the filter on the rows it
    ** shows only; the parent's group reaches the rows it leaves out. */
    threshold = 5;
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_touch_group(txn, "f", "g"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2 k3]"));
    threshold = 10;
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_touch_group(txn, "f", "g"));
    CHECK_OK(ydb_txn_touch_group(txn, "f", "nothing")); /* no such group: nothing */
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2 k3]"));
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_touch_group(txn, "byGroup", "g"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2 k3 k4 k5 k9]"));

    /* Refused arguments change nothing and the transaction goes on. */
    threshold = 0;
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_touch_rows(txn, "c", NULL, 0));
    CHECK_RC(ydb_txn_touch_rows(txn, "c", NULL, 2), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_touch_rows(txn, "c", with_null, 2), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "keys[1]") != NULL);
    CHECK_RC(ydb_txn_touch_rows(txn, "c", invalid, 2), YDB_INVALID_ARGUMENT); /* k3 untouched too */
    CHECK_RC(ydb_txn_touch_rows(txn, NULL, keys, 1), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_touch_group(txn, NULL, "g"), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_touch_group(txn, "f", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_touch_group(txn, "f", "\xc3"), YDB_INVALID_ARGUMENT);
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2 k3 k4 k5 k9]"));

    /* Handles: NULL, a read transaction. */
    CHECK_RC(ydb_txn_touch_rows(NULL, "c", keys, 1), YDB_MISUSE);
    CHECK_RC(ydb_txn_touch_group(NULL, "f", "g"), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read(f.writer, &read));
    CHECK_RC(ydb_txn_touch_rows(read, "c", keys, 1), YDB_MISUSE);
    CHECK_RC(ydb_txn_touch_group(read, "byGroup", "g"), YDB_MISUSE);
    ydb_txn_end(read);

    /* An unknown view is refused inside the engine: the transaction fails,
    ** and nothing of it is committed. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_touch_group(txn, "byGroup", "g"));
    CHECK_RC(ydb_txn_touch_group(txn, "nope", "g"), YDB_NOTFOUND);
    CHECK_RC(ydb_txn_touch_rows(txn, "c", keys, 1), YDB_MISUSE);
    CHECK_RC(ydb_txn_commit(txn), YDB_NOTFOUND);
    CHECK(dump_is(f.writer, "f", "g[k0 k1 k2 k3 k4 k5 k9]"));
    teardown(&f);
    CHECK(below.destroyed == 1);
}

/* ---- what a filter answers, and a failing one ---- */

static void test_filter_answers(void) {
    fixture f;
    filter_ctx all = {0}, none = {0}, failing = {0}, failing2 = {0}, flagged = {0};
    ydb_txn *txn = NULL;
    int exists = 1;

    setup(&f);
    for (int i = 0; i < 5; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(put_rank(f.writer, key, "g", i));
    }
    /* Garbage in *out_keep keeps the row; a filter that never answers
    ** leaves every row out. */
    CHECK_OK(register_filter(f.db, "all", "byGroup", "1", &all, KEEP_ALL));
    CHECK_OK(register_filter(f.db, "none", "byGroup", "1", &none, KEEP_NONE));
    CHECK(dump_is(f.writer, "all", "g[k0 k1 k2 k3 k4]"));
    CHECK(dump_is(f.writer, "none", ""));

    /* A filter failing during registration registers nothing. */
    CHECK_RC(register_filter(f.db, "failing", "byGroup", "1", &failing, FAIL_ON_3), YDB_CALLBACK_FAILED);
    CHECK(strstr(ydb_errmsg(), "view 'failing': filter callback failed") != NULL);
    CHECK(failing.destroyed == 1);
    CHECK(registered_count(f.db) == 3);

    /* ... during a new filter: the transaction fails, the old filter stays. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "c", "k7", "g:07", 4, NULL, 0));
    {
        ydb_filter_definition def = filter_def("2");
        failing2.mode = FAIL_ON_3;
        CHECK_RC(ydb_view_set_filter(txn, "all", &def, &failing2, filter_destroy), YDB_CALLBACK_FAILED);
    }
    CHECK(failing2.destroyed == 0); /* until the transaction ends */
    CHECK_RC(ydb_txn_commit(txn), YDB_CALLBACK_FAILED);
    CHECK(failing2.destroyed == 1 && all.destroyed == 0);
    CHECK(dump_is(f.writer, "all", "g[k0 k1 k2 k3 k4]"));
    CHECK(missing(f.writer, "c", "k7"));

    /* ... during a write: the write and its transaction fail. */
    {
        filter_ctx fails_later = {0};
        CHECK_OK(remove_row(f.writer, "c", "k3"));
        CHECK_OK(register_filter(f.db, "later", "byGroup", "1", &fails_later, FAIL_ON_3));
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_RC(ydb_txn_set_object(txn, "c", "k8", "g:03", 4, NULL, 0), YDB_CALLBACK_FAILED);
        CHECK(strstr(ydb_errmsg(), "view 'later': filter callback failed (returned 5)") != NULL);
        CHECK_RC(ydb_txn_commit(txn), YDB_CALLBACK_FAILED);
        CHECK(missing(f.writer, "c", "k8"));
        CHECK_OK(ydb_view_unregister(f.db, "later"));
        CHECK(fails_later.destroyed == 1);
    }

    /* The lent transaction reads rows (also this transaction's own
    ** writes), refuses writes, and expires with its call. (Objects "x..."
    ** stay out of the parent view.) */
    CHECK_OK(set_row(f.writer, "flags", "k1", "x"));
    CHECK_OK(register_filter(f.db, "flagged", "byGroup", "1", &flagged, KEEP_FLAGGED));
    CHECK(dump_is(f.writer, "flagged", "g[k1]"));
    CHECK(flagged.write_status == YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "flags", "k9", "x", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "c", "k9", "g:09", 4, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(dump_is(f.writer, "flagged", "g[k1 k9]"));
    CHECK_RC(ydb_txn_exists(flagged.kept_txn, "flags", "k1", &exists), YDB_MISUSE);
    CHECK(exists == 0);

    teardown(&f);
    CHECK(all.destroyed == 1 && none.destroyed == 1 && flagged.destroyed == 1);
}

/* ---- the destructor, exactly once, and refusals ---- */

static void test_refusals_and_destructors(void) {
    fixture f;
    filter_ctx c = {0};
    ydb_filter_definition def = filter_def("1");
    ydb_txn *txn = NULL, *read = NULL;
    int expected = 0;

    setup(&f);
    CHECK_OK(put_rank(f.writer, "k0", "g", 0));
    c.mode = KEEP_ALL;

#define REFUSED(call, status)                                              \
    do {                                                                   \
        CHECK_RC(call, status);                                            \
        CHECK(c.destroyed == ++expected);                                  \
    } while (0)

    /* Registration refused before the engine: destroyed before returning. */
    REFUSED(ydb_filtered_view_register(NULL, "f", "byGroup", &def, &c, filter_destroy), YDB_MISUSE);
    REFUSED(ydb_filtered_view_register((ydb_database *)f.writer, "f", "byGroup", &def, &c, filter_destroy),
            YDB_MISUSE);
    REFUSED(ydb_filtered_view_register(f.db, NULL, "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    REFUSED(ydb_filtered_view_register(f.db, "f", NULL, &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    REFUSED(ydb_filtered_view_register(f.db, "\xff", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    REFUSED(ydb_filtered_view_register(f.db, "f", "by\xc0", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", NULL, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    def.struct_size = 0;
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "YDB_FILTER_DEFINITION_INIT") != NULL);
    def.struct_size = sizeof(size_t);
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    def = filter_def("1");
    def.filter = NULL;
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    def = filter_def("1");
    def.flavour = 7;
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    def = filter_def("1");
    def.invoke = 1024;
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    def = filter_def("\xfe");
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_INVALID_ARGUMENT);
    def = filter_def("1");
    /* ... and by the engine. */
    REFUSED(ydb_filtered_view_register(f.db, "f", "nope", &def, &c, filter_destroy), YDB_NOTFOUND);
    REFUSED(ydb_filtered_view_register(f.db, "f", "f", &def, &c, filter_destroy), YDB_NOTFOUND);
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    REFUSED(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy), YDB_MISUSE);
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(registered_count(f.db) == 1);
    /* A struct of the first version's size with invoke 0 (insert only) works. */
    def.invoke = 0;
    CHECK_OK(ydb_filtered_view_register(f.db, "f", "byGroup", &def, &c, filter_destroy));
    CHECK(c.destroyed == expected);
    CHECK(dump_is(f.writer, "f", "g[k0]"));
    def.invoke = YDB_INVOKE_DEFAULT;

    /* set_filter refused before the engine: destroyed before returning. */
    {
        filter_ctx n = {0};
        n.mode = KEEP_NONE;
        CHECK_RC(ydb_view_set_filter(NULL, "f", &def, &n, filter_destroy), YDB_MISUSE);
        CHECK(n.destroyed == 1);
        REQUIRE_OK(ydb_txn_begin_read(f.writer, &read));
        CHECK_RC(ydb_view_set_filter(read, "f", &def, &n, filter_destroy), YDB_MISUSE);
        CHECK(n.destroyed == 2);
        ydb_txn_end(read);
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_RC(ydb_view_set_filter(txn, NULL, &def, &n, filter_destroy), YDB_INVALID_ARGUMENT);
        CHECK(n.destroyed == 3);
        CHECK_RC(ydb_view_set_filter(txn, "f", NULL, &n, filter_destroy), YDB_INVALID_ARGUMENT);
        CHECK(n.destroyed == 4);
        def.struct_size = 0;
        CHECK_RC(ydb_view_set_filter(txn, "f", &def, &n, filter_destroy), YDB_INVALID_ARGUMENT);
        CHECK(n.destroyed == 5);
        def = filter_def("1");
        /* The transaction goes on after those. */
        CHECK_OK(ydb_txn_set_object(txn, "c", "k1", "g:01", 4, NULL, 0));
        CHECK_OK(ydb_txn_commit(txn));
        CHECK(dump_is(f.writer, "f", "g[k0 k1]"));

        /* Refused by the engine: destroyed when the transaction ends, and
        ** the transaction has failed. */
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_RC(ydb_view_set_filter(txn, "nope", &def, &n, filter_destroy), YDB_NOTFOUND);
        CHECK(n.destroyed == 5);
        CHECK_RC(ydb_txn_commit(txn), YDB_NOTFOUND);
        CHECK(n.destroyed == 6);
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_RC(ydb_view_set_filter(txn, "byGroup", &def, &n, filter_destroy), YDB_MISUSE);
        CHECK(strstr(ydb_errmsg(), "not a filtered view") != NULL);
        CHECK_OK(ydb_txn_rollback(txn));
        CHECK(n.destroyed == 7);

        /* Rolled back: the new filter goes, the old one stays. */
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        def = filter_def("2");
        CHECK_OK(ydb_view_set_filter(txn, "f", &def, &n, filter_destroy));
        CHECK(n.destroyed == 7);
        CHECK_OK(ydb_txn_rollback(txn));
        CHECK(n.destroyed == 8 && c.destroyed == expected);
        CHECK(dump_is(f.writer, "f", "g[k0 k1]"));
    }

    /* set_definition on a filtered view: refused, the view unchanged. */
    {
        view_counter vc = {0};
        ydb_view_definition vdef = YDB_VIEW_DEFINITION_INIT;
        vdef.grouping = group_by_prefix;
        vdef.sorting = sort_by_suffix;
        vdef.grouping_flavour = vdef.sorting_flavour = YDB_FLAVOUR_OBJECT;
        vdef.version_tag = "9";
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_RC(ydb_view_set_definition(txn, "f", &vdef, &vc, counter_destroy), YDB_MISUSE);
        CHECK(strstr(ydb_errmsg(), "filtered view") != NULL);
        CHECK_RC(ydb_txn_commit(txn), YDB_MISUSE);
        CHECK(vc.destroyed == 1);
        CHECK(dump_is(f.writer, "f", "g[k0 k1]"));
    }

    /* Committed: the old filter goes at the commit; unregistered: the new. */
    {
        filter_ctx n = {0}, last = {0};
        n.mode = KEEP_NONE;
        def = filter_def("3");
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_OK(ydb_view_set_filter(txn, "f", &def, &n, filter_destroy));
        CHECK(c.destroyed == expected);
        CHECK_OK(ydb_txn_commit(txn));
        CHECK(c.destroyed == ++expected && n.destroyed == 0);
        CHECK(dump_is(f.writer, "f", ""));
        CHECK_OK(ydb_view_unregister(f.db, "f"));
        CHECK(n.destroyed == 1);
        CHECK_OK(ydb_view_unregister(f.db, "f")); /* unknown: left alone */
        CHECK(n.destroyed == 1);

        /* Closing the database releases the filters still in use. */
        CHECK_OK(register_filter(f.db, "f", "byGroup", "1", &last, KEEP_ALL));
        teardown(&f);
        CHECK(last.destroyed == 1 && n.destroyed == 1 && c.destroyed == expected);
    }
#undef REFUSED
}

/* ---- persistence ---- */

static void test_persistent(void) {
    char directory[64], file[128];
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;
    view_counter parent = {0};
    filter_ctx even = {0};

    snprintf(directory, sizeof directory, "%s", "ydbview-filtered-XXXXXX");
    if (mkdtemp(directory) == NULL) {
        CHECK(0);
        return;
    }
    snprintf(file, sizeof file, "%s/db.sqlite", directory);
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_standard(db, "byGroup", "1", 1, &parent));
    for (int i = 0; i < 6; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(put_rank(conn, key, "g", i));
    }
    CHECK_OK(register_filter(db, "even", "byGroup", "1", &even, KEEP_EVEN));
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));

    /* The same tags: loaded as stored, no filter call. */
    memset(&even, 0, sizeof even);
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_standard(db, "byGroup", "1", 1, &parent));
    CHECK_OK(register_filter(db, "even", "byGroup", "1", &even, KEEP_EVEN));
    CHECK(outcome_of(db, "even") == YDB_VIEW_LOADED);
    CHECK(even.calls == 0);
    CHECK(dump_is(conn, "even", "g[k0 k2 k4]"));
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));

    /* The parent's tag changed: the filtered view is built again. */
    memset(&even, 0, sizeof even);
    REQUIRE_OK(ydb_database_open(file, &db));
    CHECK_OK(register_standard(db, "byGroup", "2", 1, &parent));
    CHECK_OK(register_filter(db, "even", "byGroup", "1", &even, KEEP_EVEN));
    CHECK(outcome_of(db, "even") == YDB_VIEW_REBUILT_NEW_TAG);
    CHECK(even.calls == 6);
    CHECK_OK(ydb_database_close(db));
    CHECK(even.destroyed == 1);
    remove_database_files(file);
    CHECK(rmdir(directory) == 0);
}

/* ===========================================================================
** Random histories
** ======================================================================== */

#define HISTORIES 300
#define BASE_SEED 0xF117E4EDu

/* The filters a history switches between: each keeps (group, row) or not,
** reading only what its flavour gives it. */
enum { F_ALL, F_EVEN, F_LOW, F_ODD_KEY, F_NOT_A, F_META, F_NONE, F_THRESHOLD, FILTER_KINDS };
static const char *const filter_names[FILTER_KINDS] = {"all", "even", "low", "oddKey", "notA", "meta",
                                                       "none", "threshold"};
static const int filter_flavours[FILTER_KINDS] = {YDB_FLAVOUR_KEY,      YDB_FLAVOUR_OBJECT, YDB_FLAVOUR_OBJECT,
                                                  YDB_FLAVOUR_KEY,      YDB_FLAVOUR_KEY,    YDB_FLAVOUR_METADATA,
                                                  YDB_FLAVOUR_KEY,      YDB_FLAVOUR_OBJECT};
static int history_threshold;

static int keeps(int kind, const char *group, const ydb_view_row *row) {
    switch (kind) {
    case F_ALL: return 1;
    case F_EVEN: return parse_rank(row->object, row->object_size) % 2 == 0;
    case F_LOW: return parse_rank(row->object, row->object_size) < 5;
    case F_ODD_KEY: return (row->key[strlen(row->key) - 1] - '0') % 2 == 1;
    case F_NOT_A: return strcmp(group, "a") != 0;
    case F_META:
        return row->metadata != NULL && row->metadata_size > 0 && ((const char *)row->metadata)[0] != 'm';
    case F_THRESHOLD: return parse_rank(row->object, row->object_size) < history_threshold;
    default: return 0;
    }
}

/* Filters live in malloc'd contexts; the destructor frees them. */
typedef struct {
    int kind;
    int failures; /* a row narrowed wrongly for the flavour */
} history_filter;

static int live_filters;

static void history_filter_free(void *ctx) {
    live_filters--;
    free(ctx);
}

static int history_filter_fn(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, int *out_keep) {
    history_filter *f = (history_filter *)ctx;
    int flavour = filter_flavours[f->kind];
    (void)txn;
    if ((row->object != NULL) != (flavour == YDB_FLAVOUR_OBJECT || flavour == YDB_FLAVOUR_ROW)) f->failures++;
    if (row->metadata != NULL && flavour != YDB_FLAVOUR_METADATA && flavour != YDB_FLAVOUR_ROW) f->failures++;
    if (f->failures) return 1;
    /* Garbage for "keep" now and then: any nonzero keeps. */
    if (keeps(f->kind, group, row)) *out_keep = row->key[1] == '7' ? -1 : 1;
    return 0;
}

static ydb_filter_definition history_def(int kind, const char *tag, int persistent, history_filter **ctx) {
    ydb_filter_definition def = YDB_FILTER_DEFINITION_INIT;
    *ctx = (history_filter *)calloc(1, sizeof **ctx);
    if (*ctx == NULL) abort();
    (*ctx)->kind = kind;
    live_filters++;
    def.filter = history_filter_fn;
    def.flavour = filter_flavours[kind];
    def.version_tag = tag;
    def.persistent = persistent;
    return def;
}

/* The root's orders: rank then collection then key (rank_then_key), rank
** descending, key then collection descending, collection descending then
** key descending; as comparators or as sort keys. */
#define ORDERS 4
static const int order_numbers[ORDERS] = {0, 1, 2, 3};

static int compare_rows(int order, const ydb_view_row *a, const ydb_view_row *b) {
    int ra = parse_rank(a->object, a->object_size), rb = parse_rank(b->object, b->object_size);
    int c;
    switch (order) {
    case 0:
        if (ra != rb) return ra < rb ? -1 : 1;
        if ((c = strcmp(a->collection, b->collection)) != 0) return c;
        return strcmp(a->key, b->key);
    case 1:
        if (ra != rb) return ra > rb ? -1 : 1;
        if ((c = strcmp(a->collection, b->collection)) != 0) return c;
        return strcmp(a->key, b->key);
    case 2:
        if ((c = strcmp(a->key, b->key)) != 0) return c;
        return -strcmp(a->collection, b->collection);
    default:
        if ((c = strcmp(a->collection, b->collection)) != 0) return -c;
        return -strcmp(a->key, b->key);
    }
}

static int order_comparator(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                            const ydb_view_row *b, int *out_order) {
    (void)txn;
    (void)group;
    *out_order = compare_rows(*(const int *)ctx, a, b);
    return 0;
}

static int order_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    int rank = parse_rank(row->object, row->object_size);
    (void)txn;
    (void)group;
    switch (*(const int *)ctx) {
    case 0:
        ydb_sort_key_append_int64(key, rank, 0);
        ydb_sort_key_append_text(key, row->collection, 0);
        return ydb_sort_key_append_text(key, row->key, 0);
    case 1:
        ydb_sort_key_append_int64(key, rank, 1);
        ydb_sort_key_append_text(key, row->collection, 0);
        return ydb_sort_key_append_text(key, row->key, 0);
    case 2:
        ydb_sort_key_append_text(key, row->key, 0);
        return ydb_sort_key_append_text(key, row->collection, 1);
    default:
        ydb_sort_key_append_text(key, row->collection, 1);
        return ydb_sort_key_append_text(key, row->key, 1);
    }
}

/* The root's definition; its order is the ctx it is registered with. */
static ydb_view_definition root_def(int keyed, const char *tag, int persistent) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = group_of_object;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    if (keyed)
        def.sort_key = order_key;
    else
        def.sorting = order_comparator;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = tag;
    def.persistent = persistent;
    return def;
}

/* ---- the filtered view against its parent filtered from scratch ---- */

typedef struct {
    int kind;
    const char *group;
    dump_buffer *out;
    size_t kept; /* rows of this group kept so far */
} scratch;

static int scratch_row(void *ctx, const char *collection, const char *key, size_t index, const void *object,
                       size_t object_size, const void *metadata, size_t metadata_size) {
    scratch *s = (scratch *)ctx;
    int flavour = filter_flavours[s->kind];
    int reads_object = flavour == YDB_FLAVOUR_OBJECT || flavour == YDB_FLAVOUR_ROW;
    int reads_metadata = flavour == YDB_FLAVOUR_METADATA || flavour == YDB_FLAVOUR_ROW;
    ydb_view_row row;
    (void)index;
    /* The row as the filter sees it: narrowed to its flavour. */
    row.collection = collection;
    row.key = key;
    row.object = reads_object ? (object != NULL ? object : "") : NULL;
    row.object_size = reads_object ? object_size : 0;
    row.metadata = reads_metadata ? metadata : NULL;
    row.metadata_size = reads_metadata ? metadata_size : 0;
    if (keeps(s->kind, s->group, &row)) {
        if (s->kept == 0) {
            if (s->out->length > 0) append(s->out, " ");
            append(s->out, s->group);
            append(s->out, "[");
        }
        dump_key(s->out, collection, key, s->kept++);
    }
    return 0;
}

/* `parent` filtered by `kind` from scratch, as dump_in shows a view. */
static const char *filtered_from_scratch(ydb_txn *txn, const char *parent, int kind, dump_buffer *d) {
    group_list groups;
    memset(d, 0, sizeof *d);
    memset(&groups, 0, sizeof groups);
    d->with_collection = 1;
    CHECK_OK(ydb_view_enumerate_groups(txn, parent, list_group, &groups));
    for (size_t g = 0; g < groups.count; g++) {
        scratch s;
        s.kind = kind;
        s.group = groups.names[g];
        s.out = d;
        s.kept = 0;
        CHECK_OK(ydb_view_enumerate_rows(txn, parent, groups.names[g], 0, YDB_INDEX_END, 0, scratch_row, &s));
        if (s.kept > 0) append(d, "]");
    }
    return d->text;
}

/* ---- one history ---- */

static size_t changesets, empty_changesets, filter_changes, resorts, group_touches, threshold_changes;
static size_t kept_by_filter[FILTER_KINDS];

/* The names of the views a history follows, and their parents. */
static const char *const followed[2] = {"f", "ff"};
static const char *const parents[2] = {"root", "f"};

/* Changes the global threshold and touches every row of the root (by
** group, or by key), so that the threshold filter answers anew. */
static void change_threshold(ydb_txn *txn, int verbose) {
    history_threshold = random_below(11);
    threshold_changes++;
    if (random_below(2)) {
        for (int g = 0; g < VIEW_GROUPS; g++) CHECK_OK(ydb_txn_touch_group(txn, "root", view_groups[g]));
        if (verbose) fprintf(stderr, "    threshold %d, every group touched\n", history_threshold);
    } else {
        const char *keys[KEYS];
        char names[KEYS][8];
        for (int k = 0; k < KEYS; k++) {
            snprintf(names[k], sizeof names[k], "k%d", k);
            keys[k] = names[k];
        }
        for (int c = 0; c < COLLECTIONS; c++) CHECK_OK(ydb_txn_touch_rows(txn, collections[c], keys, KEYS));
        if (verbose) fprintf(stderr, "    threshold %d, every key touched\n", history_threshold);
    }
}

/* One seeded history; returns 1 when every changeset and view checked out. */
static int run_history(uint64_t seed, int verbose, int *reports) {
    ydb_database *db = NULL;
    ydb_connection *writer = NULL, *reader = NULL;
    ydb_mappings *m[2];
    group_choice choice[2] = {{-1, 0}, {-1, 0}};
    text config[2] = {{"", 0}, {"", 0}};
    int kind[2], keyed, persistent, order;
    int tag = 0, ok = 1;
    char tag_text[16];
    ydb_txn *txn = NULL;

    random_state = seed;
    memset(present, 0, sizeof present);
    history_threshold = 5;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    keyed = random_below(2);
    persistent = random_below(2);
    order = random_below(ORDERS);
    {
        ydb_view_definition def = root_def(keyed, "0", persistent);
        REQUIRE_OK(ydb_view_register(db, "root", &def, (void *)&order_numbers[order], NULL));
    }
    for (int i = random_below(5); i > 0; i--) random_commit(writer);
    for (int v = 0; v < 2; v++) {
        history_filter *ctx;
        ydb_filter_definition def;
        kind[v] = random_below(FILTER_KINDS);
        def = history_def(kind[v], "0", random_below(2), &ctx);
        REQUIRE_OK(ydb_filtered_view_register(db, followed[v], parents[v], &def, ctx, history_filter_free));
    }
    for (int v = 0; v < 2; v++) m[v] = random_mappings(followed[v], &choice[v], &config[v]);
    if (verbose)
        fprintf(stderr, "seed %llu: root order %d%s, f %s, ff %s\n  f: %s\n  ff: %s\n", (unsigned long long)seed,
                order, keyed ? " (keyed)" : "", filter_names[kind[0]], filter_names[kind[1]], config[0].description,
                config[1].description);
    REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
    for (int v = 0; v < 2; v++) REQUIRE_OK(ydb_mappings_update(m[v], txn));
    ydb_txn_end(txn);

    for (int round = 0, rounds = 1 + random_below(4); ok && round < rounds; round++) {
        table old_table[2], new_table[2];
        ydb_notification_list *skipped = NULL;
        for (int v = 0; v < 2; v++)
            if (!read_table(reader, m[v], followed[v], &old_table[v])) ok = 0;
        if (!ok) break;
        for (int commits = 1 + random_below(3); commits > 0; commits--) {
            REQUIRE_OK(ydb_txn_begin_read_write(writer, &txn));
            for (int n = 1 + random_below(4); n > 0; n--) {
                int what = random_below(12);
                snprintf(tag_text, sizeof tag_text, "%d", ++tag);
                if (what < 2) {
                    int v = random_below(2);
                    history_filter *ctx;
                    ydb_filter_definition def;
                    kind[v] = random_below(FILTER_KINDS);
                    def = history_def(kind[v], tag_text, 1, &ctx);
                    CHECK_OK(ydb_view_set_filter(txn, followed[v], &def, ctx, history_filter_free));
                    filter_changes++;
                    if (verbose) fprintf(stderr, "    %s: filter %s\n", followed[v], filter_names[kind[v]]);
                } else if (what == 2) {
                    ydb_view_definition def;
                    order = random_below(ORDERS);
                    def = root_def(keyed, tag_text, persistent);
                    CHECK_OK(ydb_view_set_definition(txn, "root", &def, (void *)&order_numbers[order], NULL));
                    resorts++;
                    if (verbose) fprintf(stderr, "    root: order %d\n", order);
                } else if (what == 3) {
                    const char *group = view_groups[random_below(VIEW_GROUPS)];
                    CHECK_OK(ydb_txn_touch_group(txn, random_below(3) ? "root" : followed[random_below(2)], group));
                    group_touches++;
                } else if (what == 4 && random_below(3) == 0) {
                    change_threshold(txn, verbose);
                } else {
                    random_write(txn);
                }
            }
            REQUIRE_OK(ydb_txn_commit(txn));
        }
        REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, &skipped));
        for (int v = 0; ok && v < 2; v++) {
            ydb_changeset *cs = NULL;
            int empty = 0;
            CHECK_OK(ydb_changeset_new(m[v], skipped, &cs));
            if (cs == NULL || !read_table(reader, m[v], followed[v], &new_table[v])) {
                ydb_changeset_free(cs);
                ok = 0;
                break;
            }
            changesets++;
            CHECK_OK(ydb_changeset_is_empty(cs, &empty));
            if (empty) empty_changesets++;
            if (verbose) fprintf(stderr, "  round %d, view %s:\n", round, followed[v]);
            if (!check_steps(cs, &old_table[v], &new_table[v], seed, round, verbose, reports)) {
                if (*reports <= MAX_FAILURE_REPORTS)
                    fprintf(stderr, "    (seed %llu, view %s: %s)\n", (unsigned long long)seed, followed[v],
                            config[v].description);
                ok = 0;
            }
            ydb_changeset_free(cs);
        }
        ydb_notification_list_free(skipped);

        /* Each filtered view is its parent's rows filtered from scratch. */
        REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
        for (int v = 0; ok && v < 2; v++) {
            dump_buffer shown, wanted;
            dump_in(txn, followed[v], &shown, 1);
            filtered_from_scratch(txn, parents[v], kind[v], &wanted);
            if (strcmp(shown.text, wanted.text) != 0) {
                if ((*reports)++ < MAX_FAILURE_REPORTS)
                    fprintf(stderr, "seed %llu, round %d: %s (filter %s) shows\n    %s\n  wanted\n    %s\n",
                            (unsigned long long)seed, round, followed[v], filter_names[kind[v]], shown.text,
                            wanted.text);
                ok = 0;
            } else if (shown.length > 0) {
                kept_by_filter[kind[v]]++;
            }
        }
        ydb_txn_end(txn);
    }

    for (int v = 0; v < 2; v++) ydb_mappings_free(m[v]);
    CHECK_OK(ydb_connection_close(reader));
    CHECK_OK(ydb_connection_close(writer));
    CHECK_OK(ydb_database_close(db));
    /* Every filter's destructor ran exactly once (a second would free twice). */
    if (live_filters != 0) {
        fprintf(stderr, "seed %llu: %d filters never released\n", (unsigned long long)seed, live_filters);
        live_filters = 0;
        ok = 0;
    }
    return ok;
}

static void test_random_histories(void) {
    struct timespec start, end;
    int failed_histories = 0, reports = 0;
    double seconds;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int history = 0; history < HISTORIES; history++)
        if (!run_history((uint64_t)BASE_SEED + (uint64_t)history, 0, &reports)) failed_histories++;
    clock_gettime(CLOCK_MONOTONIC, &end);
    seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%d histories (%d failed), %zu changesets (%zu empty), %zu new filters, %zu re-sorts, "
           "%zu group touches, %zu threshold changes, %.1f s\n",
           HISTORIES, failed_histories, changesets, empty_changesets, filter_changes, resorts, group_touches,
           threshold_changes, seconds);
    printf("steps: %zu remove section, %zu insert section, %zu remove row, %zu insert row, %zu move row, "
           "%zu reload row\n",
           step_totals[1], step_totals[2], step_totals[3], step_totals[4], step_totals[5], step_totals[6]);
    CHECK(failed_histories == 0);
    /* Not vacuous: every operation, every kind of step, every filter
    ** keeping something somewhere. */
    CHECK(filter_changes > 100 && resorts > 50 && group_touches > 50 && threshold_changes > 10);
    for (int type = 1; type <= 6; type++) CHECK(step_totals[type] > 0);
    for (int k = 0; k < FILTER_KINDS; k++) CHECK(k == F_NONE || kept_by_filter[k] > 0);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        /* Replay one seed, printing every operation, table and step. */
        int reports = 0;
        CHECK(run_history(strtoull(argv[1], NULL, 0), 1, &reports));
        return check_summary();
    }
    test_registration_and_commits();
    test_set_filter_changeset();
    test_stacking();
    test_touch();
    test_filter_answers();
    test_refusals_and_destructors();
    test_persistent();
    test_random_histories();
    return check_summary();
}
