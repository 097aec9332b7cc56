/*
** test_set_objects.c -- ydb_txn_set_objects and the batch view callbacks.
**  a. 40 seeded histories of 30 commits (batches of 0..20 rows with repeated
**     keys and some metadata, single sets, removes, two collections) go to
**     database A through ydb_txn_set_objects, into views with grouping_batch
**     (+ sort_key_batch), and to database B one row at a time (every row, or
**     each key's last row) into the same views without batch callbacks.
**     After every commit: the same rows, the same groups/rows/order in every
**     view, the same changesets field by field (not compared where B also set
**     a repeated key's earlier rows: B then moves that row twice and may say
**     "move" where A's one set says "update"); each batch call got exactly
**     the rows the one-row callbacks would get (each key's last row, at its
**     index, narrowed to the flavour, with its group), as many as the invoke
**     options say, and the one-row forms were not called.
**  b. Call counts (a KEY grouping/sorting is not re-run on an update);
**     one-row writes and populations use the one-row forms.
**  c. Bad input refuses the whole batch; the transaction stays usable.
**  d. A failing batch callback or a bad answer fails the write and commit.
**  e. NULL and dead answer handles give YDB_MISUSE.  f. Count 0 is a no-op.
**  g. population_batches: populations ask the batch forms instead.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>

#include "check.h"

enum { OBJ, CMP, KEY, NVIEWS };
static const char *const NAMES[NVIEWS] = {"obj", "cmp", "key"};
static const char *const GROUPS[NVIEWS][3] = {{"g0", "g1", "g2"}, {"m", "p0", "p1"}, {"h0", "h1", "h2"}};

typedef struct {
    int kind, flavour_g, flavour_s;
    unsigned grouping_invoke;     /* 0: the default */
    int one_group, one_sort;      /* one-row callback calls */
    int batch_group, batch_sort;  /* batch callback calls ... */
    size_t group_rows, sort_rows; /* ... and the rows they were given */
    int fail;   /* grouping_batch: 1 fails, 2 names bad UTF-8, 3 a choice past the names; 4 sort_key_batch fails */
    int set_rc; /* what ydb_group_batch_set returned last */
    int bad;    /* rows not as documented */
} vctx;

static vctx make_view(int kind) {
    vctx v;
    memset(&v, 0, sizeof v);
    v.kind = kind;
    v.flavour_g = kind == KEY ? YDB_FLAVOUR_KEY : kind == CMP ? YDB_FLAVOUR_ROW : YDB_FLAVOUR_OBJECT;
    v.flavour_s = kind == CMP ? YDB_FLAVOUR_ROW : YDB_FLAVOUR_OBJECT;
    return v;
}

/* The batch being written (what the batch callbacks check rows against). */
static const char *const *batch_keys;
static size_t batch_count;
static ydb_group_batch *stale_group;
static ydb_sort_key_batch *stale_sort;

/* Objects are a rank in decimal text; keys "k000".."k299". */
static long rank_of(const ydb_view_row *row) {
    char text[16] = {0};
    if (row->object != NULL) memcpy(text, row->object, row->object_size < 15 ? row->object_size : 15);
    return strtol(text, NULL, 10);
}

/* A row's group in each kind of view, or NULL (left out). */
static const char *group_for(int kind, const ydb_view_row *row) {
    long r = kind == KEY ? strtol(row->key + 1, NULL, 10) : labs(rank_of(row));
    if (kind == KEY) return r % 7 == 6 ? NULL : GROUPS[KEY][r % 3];
    if (kind == OBJ) return r % 4 == 3 ? NULL : GROUPS[OBJ][r % 4];
    if (row->metadata != NULL) return GROUPS[CMP][0];
    return r % 5 == 4 ? NULL : GROUPS[CMP][1 + r % 2];
}

/* Rank then key, encoded as ydb_sort_key_append_int64 and _text encode
** them (the header's table): the bytes one_key builds through the API. */
static size_t encode_key(const ydb_view_row *row, unsigned char *out) {
    uint64_t v = (uint64_t)(int64_t)rank_of(row) ^ ((uint64_t)1 << 63);
    size_t n = strlen(row->key), i;
    for (i = 0; i < 8; i++) out[i] = (unsigned char)(v >> (56 - 8 * i));
    memcpy(out + 8, row->key, n);
    out[8 + n] = 0, out[9 + n] = 1;
    return n + 10;
}

static int one_group(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    vctx *v = (vctx *)ctx;
    const char *group = group_for(v->kind, row);
    (void)txn;
    v->one_group++;
    return group ? ydb_group_result_set(result, group) : 0;
}

static int one_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    (void)txn, (void)group;
    ((vctx *)ctx)->one_sort++;
    if (ydb_sort_key_append_int64(key, rank_of(row), 0) != YDB_OK) return 1;
    return ydb_sort_key_append_text(key, row->key, 0);
}

static int one_compare(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                       const ydb_view_row *b, int *out) {
    long ra = rank_of(a), rb = rank_of(b);
    (void)txn, (void)group;
    ((vctx *)ctx)->one_sort++;
    *out = ra != rb ? (ra < rb ? 1 : -1) : strcmp(a->key, b->key); /* rank descending, then key */
    return 0;
}

/* Row i of a batch call is the last row of its key, at its index, narrowed. */
static int batch_row_ok(size_t index, const ydb_view_row *row, int flavour) {
    int reads_object = flavour == YDB_FLAVOUR_OBJECT || flavour == YDB_FLAVOUR_ROW;
    int reads_metadata = flavour == YDB_FLAVOUR_METADATA || flavour == YDB_FLAVOUR_ROW;
    size_t j;
    if (index >= batch_count || strcmp(batch_keys[index], row->key) != 0) return 0;
    for (j = index + 1; j < batch_count; j++)
        if (strcmp(batch_keys[j], row->key) == 0) return 0;
    return (row->object != NULL) == reads_object && (reads_metadata || row->metadata == NULL);
}

static int batch_group(void *ctx, ydb_txn *txn, size_t count, const size_t *indexes,
                       const ydb_view_row *rows, ydb_group_batch *result) {
    vctx *v = (vctx *)ctx;
    const char *names[4] = {GROUPS[v->kind][0], GROUPS[v->kind][1], GROUPS[v->kind][2], "bad\xff"};
    size_t choices[64], i;
    (void)txn;
    v->batch_group++, v->group_rows += count;
    stale_group = result;
    if (v->fail == 1) return 5;
    if (count > 64 || count == 0) return v->bad++, 1;
    for (i = 0; i < count; i++) {
        const char *group = group_for(v->kind, &rows[i]);
        if (!batch_row_ok(indexes[i], &rows[i], v->flavour_g)) v->bad++;
        for (choices[i] = 0; group && names[choices[i]] != group; choices[i]++) {}
        if (!group) choices[i] = YDB_NO_GROUP;
    }
    if (v->fail == 2 || v->fail == 3) choices[count - 1] = v->fail == 2 ? 3 : 9;
    v->set_rc = ydb_group_batch_set(result, names, v->fail == 2 ? 4 : 3, choices);
    return v->fail == 2 || v->fail == 3 ? 0 : v->set_rc; /* a bad answer fails the call anyway */
}

static int batch_key(void *ctx, ydb_txn *txn, size_t count, const size_t *indexes,
                     const char *const *groups, const ydb_view_row *rows, ydb_sort_key_batch *result) {
    vctx *v = (vctx *)ctx;
    unsigned char keys[64 * 32];
    size_t sizes[64], used = 0, i;
    (void)txn;
    v->batch_sort++, v->sort_rows += count;
    stale_sort = result;
    if (v->fail == 4) return 9;
    if (count > 64 || count == 0) return v->bad++, 1;
    /* The grouping call's handle is dead by now. */
    if (stale_group != NULL && ydb_group_batch_set(stale_group, groups, 0, indexes) != YDB_MISUSE) v->bad++;
    for (i = 0; i < count; i++) {
        const char *group = group_for(v->kind, &rows[i]);
        if (!batch_row_ok(indexes[i], &rows[i], v->flavour_s) || !group || strcmp(group, groups[i]) != 0)
            v->bad++;
        sizes[i] = encode_key(&rows[i], keys + used);
        used += sizes[i];
    }
    return ydb_sort_key_batch_set(result, keys, sizes);
}

/* OBJ and KEY views sort by key, CMP by comparator and only collection "c". */
static int register_view(ydb_database *db, const char *name, vctx *v, int batch) {
    static const char *const allowed[] = {"c"};
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = one_group;
    def.grouping_flavour = v->flavour_g;
    def.sorting_flavour = v->flavour_s;
    if (v->grouping_invoke) def.grouping_invoke = v->grouping_invoke;
    if (v->kind == CMP) {
        def.sorting = one_compare;
        def.allowed_collections = allowed, def.allowed_collection_count = 1;
    } else {
        def.sort_key = one_key;
    }
    if (batch) def.grouping_batch = batch_group;
    if (batch && v->kind != CMP) def.sort_key_batch = batch_key;
    return ydb_view_register(db, name, &def, v, NULL);
}

/* ---- text forms of rows, views and changesets ---- */

typedef struct { char text[60000]; size_t used; } buf;

static void add(buf *b, const char *format, ...) {
    va_list args;
    if (b == NULL || b->used >= sizeof b->text) return;
    va_start(args, format);
    b->used += (size_t)vsnprintf(b->text + b->used, sizeof b->text - b->used, format, args);
    va_end(args);
}

static int add_view_row(void *ctx, const char *collection, const char *key, size_t index, const void *object,
                        size_t object_size, const void *metadata, size_t metadata_size) {
    add((buf *)ctx, "%s/%s@%zu=%.*s%s%.*s ", collection, key, index, (int)object_size, (const char *)object,
        metadata ? "+" : "", (int)metadata_size, metadata ? (const char *)metadata : "");
    return 0;
}

/* Each collection's rows by key number (enumeration order is not compared). */
static char table[2][300][16];
static int collection_index;
static int add_row(void *ctx, const char *key, const void *object, size_t object_size, const void *metadata,
                   size_t metadata_size) {
    (void)ctx;
    snprintf(table[collection_index][strtol(key + 1, NULL, 10) % 300], 16, "%.*s%s%.*s", (int)object_size,
             (const char *)object, metadata ? "+" : "", (int)metadata_size, metadata ? (const char *)metadata : "");
    return 0;
}

/* Every row of the database, then every group of every view, in order. */
static void dump(ydb_connection *conn, buf *out) {
    ydb_txn *txn;
    int k, i;
    memset(table, 0, sizeof table);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    for (collection_index = 0; collection_index < 2; collection_index++)
        CHECK_OK(ydb_txn_enumerate_rows(txn, collection_index ? "d" : "c", add_row, NULL));
    for (i = 0; i < 600; i++)
        if (table[i / 300][i % 300][0]) add(out, "%d=%s ", i, table[i / 300][i % 300]);
    for (k = 0; k < NVIEWS; k++) {
        size_t groups = 0;
        CHECK_OK(ydb_view_group_count(txn, NAMES[k], &groups));
        add(out, "\n%s: %zu groups", NAMES[k], groups);
        for (i = 0; i < 3; i++) { /* the only groups the callbacks name */
            add(out, "\n%s[%s] ", NAMES[k], GROUPS[k][i]);
            CHECK_OK(ydb_view_enumerate_rows(txn, NAMES[k], GROUPS[k][i], 0, YDB_INDEX_END, 0, add_view_row, out));
        }
    }
    ydb_txn_end(txn);
}

/* Computes the changeset (moving the mappings); writes it out unless `out` is NULL. */
static void dump_changeset(ydb_mappings *m, const ydb_notification_list *list, buf *out) {
    ydb_changeset *cs = NULL;
    ydb_row_change c;
    size_t n = 0, i, section = 0;
    int type = 0;
    const char *group = NULL;
    CHECK_OK(ydb_changeset_new(m, list, &cs));
    CHECK_OK(ydb_changeset_section_change_count(cs, &n));
    for (i = 0; i < n; i++) {
        CHECK_OK(ydb_changeset_section_change(cs, i, &type, &section, &group));
        add(out, "S%d %zu %s\n", type, section, group);
    }
    CHECK_OK(ydb_changeset_row_change_count(cs, &n));
    for (i = 0; i < n; i++) {
        CHECK_OK(ydb_changeset_row(cs, i, &c));
        add(out, "R%d %u %zu,%zu %zu,%zu %zu,%zu %zu,%zu %s %s %s/%s\n", c.type, c.changes, c.section, c.row,
            c.new_section, c.new_row, c.original_section, c.original_row, c.final_section, c.final_row,
            c.original_group ? c.original_group : "-", c.final_group ? c.final_group : "-",
            c.collection ? c.collection : "-", c.key ? c.key : "-");
    }
    ydb_changeset_free(cs);
}

/* ---- a: batches into batch callbacks == rows one by one into one-row ones ---- */

typedef struct {
    ydb_database *db;
    ydb_connection *writer, *reader;
    ydb_mappings *maps[NVIEWS];
    vctx views[NVIEWS];
    ydb_txn *txn;
} side;

static void open_side(side *s, int batch) {
    ydb_txn *txn;
    int k;
    REQUIRE_OK(ydb_database_open(NULL, &s->db));
    REQUIRE_OK(ydb_connection_open(s->db, &s->writer));
    REQUIRE_OK(ydb_connection_open(s->db, &s->reader));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(s->reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(s->reader, &txn));
    for (k = 0; k < NVIEWS; k++) {
        s->views[k] = make_view(k);
        REQUIRE_OK(register_view(s->db, NAMES[k], &s->views[k], batch));
        REQUIRE_OK(ydb_mappings_new(NAMES[k], GROUPS[k], 3, &s->maps[k]));
        /* The read began before the view was registered: say so. */
        REQUIRE_OK(ydb_mappings_set_allows_unregistered_view(s->maps[k], 1));
        REQUIRE_OK(ydb_mappings_update(s->maps[k], txn));
    }
    ydb_txn_end(txn);
}

static void close_side(side *s) {
    int k;
    for (k = 0; k < NVIEWS; k++) ydb_mappings_free(s->maps[k]);
    ydb_connection_close(s->reader), ydb_connection_close(s->writer), ydb_database_close(s->db);
}

static unsigned rnd_state;
static unsigned rnd(unsigned n) {
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 8) % n;
}

static char pool[300][12];

/* Writes one random batch to A (checking its batch calls) and to B; says
** whether a key came twice. */
static int random_batch(side *a, side *b, const char *coll, int every_row) {
    const char *keys[20];
    char objects[20][12];
    const void *object_ptrs[20], *meta[20];
    size_t sizes[20], meta_sizes[20], i, j, n = rnd(21), want_group[NVIEWS] = {0}, want_sort[NVIEWS] = {0};
    vctx was[NVIEWS];
    int use_meta = rnd(2), k, dups = 0, exists, last;
    for (i = 0; i < n; i++) {
        keys[i] = i > 0 && rnd(5) == 0 ? keys[rnd((unsigned)i)] : pool[rnd(300)];
        sizes[i] = (size_t)sprintf(objects[i], "%d", (int)rnd(40) - 20);
        object_ptrs[i] = objects[i];
        meta[i] = use_meta && rnd(3) == 0 ? (rnd(3) ? "meta" : "") : NULL;
        meta_sizes[i] = meta[i] ? strlen((const char *)meta[i]) : 0;
    }
    /* The rows each batch callback must be asked for (per the invoke options). */
    for (i = 0; i < n; i++) {
        ydb_view_row row = {NULL, NULL, NULL, 0, NULL, 0};
        row.collection = coll, row.key = keys[i], row.object = objects[i], row.object_size = sizes[i];
        for (j = i + 1, last = 1; j < n; j++) last = last && strcmp(keys[j], keys[i]) != 0;
        dups |= !last;
        if (!last) continue;
        CHECK_OK(ydb_txn_exists(a->txn, coll, keys[i], &exists));
        want_group[OBJ]++, want_sort[OBJ] += group_for(OBJ, &row) != NULL;
        want_group[CMP] += coll[0] == 'c';
        want_group[KEY] += !exists, want_sort[KEY] += group_for(KEY, &row) != NULL;
    }
    memcpy(was, a->views, sizeof was);
    batch_keys = keys, batch_count = n;
    CHECK_OK(ydb_txn_set_objects(a->txn, coll, n, keys, object_ptrs, sizes, use_meta ? meta : NULL,
                                 use_meta ? meta_sizes : NULL));
    for (k = 0; k < NVIEWS; k++) {
        vctx *v = &a->views[k];
        CHECK(v->one_group == was[k].one_group && (k == CMP || v->one_sort == was[k].one_sort));
        CHECK(v->batch_group - was[k].batch_group == (want_group[k] > 0));
        CHECK(v->group_rows - was[k].group_rows == want_group[k]);
        CHECK(v->batch_sort - was[k].batch_sort == (want_sort[k] > 0));
        CHECK(v->sort_rows - was[k].sort_rows == want_sort[k]);
    }
    for (i = 0; i < n; i++) {
        for (j = i + 1; !every_row && j < n && strcmp(keys[j], keys[i]) != 0; j++) {}
        if (every_row || j == n)
            CHECK_OK(ydb_txn_set_object(b->txn, coll, keys[i], objects[i], sizes[i], meta[i], meta_sizes[i]));
    }
    return dups;
}

/* A and B hold the same rows and views, and (`changesets`) give the same changesets. */
static void check_same(side *a, side *b, int changesets) {
    static buf text_a, text_b;
    ydb_notification_list *list_a = NULL, *list_b = NULL;
    int k;
    text_a.used = text_b.used = 0;
    text_a.text[0] = text_b.text[0] = '\0';
    dump(a->writer, &text_a);
    dump(b->writer, &text_b);
    REQUIRE_OK(ydb_connection_begin_long_lived_read(a->reader, &list_a));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(b->reader, &list_b));
    for (k = 0; k < NVIEWS; k++) {
        /* B setting every row of a key may move the row twice: its changeset
        ** can then say "move" where A's one set says "update". */
        dump_changeset(a->maps[k], list_a, changesets ? &text_a : NULL);
        dump_changeset(b->maps[k], list_b, changesets ? &text_b : NULL);
        CHECK(a->views[k].bad == 0);
    }
    CHECK(text_a.used < sizeof text_a.text && strcmp(text_a.text, text_b.text) == 0);
    if (strcmp(text_a.text, text_b.text) != 0) fprintf(stderr, "A:%s\nB:%s\n", text_a.text, text_b.text);
    ydb_notification_list_free(list_a);
    ydb_notification_list_free(list_b);
}

static void run_history(unsigned seed) {
    side a, b;
    int commit, op, dups;
    rnd_state = seed;
    open_side(&a, 1);
    open_side(&b, 0);
    for (commit = 0; commit < 30; commit++) {
        int ops = 1 + (int)rnd(3), failed = check_failed;
        dups = 0;
        REQUIRE_OK(ydb_txn_begin_read_write(a.writer, &a.txn));
        REQUIRE_OK(ydb_txn_begin_read_write(b.writer, &b.txn));
        for (op = 0; op < ops; op++) {
            const char *coll = rnd(7) == 0 ? "d" : "c", *key = pool[rnd(300)];
            unsigned what = rnd(10);
            char object[12];
            size_t size = (size_t)sprintf(object, "%d", (int)rnd(40) - 20);
            if (what < 6) {
                dups |= random_batch(&a, &b, coll, (int)(seed & 1));
            } else if (what < 8) {
                CHECK_OK(ydb_txn_set_object(a.txn, coll, key, object, size, NULL, 0));
                CHECK_OK(ydb_txn_set_object(b.txn, coll, key, object, size, NULL, 0));
            } else {
                CHECK_OK(ydb_txn_remove_object(a.txn, coll, key));
                CHECK_OK(ydb_txn_remove_object(b.txn, coll, key));
            }
        }
        CHECK_OK(ydb_txn_commit(a.txn));
        CHECK_OK(ydb_txn_commit(b.txn));
        check_same(&a, &b, !(seed & 1) || !dups);
        if (check_failed > failed) fprintf(stderr, "(seed %u, commit %d)\n", seed, commit);
    }
    close_side(&a);
    close_side(&b);
}

/* ---- b-f: call counts, refusals, failures, dead handles, count 0 ---- */

/* Sets keys[i] to rank ranks[i] in one ydb_txn_set_objects and commits. */
static int commit_ranks(ydb_connection *conn, const char *coll, size_t n, const char *const *keys, const int *ranks) {
    char text[16][12];
    const void *objects[16];
    size_t sizes[16], i;
    ydb_txn *txn;
    int rc;
    for (i = 0; i < n; i++) sizes[i] = (size_t)sprintf(text[i], "%d", ranks[i]), objects[i] = text[i];
    batch_keys = keys, batch_count = n;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    rc = ydb_txn_set_objects(txn, coll, n, keys, objects, sizes, NULL, NULL);
    if (rc != YDB_OK) return ydb_txn_rollback(txn), rc;
    return ydb_txn_commit(txn);
}

/* The counts since the last call are these (one_sort -1: any); resets them. */
static int counts(vctx *v, int group_calls, size_t group_rows, int sort_calls, size_t sort_rows, int one_sort) {
    int same = v->batch_group == group_calls && v->group_rows == group_rows && v->batch_sort == sort_calls &&
               v->sort_rows == sort_rows && v->one_group == 0 && (one_sort < 0 || v->one_sort == one_sort) && !v->bad;
    if (!same)
        fprintf(stderr, "kind %d: grouping_batch %d calls/%zu rows, sort_key_batch %d/%zu, one-row %d/%d, bad %d\n",
                v->kind, v->batch_group, v->group_rows, v->batch_sort, v->sort_rows, v->one_group, v->one_sort, v->bad);
    v->batch_group = v->batch_sort = v->one_group = v->one_sort = v->bad = 0;
    v->group_rows = v->sort_rows = 0;
    return same;
}

static size_t rows_in(ydb_connection *conn, const char *view) {
    ydb_txn *txn;
    size_t count = 99;
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(view ? ydb_view_count_all(txn, view, &count) : ydb_txn_count_all(txn, &count));
    ydb_txn_end(txn);
    return count;
}

static void test_counts_and_refusals(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    vctx obj = make_view(OBJ), key = make_view(KEY), keyobj = make_view(KEY), keyinv = make_view(KEY);
    vctx cmp = make_view(CMP), late = make_view(OBJ);
    const int ranks[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, plus[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const int dup_ranks[5] = {0, 1, 2, 5, 4};
    const char *keys[10], *dups[5], *bad_key[3] = {"k100", "k\xc3(", "k102"}, *null_key[3] = {"k100", NULL, "k102"};
    const void *objects[3] = {"1", "2", "5"}, *null_object[3] = {"1", NULL, "5"}, *meta[3] = {"m", NULL, "m"};
    size_t sizes[3] = {1, 1, 1}, i;
    uint64_t before = 0, after = 1;
    unsigned char key_bytes[16] = {0};
    int fail, in_view;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    for (i = 0; i < 10; i++) keys[i] = pool[i];
    dups[0] = dups[2] = pool[10], dups[1] = dups[4] = pool[11], dups[3] = pool[3];
    key.flavour_s = keyinv.flavour_s = YDB_FLAVOUR_KEY;
    keyinv.grouping_invoke = YDB_INVOKE_OBJECT_MODIFIED;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_view(db, "obj", &obj, 1));
    CHECK_OK(register_view(db, "key", &key, 1));       /* KEY grouping, KEY sorting */
    CHECK_OK(register_view(db, "keyobj", &keyobj, 1)); /* KEY grouping, OBJECT sorting */
    CHECK_OK(register_view(db, "keyinv", &keyinv, 1)); /* as key, grouping re-run on object changes */
    CHECK_OK(register_view(db, "cmp", &cmp, 1));

    /* b. 10 new rows: each view asked once for 10 groups, then for the keys
    ** of the rows in a group (ranks 3 and 7 left out of obj, k006 of the key
    ** views); the comparator view sorts with its one-row callback. */
    CHECK_OK(commit_ranks(conn, "c", 10, keys, ranks));
    CHECK(counts(&obj, 1, 10, 1, 8, 0) && counts(&key, 1, 10, 1, 9, 0) && counts(&cmp, 1, 10, 0, 0, -1));
    CHECK(counts(&keyobj, 1, 10, 1, 9, 0) && counts(&keyinv, 1, 10, 1, 9, 0));
    /* The same rows with new objects: a KEY grouping or sorting is not re-run. */
    CHECK_OK(commit_ranks(conn, "c", 10, keys, plus));
    CHECK(counts(&obj, 1, 10, 1, 8, 0) && counts(&key, 0, 0, 0, 0, 0) && counts(&cmp, 1, 10, 0, 0, -1));
    CHECK(counts(&keyobj, 0, 0, 1, 9, 0) && counts(&keyinv, 1, 10, 0, 0, 0));
    /* k010 k011 k010 k003 k011: each key once, its last row; KEY forms only
    ** for the 2 new rows. */
    CHECK_OK(commit_ranks(conn, "c", 5, dups, dup_ranks));
    CHECK(counts(&obj, 1, 3, 1, 3, 0) && counts(&key, 1, 2, 1, 2, 0) && counts(&cmp, 1, 3, 0, 0, -1));
    CHECK(counts(&keyobj, 1, 2, 1, 3, 0) && counts(&keyinv, 1, 3, 1, 2, 0));
    CHECK(reads_as(conn, "c", "k010", "2") && reads_as(conn, "c", "k011", "4"));
    /* Another collection: the view of "c" only is not asked. */
    CHECK_OK(commit_ranks(conn, "d", 2, keys, ranks));
    CHECK(counts(&cmp, 0, 0, 0, 0, 0) && counts(&obj, 1, 2, 1, 2, 0) && counts(&key, 1, 2, 1, 2, 0));
    /* f. count 0: YDB_OK, no callback, no new snapshot. */
    CHECK_OK(ydb_database_snapshot(db, &before));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_objects(txn, "c", 0, NULL, NULL, NULL, NULL, NULL));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK_OK(ydb_database_snapshot(db, &after));
    CHECK(before == after && counts(&obj, 0, 0, 0, 0, 0) && counts(&key, 0, 0, 0, 0, 0));
    /* One-row writes and populations call the one-row forms. */
    CHECK_OK(put(conn, "c", "k020", "1", NULL));
    CHECK(obj.batch_group == 0 && obj.batch_sort == 0 && obj.one_group == 1 && obj.one_sort == 1);
    obj.one_group = obj.one_sort = cmp.one_group = cmp.one_sort = 0;
    CHECK_OK(register_view(db, "late", &late, 1));
    CHECK(late.batch_group == 0 && late.batch_sort == 0 && late.one_group == (int)rows_in(conn, NULL));
    /* sort_key_batch needs sort_key and grouping_batch. */
    def.grouping = one_group, def.sorting = one_compare, def.grouping_batch = batch_group;
    def.sort_key_batch = batch_key;
    CHECK_RC(ydb_view_register(db, "refused", &def, &late, NULL), YDB_INVALID_ARGUMENT);
    def.sorting = NULL, def.sort_key = one_key, def.grouping_batch = NULL;
    CHECK_RC(ydb_view_register(db, "refused", &def, &late, NULL), YDB_INVALID_ARGUMENT);

    /* c. Bad input anywhere refuses the whole batch; the transaction goes on. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_RC(ydb_txn_set_objects(txn, "c", 3, null_key, objects, sizes, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "row 1") != NULL);
    CHECK_RC(ydb_txn_set_objects(txn, "c", 3, bad_key, objects, sizes, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_objects(txn, "c", 3, keys, null_object, sizes, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_objects(txn, "c", 3, keys, objects, sizes, meta, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_objects(txn, "c", 3, keys, objects, sizes, NULL, sizes), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_objects(txn, "c", 3, NULL, objects, sizes, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_objects(txn, NULL, 3, keys, objects, sizes, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_objects(NULL, "c", 3, keys, objects, sizes, NULL, NULL), YDB_MISUSE);
    CHECK(counts(&obj, 0, 0, 0, 0, 0) && counts(&cmp, 0, 0, 0, 0, 0));
    CHECK_OK(ydb_txn_set_object(txn, "c", "k050", "1", 1, NULL, 0)); /* still usable */
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(rows_in(conn, NULL) == 16 && reads_as(conn, "c", "k002", "3"));

    /* d. A failing batch callback or a bad answer fails the write and the
    ** commit: nothing of the batch is stored (k002 keeps "3"). */
    in_view = (int)rows_in(conn, "obj");
    for (fail = 1; fail <= 4; fail++) {
        const char *more[3] = {"k103", "k104", "k002"};
        obj.fail = fail;
        batch_keys = more, batch_count = 3;
        REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        CHECK_RC(ydb_txn_set_objects(txn, "c", 3, more, objects, sizes, NULL, NULL), YDB_CALLBACK_FAILED);
        CHECK(strstr(ydb_errmsg(), fail == 4 ? "sort_key_batch" : "grouping_batch") != NULL);
        CHECK(fail == 1 || fail == 4 || obj.set_rc == YDB_INVALID_ARGUMENT);
        CHECK_RC(ydb_txn_commit(txn), YDB_CALLBACK_FAILED);
        CHECK(rows_in(conn, NULL) == 16 && (int)rows_in(conn, "obj") == in_view && reads_as(conn, "c", "k002", "3"));
    }
    obj.fail = 0;

    /* e. The answer handles: NULL, or kept after their call, give YDB_MISUSE. */
    CHECK(stale_group != NULL && stale_sort != NULL);
    CHECK_RC(ydb_group_batch_set(NULL, keys, 3, sizes), YDB_MISUSE);
    CHECK_RC(ydb_group_batch_set(stale_group, keys, 3, sizes), YDB_MISUSE);
    CHECK_RC(ydb_sort_key_batch_set(NULL, key_bytes, sizes), YDB_MISUSE);
    CHECK_RC(ydb_sort_key_batch_set(stale_sort, key_bytes, sizes), YDB_MISUSE);
    CHECK(rows_in(conn, NULL) == 16 && obj.bad == 0);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- g. population_batches: a population asks the batch forms, a chunk of
** rows at a time (indexes count the chunk's rows), and builds the view the
** one-row forms build; one-row writes still use the one-row forms ---- */
static int chunk_group(void *ctx, ydb_txn *txn, size_t count, const size_t *indexes, const ydb_view_row *rows,
                       ydb_group_batch *result) {
    vctx *v = (vctx *)ctx;
    const char *names[3] = {GROUPS[v->kind][0], GROUPS[v->kind][1], GROUPS[v->kind][2]};
    size_t choices[512], i;
    (void)txn;
    v->batch_group++, v->group_rows += count;
    if (count == 0 || count > 512) return v->bad++, 1;
    for (i = 0; i < count; i++) {
        const char *group = group_for(v->kind, &rows[i]);
        if (indexes[i] != i) v->bad++;
        for (choices[i] = 0; group && names[choices[i]] != group; choices[i]++) {}
        if (!group) choices[i] = YDB_NO_GROUP;
    }
    return ydb_group_batch_set(result, names, 3, choices);
}

static int chunk_key(void *ctx, ydb_txn *txn, size_t count, const size_t *indexes, const char *const *groups,
                     const ydb_view_row *rows, ydb_sort_key_batch *result) {
    vctx *v = (vctx *)ctx;
    static unsigned char keys[512 * 32];
    size_t sizes[512], used = 0, i;
    (void)txn;
    v->batch_sort++, v->sort_rows += count;
    if (count == 0 || count > 512) return v->bad++, 1;
    for (i = 0; i < count; i++) {
        const char *group = group_for(v->kind, &rows[i]);
        if ((i > 0 && indexes[i] <= indexes[i - 1]) || !group || strcmp(group, groups[i]) != 0) v->bad++;
        sizes[i] = encode_key(&rows[i], keys + used);
        used += sizes[i];
    }
    return ydb_sort_key_batch_set(result, keys, sizes);
}

static void test_population_batches(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    vctx batched = make_view(OBJ), single = make_view(OBJ);
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    char key[16], object[16];
    buf *shown[2];
    int i, which;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK(def.population_batches == 0);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%03d", i % 300 + (i / 300) * 1000);
        snprintf(object, sizeof object, "%d", (i * 7919) % 1000 - 500);
        CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
    }
    CHECK_OK(ydb_txn_commit(txn));
    def.grouping = one_group, def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = one_key, def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.grouping_batch = chunk_group, def.sort_key_batch = chunk_key;
    def.population_batches = 1;
    CHECK_OK(ydb_view_register(db, "batched", &def, &batched, NULL));
    def.population_batches = 0;
    CHECK_OK(ydb_view_register(db, "single", &def, &single, NULL));
    /* Every row grouped in batches, each grouped row keyed in batches; no
    ** one-row call. Without the flag, one-row calls only. */
    CHECK(batched.batch_group > 0 && batched.group_rows == 1000 && batched.one_group == 0);
    CHECK(batched.batch_sort > 0 && batched.sort_rows > 0 && batched.one_sort == 0 && batched.bad == 0);
    CHECK(single.batch_group == 0 && single.one_group == 1000 && single.one_sort == (int)batched.sort_rows);
    for (which = 0; which < 2; which++) {
        shown[which] = calloc(1, sizeof *shown[which]);
        REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
        for (i = 0; i < 3; i++)
            CHECK_OK(ydb_view_enumerate_rows(txn, which ? "single" : "batched", GROUPS[OBJ][i], 0, YDB_INDEX_END, 0,
                                             add_view_row, shown[which]));
        ydb_txn_end(txn);
        CHECK(shown[which]->used > 1000);
    }
    CHECK(strcmp(shown[0]->text, shown[1]->text) == 0);
    free(shown[0]);
    free(shown[1]);
    /* A one-row write asks the one-row forms, flag or not. */
    CHECK_OK(put(conn, "c", "k999", "1", NULL));
    CHECK(batched.one_group == 1 && batched.one_sort == 1);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

int main(void) {
    unsigned seed;
    int i;
    for (i = 0; i < 300; i++) sprintf(pool[i], "k%03d", i);
    test_counts_and_refusals();
    test_population_batches();
    for (seed = 1; seed <= 40; seed++) run_history(seed);
    return check_summary();
}
