/*
** test_search_views.c -- search views through the C ABI: registration; a
** new query set in a transaction gives exactly the rows entering and
** leaving (checked as row changes and as an edit script applied to the
** table the mappings showed); commits that change a row's words move it in
** and out; a re-sort of the parent moves the results; background searches
** queued faster than they run (every completion comes once, on the
** search's thread, in the order given, and the last query always applies);
** typing into a search view while another thread commits; misuse of every
** function; closing the database with searches pending -- also from inside
** a completion -- where each completion still comes once.
**
** Rows are "items"/kN: object "GROUP:RANK" (view_helpers' view groups by
** GROUP and sorts by RANK), metadata the row's words, which the index reads.
** The test keeps each row's words as a bit mask to know what a query must
** find. Prints its timings and "N passed, N failed".
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "view_helpers.h"

#define PARENT "byRank"
#define INDEX "text"
#define FOUND "found"

static const char *const words[] = {"apple", "apricot", "banana", "blueberry",
                                    "cherry", "coconut", "date", "dragonfruit"};
#define WORD_COUNT 8
static const char *const groups[] = {"a", "b", "c"};
#define GROUP_COUNT 3

/* ---- random numbers: xorshift32, one state per thread ---- */

static unsigned next_random(unsigned *state) {
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* One to three of the words, as a mask. */
static unsigned random_words(unsigned *state) {
    unsigned mask = 0, n = 1 + next_random(state) % 3, i;
    for (i = 0; i < n; i++) mask |= 1u << (next_random(state) % WORD_COUNT);
    return mask;
}

/* ---- rows ---- */

static void words_text(unsigned mask, char *out, size_t size) {
    size_t used = 0;
    int w;
    out[0] = '\0';
    for (w = 0; w < WORD_COUNT; w++)
        if (mask & (1u << w)) used += (size_t)snprintf(out + used, size - used, "%s%s", used ? " " : "", words[w]);
}

/* Row i: group groups[i % 3], rank i, the words of `mask`. */
static int set_item(ydb_txn *txn, long i, unsigned mask) {
    char key[24], object[32], text[128];
    snprintf(key, sizeof key, "k%ld", i);
    snprintf(object, sizeof object, "%s:%07ld", groups[i % GROUP_COUNT], i);
    words_text(mask, text, sizeof text);
    return ydb_txn_set_object(txn, "items", key, object, strlen(object), text, strlen(text));
}

/* Whether words `mask` match `query` in the forms this test uses: "" and
** blanks match nothing, "pre*" a word starting with pre, "word" itself. */
static int matches(unsigned mask, const char *query) {
    size_t n = strlen(query);
    int prefix, w;
    while (n > 0 && query[0] == ' ') { query++; n--; }
    if (n == 0) return 0;
    prefix = query[n - 1] == '*';
    if (prefix) n--;
    for (w = 0; w < WORD_COUNT; w++) {
        if (!(mask & (1u << w))) continue;
        if (prefix ? strncmp(words[w], query, n) == 0 : strlen(words[w]) == n && strncmp(words[w], query, n) == 0)
            return 1;
    }
    return 0;
}

/* ---- the index: the metadata's words, one column ---- */

static int text_of(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_fts_columns *columns) {
    (void)ctx; (void)txn;
    if (row->metadata == NULL) return 0;
    return ydb_fts_columns_set(columns, 0, (const char *)row->metadata, row->metadata_size);
}

static int register_index(ydb_database *db, const char *name) {
    static const char *const columns[] = {"body"};
    ydb_fts_index_definition def = YDB_FTS_INDEX_DEFINITION_INIT;
    def.columns = columns;
    def.column_count = 1;
    def.extract = text_of;
    def.extract_flavour = YDB_FLAVOUR_METADATA;
    def.version_tag = "1";
    return ydb_fts_index_register(db, name, &def, NULL, NULL, NULL);
}

/* ---- a database with the parent view, the index and `rows` random rows ---- */

typedef struct {
    ydb_database *db;
    ydb_connection *writer, *reader;
    view_counter counter;
    long rows;
    unsigned *masks;   /* each row's words, as last written */
    unsigned seed;
} search_fixture;

static void setup(search_fixture *f, long rows, unsigned seed) {
    ydb_txn *txn;
    long i;
    memset(f, 0, sizeof *f);
    f->rows = rows;
    f->seed = seed;
    f->masks = (unsigned *)calloc((size_t)(rows > 0 ? rows : 1), sizeof *f->masks);
    REQUIRE_OK(f->masks != NULL ? YDB_OK : YDB_ERROR);
    REQUIRE_OK(ydb_database_open(NULL, &f->db));
    REQUIRE_OK(ydb_database_set_max_commits_behind(f->db, 1000000));
    REQUIRE_OK(ydb_connection_open(f->db, &f->writer));
    REQUIRE_OK(ydb_connection_open(f->db, &f->reader));
    REQUIRE_OK(register_standard(f->db, PARENT, "1", 0, &f->counter));
    REQUIRE_OK(register_index(f->db, INDEX));
    if (rows == 0) return;
    REQUIRE_OK(ydb_txn_begin_read_write(f->writer, &txn));
    for (i = 0; i < rows; i++) {
        f->masks[i] = random_words(&f->seed);
        REQUIRE_OK(set_item(txn, i, f->masks[i]));
    }
    REQUIRE_OK(ydb_txn_commit(txn));
}

static void teardown(search_fixture *f) {
    ydb_connection_close(f->reader);
    ydb_connection_close(f->writer);
    if (f->db != NULL) CHECK_OK(ydb_database_close(f->db));
    free(f->masks);
}

static int set_query(ydb_connection *conn, const char *view, const char *query) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(conn, &txn);
    if (rc != YDB_OK) return rc;
    rc = ydb_search_view_set_query(txn, view, query);
    if (rc != YDB_OK) {
        ydb_txn_rollback(txn);
        return rc;
    }
    return ydb_txn_commit(txn);
}

/* The query of `view` as a fresh read sees it ("(error)" on failure). */
static const char *query_of(ydb_connection *conn, const char *view) {
    static char text[128];
    ydb_txn *txn = NULL;
    char *query = NULL;
    snprintf(text, sizeof text, "(error)");
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return text;
    if (ydb_search_view_query(txn, view, &query) == YDB_OK) snprintf(text, sizeof text, "%s", query);
    ydb_free(query);
    ydb_txn_end(txn);
    return text;
}

/* ---- what a view shows, against what the rows' words say ---- */

typedef struct {
    const search_fixture *f;
    const char *query;
    long expected;    /* the next row expected, -1 past the last */
    long group;
    int same;
    long seen;
} results_check;

static long next_match(const results_check *c, long from) {
    long i;
    for (i = from; i < c->f->rows; i += GROUP_COUNT)
        if (matches(c->f->masks[i], c->query)) return i;
    return -1;
}

static int check_key(void *ctx, const char *collection, const char *key, size_t index) {
    results_check *c = (results_check *)ctx;
    long number = strtol(key + 1, NULL, 10);
    (void)collection; (void)index;
    c->seen++;
    if (number != c->expected) {
        fprintf(stderr, "  group %s: found k%ld where k%ld was expected\n", groups[c->group], number, c->expected);
        c->same = 0;
        return 1;
    }
    c->expected = next_match(c, number + GROUP_COUNT);
    return 0;
}

/* Whether `view` shows, in each group in rank order, exactly the rows whose
** words (f->masks) match `query`; `*shown` gets how many rows it shows. */
static int shows_matches(const search_fixture *f, const char *view, const char *query, long *shown) {
    results_check c;
    ydb_txn *txn = NULL;
    size_t groups_shown = 0;
    long g, groups_expected = 0;
    memset(&c, 0, sizeof c);
    c.f = f;
    c.query = query;
    c.same = 1;
    if (ydb_txn_begin_read(f->reader, &txn) != YDB_OK) return 0;
    for (g = 0; g < GROUP_COUNT && c.same; g++) {
        c.group = g;
        c.expected = next_match(&c, g);
        if (c.expected >= 0) groups_expected++;
        if (ydb_view_enumerate_keys(txn, view, groups[g], 0, YDB_INDEX_END, 0, check_key, &c) != YDB_OK) c.same = 0;
        if (c.same && c.expected != -1) {
            fprintf(stderr, "  group %s: k%ld is missing\n", groups[g], c.expected);
            c.same = 0;
        }
    }
    if (ydb_view_group_count(txn, view, &groups_shown) != YDB_OK || (long)groups_shown != groups_expected) c.same = 0;
    ydb_txn_end(txn);
    if (shown != NULL) *shown = c.seen;
    return c.same;
}

/* ---- tables: what mappings show, and edit scripts applied to them ---- */

typedef struct {
    size_t sections;
    char group[GROUP_COUNT][8];
    size_t rows[GROUP_COUNT];
    long *row[GROUP_COUNT];   /* key numbers, `capacity` each */
    size_t capacity;
} table;

static void table_init(table *t, size_t capacity) {
    size_t s;
    memset(t, 0, sizeof *t);
    t->capacity = capacity > 0 ? capacity : 1;
    for (s = 0; s < GROUP_COUNT; s++) {
        t->row[s] = (long *)calloc(t->capacity, sizeof(long));
        REQUIRE_OK(t->row[s] != NULL ? YDB_OK : YDB_ERROR);
    }
}

static void table_free(table *t) {
    size_t s;
    for (s = 0; s < GROUP_COUNT; s++) free(t->row[s]);
}

static void table_copy(table *to, const table *from) {
    size_t s;
    to->sections = from->sections;
    for (s = 0; s < GROUP_COUNT; s++) {
        memcpy(to->group[s], from->group[s], sizeof to->group[s]);
        to->rows[s] = from->rows[s];
        memcpy(to->row[s], from->row[s], from->rows[s] * sizeof(long));
    }
}

/* The table as "a[1 2] b[] c[3]": sections, each with its rows' key numbers. */
static const char *describe(const table *t) {
    static char text[1024];
    size_t s, r, used = 0;
    text[0] = '\0';
    for (s = 0; s < t->sections && used < sizeof text; s++) {
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s[", s ? " " : "", t->group[s]);
        for (r = 0; r < t->rows[s] && used < sizeof text; r++)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%ld", r ? " " : "", t->row[s][r]);
        if (used < sizeof text) used += (size_t)snprintf(text + used, sizeof text - used, "]");
    }
    return text;
}

static int same_table(const table *a, const table *b) {
    size_t s;
    if (a->sections != b->sections) return 0;
    for (s = 0; s < a->sections; s++) {
        if (strcmp(a->group[s], b->group[s]) != 0 || a->rows[s] != b->rows[s]) return 0;
        if (memcmp(a->row[s], b->row[s], a->rows[s] * sizeof(long)) != 0) return 0;
    }
    return 1;
}

/* Reads the table the mappings show now (at the reader's snapshot). */
static int read_table(search_fixture *f, ydb_mappings *m, const char *view, table *out) {
    ydb_txn *txn = NULL;
    size_t sections = 0, s, r;
    int ok = 1;
    out->sections = 0;
    if (ydb_txn_begin_read(f->reader, &txn) != YDB_OK) return 0;
    if (ydb_mappings_number_of_sections(m, &sections) != YDB_OK || sections > GROUP_COUNT) ok = 0;
    for (s = 0; ok && s < sections; s++) {
        const char *group = NULL;
        size_t count = 0;
        if (ydb_mappings_group_for_section(m, s, &group) != YDB_OK || strlen(group) >= sizeof out->group[s] ||
            ydb_mappings_number_of_items_in_section(m, s, &count) != YDB_OK || count > out->capacity) {
            ok = 0;
            break;
        }
        strcpy(out->group[s], group);
        out->rows[s] = count;
        out->sections = s + 1;
        for (r = 0; ok && r < count; r++) {
            const char *view_group = NULL;
            size_t index = 0;
            char *collection = NULL, *key = NULL;
            if (ydb_mappings_group_and_index_for_row(m, r, s, &view_group, &index) != YDB_OK ||
                ydb_view_key_at(txn, view, view_group, index, &collection, &key) != YDB_OK)
                ok = 0;
            else
                out->row[s][r] = strtol(key + 1, NULL, 10);
            ydb_free(collection);
            ydb_free(key);
        }
    }
    if (!ok) fprintf(stderr, "  reading the table failed: %s\n", ydb_errmsg());
    ydb_txn_end(txn);
    return ok;
}

static void insert_at(long *rows, size_t *count, size_t at, long value) {
    memmove(rows + at + 1, rows + at, (*count - at) * sizeof(long));
    rows[at] = value;
    (*count)++;
}

static long remove_at(long *rows, size_t *count, size_t at) {
    long value = rows[at];
    memmove(rows + at, rows + at + 1, (*count - at - 1) * sizeof(long));
    (*count)--;
    return value;
}

/* Applies the changeset's edit script to a copy of `old`, each step checked
** against the table as it then stands; true when that gives `new_table`. */
static int steps_give(const ydb_changeset *cs, const table *old, const table *new_table, const char *context) {
    table t;
    size_t count = 0, i;
    int ok = 1;
    table_init(&t, old->capacity > new_table->capacity ? old->capacity : new_table->capacity);
    table_copy(&t, old);
    if (ydb_changeset_step_count(cs, &count) != YDB_OK) ok = 0;
    for (i = 0; ok && i < count; i++) {
        ydb_edit_step step;
        long key;
        if (ydb_changeset_step(cs, i, &step) != YDB_OK) { ok = 0; break; }
        key = step.key != NULL ? strtol(step.key + 1, NULL, 10) : -1;
        switch (step.type) {
        case YDB_STEP_REMOVE_SECTION:
            ok = step.section < t.sections && t.rows[step.section] == 0 && strcmp(t.group[step.section], step.group) == 0;
            if (ok) {
                long *rows = t.row[step.section];
                size_t s;
                for (s = step.section; s + 1 < t.sections; s++) {
                    memcpy(t.group[s], t.group[s + 1], sizeof t.group[s]);
                    t.rows[s] = t.rows[s + 1];
                    t.row[s] = t.row[s + 1];
                }
                t.row[t.sections - 1] = rows;
                t.sections--;
            }
            break;
        case YDB_STEP_INSERT_SECTION:
            ok = step.section <= t.sections && t.sections < GROUP_COUNT && strlen(step.group) < sizeof t.group[0];
            if (ok) {
                long *spare = t.row[t.sections];
                size_t s;
                for (s = t.sections; s > step.section; s--) {
                    memcpy(t.group[s], t.group[s - 1], sizeof t.group[s]);
                    t.rows[s] = t.rows[s - 1];
                    t.row[s] = t.row[s - 1];
                }
                strcpy(t.group[step.section], step.group);
                t.rows[step.section] = 0;
                t.row[step.section] = spare;
                t.sections++;
            }
            break;
        case YDB_STEP_REMOVE_ROW:
        case YDB_STEP_MOVE_ROW: {
            long taken;
            ok = step.section < t.sections && step.row < t.rows[step.section];
            if (!ok) break;
            taken = remove_at(t.row[step.section], &t.rows[step.section], step.row);
            ok = key < 0 || key == taken;
            if (ok && step.type == YDB_STEP_MOVE_ROW) {
                ok = step.to_section < t.sections && step.to_row <= t.rows[step.to_section];
                if (ok) insert_at(t.row[step.to_section], &t.rows[step.to_section], step.to_row, taken);
            }
            break;
        }
        case YDB_STEP_INSERT_ROW:
            ok = step.section < t.sections && step.row <= t.rows[step.section] && t.rows[step.section] < t.capacity;
            if (ok && key < 0) {
                ok = step.final_section < new_table->sections && step.final_row < new_table->rows[step.final_section];
                if (ok) key = new_table->row[step.final_section][step.final_row];
            }
            if (ok) insert_at(t.row[step.section], &t.rows[step.section], step.row, key);
            break;
        case YDB_STEP_RELOAD_ROW:
            ok = step.section < t.sections && step.row < t.rows[step.section] && step.section == step.final_section &&
                 step.row == step.final_row && (key < 0 || t.row[step.section][step.row] == key);
            break;
        default:
            ok = 0;
        }
        if (!ok) fprintf(stderr, "  %s: step %zu (type %d, section %zu, row %zu) does not apply\n", context, i,
                         step.type, step.section, step.row);
    }
    if (ok && !same_table(&t, new_table)) {
        fprintf(stderr, "  %s: the steps do not give the new table\n", context);
        fprintf(stderr, "    old  %s\n", describe(old));
        fprintf(stderr, "    got  %s\n", describe(&t));
        fprintf(stderr, "    new  %s\n", describe(new_table));
        ok = 0;
    }
    table_free(&t);
    return ok;
}

/* ---- mappings over a view, kept by the reader in a long-lived read ---- */

static ydb_mappings *start_mappings(search_fixture *f, const char *view) {
    ydb_mappings *m = NULL;
    ydb_txn *txn = NULL;
    REQUIRE_OK(ydb_mappings_new(view, groups, GROUP_COUNT, &m));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(f->reader, &txn));
    REQUIRE_OK(ydb_mappings_update(m, txn));
    ydb_txn_end(txn);
    return m;
}

/* Moves the reader forward; the changeset of what it skipped (or NULL). */
static ydb_changeset *catch_up(search_fixture *f, ydb_mappings *m) {
    ydb_notification_list *skipped = NULL;
    ydb_changeset *cs = NULL;
    CHECK_OK(ydb_connection_begin_long_lived_read(f->reader, &skipped));
    CHECK_OK(ydb_changeset_new(m, skipped, &cs));
    ydb_notification_list_free(skipped);
    return cs;
}

/* Catches up, checks the edit script against the tables before and after,
** and leaves the new table in *t. Returns the changeset's step count. */
static size_t catch_up_checked(search_fixture *f, ydb_mappings *m, const char *view, table *t, const char *context) {
    table next;
    ydb_changeset *cs = catch_up(f, m);
    size_t steps = 0;
    table_init(&next, t->capacity);
    CHECK(read_table(f, m, view, &next));
    if (cs != NULL) {
        CHECK(steps_give(cs, t, &next, context));
        CHECK_OK(ydb_changeset_step_count(cs, &steps));
        ydb_changeset_free(cs);
    }
    table_copy(t, &next);
    table_free(&next);
    return steps;
}

/* The row changes of a changeset as "insert k1 delete k0 " (in its order). */
static const char *row_changes(const ydb_changeset *cs) {
    static char text[512];
    size_t count = 0, i, used = 0;
    text[0] = '\0';
    if (cs == NULL || ydb_changeset_row_change_count(cs, &count) != YDB_OK) return "(error)";
    for (i = 0; i < count; i++) {
        ydb_row_change change;
        const char *kind;
        if (ydb_changeset_row(cs, i, &change) != YDB_OK) return "(error)";
        kind = change.type == YDB_CHANGE_INSERT ? "insert" : change.type == YDB_CHANGE_DELETE ? "delete"
             : change.type == YDB_CHANGE_MOVE ? "move" : "update";
        used += (size_t)snprintf(text + used, sizeof text - used, "%s %s ", kind, change.key ? change.key : "?");
        if (used >= sizeof text) break;
    }
    return text;
}

/* ---- completions ---- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int calls;
    pthread_t queuing_thread;
    int on_queuing_thread;   /* completions run on the thread that queued */
} completions;

typedef struct search_slot {
    completions *all;
    int calls;
    int status;
    int applied;
    int position;            /* its place among all completions, from 0 */
    int message_null;
    char message[256];
    /* Set: the completion searches chain_query in chain_view of chain_db. */
    ydb_database *chain_db;
    const char *chain_view, *chain_query;
    struct search_slot *chain_slot;
    int chain_rc;
    /* Set: the completion closes this database. */
    ydb_database *close_db;
    int close_rc;
} search_slot;

static void completions_init(completions *all) {
    memset(all, 0, sizeof *all);
    pthread_mutex_init(&all->lock, NULL);
    pthread_cond_init(&all->changed, NULL);
    all->queuing_thread = pthread_self();
}

static void completions_destroy(completions *all) {
    pthread_mutex_destroy(&all->lock);
    pthread_cond_destroy(&all->changed);
}

static void slot_init(search_slot *slot, completions *all) {
    memset(slot, 0, sizeof *slot);
    slot->all = all;
    slot->status = -1;
    slot->applied = -1;
    slot->position = -1;
    slot->chain_rc = -1;
    slot->close_rc = -1;
}

static void on_searched(void *ctx, int status, int applied, const char *message) {
    search_slot *slot = (search_slot *)ctx;
    completions *all = slot->all;
    int chain_rc = -1, close_rc = -1;
    /* Calls back into the library first, outside the test's lock. */
    if (slot->chain_db != NULL)
        chain_rc = ydb_search_view_search(slot->chain_db, slot->chain_view, slot->chain_query, on_searched,
                                          slot->chain_slot);
    if (slot->close_db != NULL) close_rc = ydb_database_close(slot->close_db);
    pthread_mutex_lock(&all->lock);
    slot->calls++;
    slot->status = status;
    slot->applied = applied;
    slot->message_null = message == NULL;
    snprintf(slot->message, sizeof slot->message, "%s", message != NULL ? message : "");
    slot->position = all->calls++;
    slot->chain_rc = chain_rc;
    slot->close_rc = close_rc;
    if (pthread_equal(pthread_self(), all->queuing_thread)) all->on_queuing_thread++;
    pthread_cond_broadcast(&all->changed);
    pthread_mutex_unlock(&all->lock);
}

/* Waits (at most `seconds`) until `count` completions came; true if they did. */
static int wait_for(completions *all, int count, int seconds) {
    struct timespec deadline;
    int reached;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    pthread_mutex_lock(&all->lock);
    while (all->calls < count && pthread_cond_timedwait(&all->changed, &all->lock, &deadline) == 0) {}
    reached = all->calls >= count;
    pthread_mutex_unlock(&all->lock);
    if (!reached) fprintf(stderr, "  only %d of %d completions came\n", all->calls, count);
    return reached;
}

static int search(ydb_database *db, const char *view, const char *query, search_slot *slot) {
    return ydb_search_view_search(db, view, query, on_searched, slot);
}

/* ---- 1. queries set in transactions; commits; a re-sort of the parent ---- */

static int by_suffix_descending(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                                const ydb_view_row *b, int *out_order) {
    return sort_by_suffix(ctx, txn, group, b, a, out_order);
}

static void test_queries_in_transactions(void) {
    search_fixture f;
    ydb_mappings *m;
    ydb_changeset *cs;
    ydb_txn *txn;
    table t;
    char *query = NULL;
    uint64_t before = 0, after = 0;
    int outcome = 99, flag = -1;
    size_t count = 0, section = 9, row = 9;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    view_counter resorted = {0};

    setup(&f, 0, 1);
    CHECK_OK(put(f.writer, "items", "k0", "a:0000000", "apple banana"));
    CHECK_OK(put(f.writer, "items", "k1", "a:0000001", "apricot"));
    CHECK_OK(put(f.writer, "items", "k2", "b:0000002", "banana"));
    CHECK_OK(put(f.writer, "items", "k3", "b:0000003", "apple"));
    CHECK_OK(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "apple", &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK(key_at_is(f.reader, FOUND, "a", 0, "k0") && key_at_is(f.reader, FOUND, "b", 0, "k3"));
    CHECK(group_count(f.reader, FOUND, "a") == 1 && group_count(f.reader, FOUND, "b") == 1);
    CHECK(strcmp(query_of(f.reader, FOUND), "apple") == 0);

    m = start_mappings(&f, FOUND);
    table_init(&t, 8);
    CHECK(read_table(&f, m, FOUND, &t));
    /* "ap*": k1 enters at (0, 1), nothing else changes. */
    CHECK_OK(set_query(f.writer, FOUND, "ap*"));
    cs = catch_up(&f, m);
    CHECK(strcmp(row_changes(cs), "insert k1 ") == 0);
    CHECK_OK(ydb_changeset_row_new_index_path(cs, 0, &section, &row));
    CHECK(section == 0 && row == 1);
    CHECK_OK(ydb_changeset_step_count(cs, &count));
    CHECK(count == 1);
    ydb_changeset_free(cs);
    CHECK(read_table(&f, m, FOUND, &t));
    CHECK(strcmp(query_of(f.reader, FOUND), "ap*") == 0);

    /* Commits changing a row's words move it in and out. */
    CHECK_OK(put(f.writer, "items", "k2", "b:0000002", "apricot jam"));
    CHECK_OK(put(f.writer, "items", "k0", "a:0000000", "cherry"));
    count = catch_up_checked(&f, m, FOUND, &t, "words changed");
    CHECK(strcmp(describe(&t), "a[1] b[2 3] c[]") == 0);

    /* The same query again commits nothing. */
    CHECK_OK(ydb_database_snapshot(f.db, &before));
    CHECK_OK(set_query(f.writer, FOUND, "ap*"));
    CHECK_OK(ydb_database_snapshot(f.db, &after));
    CHECK(before == after);

    /* A query set and read back in one transaction; a rollback keeps the old one. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_search_view_set_query(txn, FOUND, "cherry"));
    CHECK_OK(ydb_search_view_query(txn, FOUND, &query));
    CHECK(query != NULL && strcmp(query, "cherry") == 0);
    ydb_free(query);
    CHECK_OK(ydb_view_count_all(txn, FOUND, &count));
    CHECK(count == 1);
    CHECK_OK(ydb_txn_rollback(txn));
    CHECK(strcmp(query_of(f.reader, FOUND), "ap*") == 0);

    /* Other FTS5 forms; the empty and a blank query match nothing. */
    CHECK_OK(set_query(f.writer, FOUND, "banana OR cherry"));
    catch_up_checked(&f, m, FOUND, &t, "banana OR cherry");
    CHECK(strcmp(describe(&t), "a[0] b[] c[]") == 0);
    CHECK_OK(set_query(f.writer, FOUND, "  "));
    cs = catch_up(&f, m);
    CHECK(strcmp(row_changes(cs), "delete k0 ") == 0);
    ydb_changeset_free(cs);
    CHECK(read_table(&f, m, FOUND, &t));
    CHECK(strcmp(describe(&t), "a[] b[] c[]") == 0);
    CHECK_OK(set_query(f.writer, FOUND, "ap* OR cherry"));
    catch_up_checked(&f, m, FOUND, &t, "ap* OR cherry");
    CHECK(strcmp(describe(&t), "a[0 1] b[2 3] c[]") == 0);

    /* A re-sort of the parent reorders the results: moves, checked as steps. */
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = by_suffix_descending;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "2";
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_view_set_definition(txn, PARENT, &def, &resorted, counter_destroy));
    CHECK_OK(ydb_txn_commit(txn));
    catch_up_checked(&f, m, FOUND, &t, "parent re-sorted");
    CHECK(strcmp(describe(&t), "a[1 0] b[3 2] c[]") == 0);

    /* Unregistering the parent unregisters the search view too. */
    CHECK_OK(ydb_view_unregister(f.db, PARENT));
    REQUIRE_OK(ydb_txn_begin_read(f.writer, &txn));
    CHECK_OK(ydb_view_is_registered(txn, FOUND, &flag));
    CHECK(flag == 0);
    ydb_txn_end(txn);
    CHECK(strcmp(query_of(f.writer, FOUND), "(error)") == 0);

    table_free(&t);
    ydb_mappings_free(m);
    teardown(&f);
    CHECK(resorted.destroyed == 1);
}

/* ---- 2. background searches ---- */

static void test_background_searches(void) {
    static const char *const typed[] = {"b*", "bl*", "blu*", "blue*", "blueb*"};
    enum { TYPED = 5 };
    search_fixture f;
    completions all;
    search_slot slots[TYPED], nosuch, parent, malformed, tail, first, chained;
    long shown = 0;
    int i, outcome = 99, in_order = 1, superseded = 0;

    setup(&f, 600, 7);
    CHECK_OK(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, NULL, &outcome));   /* NULL: "" */
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK(strcmp(query_of(f.reader, FOUND), "") == 0);
    CHECK(group_count(f.reader, FOUND, "a") == 0);

    /* Typed faster than searched: each completion once, in order, on the
    ** search's thread; the last query applies. */
    completions_init(&all);
    for (i = 0; i < TYPED; i++) {
        slot_init(&slots[i], &all);
        CHECK_OK(search(f.db, FOUND, typed[i], &slots[i]));
    }
    CHECK(wait_for(&all, TYPED, 60));
    for (i = 0; i < TYPED; i++) {
        CHECK(slots[i].calls == 1 && slots[i].status == YDB_OK && slots[i].message_null);
        if (slots[i].position != i) in_order = 0;
        if (slots[i].applied == 0) superseded++;
    }
    CHECK(in_order);
    CHECK(slots[TYPED - 1].applied == 1);
    CHECK(all.on_queuing_thread == 0);
    CHECK(strcmp(query_of(f.reader, FOUND), "blueb*") == 0);
    CHECK(shows_matches(&f, FOUND, "blueb*", &shown));
    CHECK(shown > 0);
    printf("background: %d of %d typed queries superseded, %ld rows found\n", superseded, TYPED, shown);

    /* Failures reach the completion with their message; the results stay. */
    slot_init(&nosuch, &all);
    slot_init(&parent, &all);
    slot_init(&malformed, &all);
    CHECK_OK(search(f.db, "nosuch", "apple", &nosuch));
    CHECK_OK(search(f.db, PARENT, "apple", &parent));
    CHECK_OK(search(f.db, FOUND, "blue AND", &malformed));
    CHECK(wait_for(&all, TYPED + 3, 60));
    CHECK(nosuch.calls == 1 && nosuch.status == YDB_NOTFOUND && nosuch.applied == 0);
    CHECK(strstr(nosuch.message, "nosuch") != NULL);
    CHECK(parent.calls == 1 && parent.status == YDB_NOTFOUND && strstr(parent.message, PARENT) != NULL);
    CHECK(malformed.calls == 1 && malformed.status == YDB_INVALID_ARGUMENT && !malformed.message_null);
    CHECK(strstr(malformed.message, "invalid full-text query") != NULL);
    CHECK(strcmp(query_of(f.reader, FOUND), "blueb*") == 0);
    CHECK(shows_matches(&f, FOUND, "blueb*", NULL));

    /* No completion at all; a later search of the view completes after it. */
    slot_init(&tail, &all);
    CHECK_OK(ydb_search_view_search(f.db, FOUND, "c*", NULL, NULL));
    CHECK_OK(search(f.db, FOUND, "co*", &tail));
    CHECK(wait_for(&all, TYPED + 4, 60));
    CHECK(tail.calls == 1 && tail.status == YDB_OK && tail.applied == 1);
    CHECK(shows_matches(&f, FOUND, "co*", NULL));

    /* A completion may search again. */
    slot_init(&first, &all);
    slot_init(&chained, &all);
    first.chain_db = f.db;
    first.chain_view = FOUND;
    first.chain_query = "date";
    first.chain_slot = &chained;
    CHECK_OK(search(f.db, FOUND, "cherry", &first));
    CHECK(wait_for(&all, TYPED + 6, 60));
    CHECK(first.calls == 1 && first.applied == 1 && first.chain_rc == YDB_OK);
    CHECK(chained.calls == 1 && chained.status == YDB_OK && chained.applied == 1);
    CHECK(chained.position == first.position + 1);
    CHECK(shows_matches(&f, FOUND, "date", NULL));
    CHECK(all.on_queuing_thread == 0);

    teardown(&f);
    completions_destroy(&all);
}

/* ---- 3. typing while another thread commits ---- */

typedef struct {
    search_fixture *f;
    volatile int stop;
    long commits;
    int failures;
    pthread_mutex_t lock;   /* guards f->masks */
} writer_state;

static void *keep_committing(void *arg) {
    writer_state *w = (writer_state *)arg;
    ydb_connection *conn = NULL;
    unsigned seed = 4101;
    if (ydb_connection_open(w->f->db, &conn) != YDB_OK) {
        w->failures++;
        return NULL;
    }
    while (!w->stop) {
        ydb_txn *txn = NULL;
        long changed[5];
        unsigned masks[5];
        int i, rc = ydb_txn_begin_read_write(conn, &txn);
        for (i = 0; i < 5 && rc == YDB_OK; i++) {
            changed[i] = (long)(next_random(&seed) % (unsigned)w->f->rows);
            masks[i] = random_words(&seed);
            rc = set_item(txn, changed[i], masks[i]);
        }
        if (rc == YDB_OK) rc = ydb_txn_commit(txn);
        else ydb_txn_rollback(txn);
        if (rc != YDB_OK) {
            fprintf(stderr, "  writer: %d %s\n", rc, ydb_errmsg());
            w->failures++;
            break;
        }
        pthread_mutex_lock(&w->lock);
        for (i = 0; i < 5; i++) w->f->masks[changed[i]] = masks[i];
        pthread_mutex_unlock(&w->lock);
        w->commits++;
        sleep_us(500);
    }
    ydb_connection_close(conn);
    return NULL;
}

static void test_typing_while_another_thread_commits(long rows) {
    static const char *const typed_words[] = {"blueberry", "coconut"};
    search_fixture f;
    ydb_mappings *m;
    table t;
    writer_state w;
    pthread_t writer;
    completions all;
    search_slot slot;
    size_t steps = 0;
    long searches = 0, shown = 0;
    int word, length, applied = 0;
    char query[32], context[64];
    double started;

    setup(&f, rows, 4100);
    CHECK_OK(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "", NULL));
    m = start_mappings(&f, FOUND);
    table_init(&t, (size_t)rows);
    CHECK(read_table(&f, m, FOUND, &t));
    memset(&w, 0, sizeof w);
    w.f = &f;
    pthread_mutex_init(&w.lock, NULL);
    REQUIRE_OK(pthread_create(&writer, NULL, keep_committing, &w) == 0 ? YDB_OK : YDB_ERROR);
    completions_init(&all);
    started = now_seconds();
    for (word = 0; word < 2; word++) {
        int len = (int)strlen(typed_words[word]);
        /* "", "b*", "bl*", ... the whole word, then back down to "b*". */
        for (length = 0; length <= 2 * len - 1; length++) {
            int prefix = length <= len ? length : 2 * len - length;
            if (prefix == 0) snprintf(query, sizeof query, "%s", "");
            else snprintf(query, sizeof query, "%.*s*", prefix, typed_words[word]);
            slot_init(&slot, &all);
            CHECK_OK(search(f.db, FOUND, query, &slot));
            CHECK(wait_for(&all, (int)searches + 1, 60));
            searches++;
            CHECK(slot.calls == 1 && slot.status == YDB_OK);
            applied += slot.applied == 1;
            snprintf(context, sizeof context, "typed \"%s\"", query);
            steps += catch_up_checked(&f, m, FOUND, &t, context);
        }
    }
    w.stop = 1;
    pthread_join(writer, NULL);
    CHECK(w.failures == 0);
    catch_up_checked(&f, m, FOUND, &t, "after the writer");
    /* Nothing superseded them: each search waited for the one before. */
    CHECK(applied == searches);
    /* The last results equal a search from scratch of the rows as they are. */
    slot_init(&slot, &all);
    CHECK_OK(search(f.db, FOUND, "co*", &slot));
    CHECK(wait_for(&all, (int)searches + 1, 60));
    CHECK(slot.applied == 1);
    catch_up_checked(&f, m, FOUND, &t, "co*");   /* the reader reads the newest snapshot */
    CHECK(shows_matches(&f, FOUND, "co*", &shown));
    printf("typing: %ld rows, %ld searches in %.2f s while %ld commits landed; %zu steps checked; %ld rows found\n",
           rows, searches, now_seconds() - started, w.commits, steps, shown);
    CHECK(w.commits > 0);
    table_free(&t);
    ydb_mappings_free(m);
    pthread_mutex_destroy(&w.lock);
    completions_destroy(&all);
    teardown(&f);
}

/* ---- 4. misuse ---- */

static void test_misuse(void) {
    search_fixture f;
    ydb_txn *txn;
    completions all;
    search_slot slot;
    char *query = (char *)1;
    int outcome = 99;
    size_t count = 0;

    setup(&f, 30, 11);
    completions_init(&all);
    slot_init(&slot, &all);

    /* Registration: handles, NULLs, UTF-8, unknown names, namespaces. */
    CHECK_RC(ydb_search_view_register(NULL, FOUND, PARENT, INDEX, "", &outcome), YDB_MISUSE);
    CHECK(outcome == 0);
    CHECK_RC(ydb_search_view_register((ydb_database *)0x1234, FOUND, PARENT, INDEX, "", NULL), YDB_MISUSE);
    CHECK_RC(ydb_search_view_register(f.db, NULL, PARENT, INDEX, "", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, NULL, INDEX, "", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, NULL, "", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, "\xff", PARENT, INDEX, "", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, "\xc3\x28", INDEX, "", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, "\xe2\x28\xa1", "", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "\xff", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, "nosuch", INDEX, "", NULL), YDB_NOTFOUND);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, INDEX, INDEX, "", NULL), YDB_NOTFOUND);   /* an index, not a view */
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, "nosuch", "", &outcome), YDB_NOTFOUND);
    CHECK(outcome == 0);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, PARENT, "", NULL), YDB_NOTFOUND);  /* a view, not an index */
    CHECK_RC(ydb_search_view_register(f.db, INDEX, PARENT, INDEX, "", NULL), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "full-text index") != NULL);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "apple AND", NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, FOUND, INDEX, "", NULL), YDB_NOTFOUND);    /* not yet */
    CHECK_OK(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "apple", &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, FOUND, INDEX, "", NULL), YDB_INVALID_ARGUMENT);  /* itself */
    CHECK(strcmp(query_of(f.reader, FOUND), "apple") == 0);   /* the refusals left it */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_RC(ydb_search_view_register(f.db, "other", PARENT, INDEX, "", NULL), YDB_MISUSE);  /* would wait for itself */
    ydb_txn_rollback(txn);

    /* Setting a query. */
    CHECK_RC(ydb_search_view_set_query(NULL, FOUND, "x"), YDB_MISUSE);
    CHECK_RC(ydb_search_view_set_query((ydb_txn *)0x1234, FOUND, "x"), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read(f.writer, &txn));
    CHECK_RC(ydb_search_view_set_query(txn, FOUND, "x"), YDB_MISUSE);   /* a read transaction */
    ydb_txn_end(txn);
    CHECK_RC(ydb_search_view_set_query(txn, FOUND, "x"), YDB_MISUSE);   /* ended */
    /* Refused arguments leave the transaction usable... */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_RC(ydb_search_view_set_query(txn, NULL, "x"), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_set_query(txn, FOUND, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_set_query(txn, "\xff", "x"), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_search_view_set_query(txn, FOUND, "\xff"), YDB_INVALID_ARGUMENT);
    CHECK_OK(ydb_txn_commit(txn));
    /* ...what the engine refuses fails it: the commit rolls back. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_RC(ydb_search_view_set_query(txn, "nosuch", "x"), YDB_NOTFOUND);
    CHECK_RC(ydb_txn_commit(txn), YDB_NOTFOUND);
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_RC(ydb_search_view_set_query(txn, PARENT, "x"), YDB_MISUSE);
    CHECK(strstr(ydb_errmsg(), "not a search view") != NULL);
    CHECK_RC(ydb_txn_commit(txn), YDB_MISUSE);
    CHECK(strstr(ydb_errmsg(), "rolled back") != NULL);
    CHECK_RC(set_query(f.writer, INDEX, "x"), YDB_NOTFOUND);
    /* A malformed query fails its transaction; the results stay. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_RC(ydb_search_view_set_query(txn, FOUND, "\"unclosed"), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "full-text query") != NULL);
    CHECK_RC(ydb_txn_commit(txn), YDB_INVALID_ARGUMENT);   /* rolled back, and freed */
    CHECK(strstr(ydb_errmsg(), "rolled back") != NULL);
    CHECK(strcmp(query_of(f.reader, FOUND), "apple") == 0);
    CHECK(shows_matches(&f, FOUND, "apple", NULL));

    /* Reading the query. */
    REQUIRE_OK(ydb_txn_begin_read(f.writer, &txn));
    CHECK_RC(ydb_search_view_query(txn, FOUND, NULL), YDB_MISUSE);
    CHECK_RC(ydb_search_view_query(txn, NULL, &query), YDB_INVALID_ARGUMENT);
    CHECK(query == NULL);
    query = (char *)1;
    CHECK_RC(ydb_search_view_query(txn, "\xff", &query), YDB_INVALID_ARGUMENT);
    CHECK(query == NULL);
    query = (char *)1;
    CHECK_RC(ydb_search_view_query(txn, "nosuch", &query), YDB_NOTFOUND);
    CHECK(query == NULL);
    CHECK_RC(ydb_search_view_query(txn, PARENT, &query), YDB_NOTFOUND);
    CHECK_RC(ydb_search_view_query(txn, INDEX, &query), YDB_NOTFOUND);
    CHECK_OK(ydb_txn_count(txn, "items", &count));   /* still usable */
    ydb_txn_end(txn);
    query = (char *)1;
    CHECK_RC(ydb_search_view_query(txn, FOUND, &query), YDB_MISUSE);
    CHECK(query == NULL);
    CHECK_RC(ydb_search_view_query(NULL, FOUND, &query), YDB_MISUSE);

    /* Searching: refused at once, and then no completion ever comes. */
    CHECK_RC(search(NULL, FOUND, "x", &slot), YDB_MISUSE);
    CHECK_RC(search((ydb_database *)0x1234, FOUND, "x", &slot), YDB_MISUSE);
    CHECK_RC(search(f.db, NULL, "x", &slot), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(f.db, FOUND, NULL, &slot), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(f.db, "\xff", "x", &slot), YDB_INVALID_ARGUMENT);
    CHECK_RC(search(f.db, FOUND, "\xc3\x28", &slot), YDB_INVALID_ARGUMENT);
    /* With a read-write transaction open here: it waits for it, off this thread. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(search(f.db, FOUND, "cherry", &slot));
    sleep_ms(50);
    CHECK(slot.calls == 0);
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(wait_for(&all, 1, 60));
    CHECK(slot.calls == 1 && slot.status == YDB_OK && slot.applied == 1);

    /* Unregistering its index unregisters the view; writes go on. */
    CHECK_OK(ydb_fts_index_unregister(f.db, INDEX));
    REQUIRE_OK(ydb_txn_begin_read(f.reader, &txn));
    CHECK_RC(ydb_search_view_query(txn, FOUND, &query), YDB_NOTFOUND);
    ydb_txn_end(txn);
    CHECK_OK(put(f.writer, "items", "k0", "a:0000000", "cherry"));

    /* A closed database. */
    ydb_connection_close(f.reader);
    ydb_connection_close(f.writer);
    f.reader = f.writer = NULL;
    CHECK_OK(ydb_database_close(f.db));
    CHECK_RC(search(f.db, FOUND, "x", &slot), YDB_MISUSE);
    CHECK_RC(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "", NULL), YDB_MISUSE);
    f.db = NULL;
    CHECK(all.calls == 1);   /* none of the refused searches completed */
    teardown(&f);
    completions_destroy(&all);
}

/* ---- 5. closing the database with searches pending ---- */

static void test_closing_with_searches_pending(void) {
    enum { ROUNDS = 12, QUEUED = 4 };
    static const char *const queries[QUEUED] = {"a*", "ap*", "apr*", "b*"};
    int round, i, applied = 0, superseded = 0, closed = 0, others = 0;
    unsigned seed = 99;

    for (round = 0; round < ROUNDS; round++) {
        search_fixture f;
        completions all;
        search_slot slots[QUEUED];
        int in_order = 1;
        setup(&f, 1500, 500u + (unsigned)round);
        CHECK_OK(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "", NULL));
        CHECK_OK(ydb_search_view_register(f.db, "found2", PARENT, INDEX, "", NULL));
        completions_init(&all);
        for (i = 0; i < QUEUED; i++) {
            slot_init(&slots[i], &all);
            CHECK_OK(search(f.db, i == QUEUED - 1 ? "found2" : FOUND, queries[i], &slots[i]));
        }
        sleep_us((long)(next_random(&seed) % 4000));
        ydb_connection_close(f.reader);
        ydb_connection_close(f.writer);
        f.reader = f.writer = NULL;
        CHECK_OK(ydb_database_close(f.db));
        f.db = NULL;
        /* Every completion has come, once, before the close returned. */
        pthread_mutex_lock(&all.lock);
        for (i = 0; i < QUEUED; i++) {
            CHECK(slots[i].calls == 1);
            if (slots[i].status == YDB_OK && slots[i].applied == 1) applied++;
            else if (slots[i].status == YDB_OK && slots[i].applied == 0) superseded++;
            else if (slots[i].status == YDB_CLOSED && !slots[i].message_null) closed++;
            else others++;
            if (i > 0 && i < QUEUED - 1 && slots[i].position < slots[i - 1].position) in_order = 0;
        }
        pthread_mutex_unlock(&all.lock);
        CHECK(in_order);
        CHECK(all.on_queuing_thread == 0);
        teardown(&f);
        completions_destroy(&all);
    }
    CHECK(others == 0);
    printf("closing: %d applied, %d superseded, %d closed\n", applied, superseded, closed);

    /* A completion closing the database: it does not wait for itself, and
    ** the searches still waiting complete with YDB_CLOSED after it. */
    for (round = 0; round < 3; round++) {
        search_fixture f;
        completions all;
        search_slot closer, later[2];
        setup(&f, 800, 700u + (unsigned)round);
        CHECK_OK(ydb_search_view_register(f.db, FOUND, PARENT, INDEX, "", NULL));
        CHECK_OK(ydb_search_view_register(f.db, "found2", PARENT, INDEX, "", NULL));
        ydb_connection_close(f.reader);
        ydb_connection_close(f.writer);
        f.reader = f.writer = NULL;
        completions_init(&all);
        slot_init(&closer, &all);
        closer.close_db = f.db;
        CHECK_OK(search(f.db, FOUND, "c*", &closer));
        /* Queued behind the closer (same view): they complete after it. */
        for (i = 0; i < 2; i++) slot_init(&later[i], &all);
        CHECK_OK(search(f.db, FOUND, "co*", &later[0]));
        CHECK_OK(search(f.db, FOUND, "coc*", &later[1]));
        CHECK(wait_for(&all, 3, 60));
        CHECK(closer.calls == 1 && closer.close_rc == YDB_OK && closer.position == 0);
        CHECK(later[0].calls == 1 && later[1].calls == 1 && later[1].position == 2);
        /* The newest one ran before the close, or found the database closed. */
        CHECK(later[1].status == YDB_CLOSED || (later[1].status == YDB_OK && later[1].applied == 1));
        CHECK(later[0].status == YDB_OK || later[0].status == YDB_CLOSED);
        CHECK(ydb_database_close(f.db) == YDB_MISUSE);   /* already closed, by a completion */
        f.db = NULL;
        teardown(&f);
        completions_destroy(&all);
    }
}

/* ---- ordered by rank ---- */

typedef struct {
    char keys[64][16];
    double ranks[64];
    int count;
} ranked_matches;

static int remember_rank(void *ctx, const char *collection, const char *key, double rank) {
    ranked_matches *m = (ranked_matches *)ctx;
    (void)collection;
    if (m->count < 64) {
        snprintf(m->keys[m->count], sizeof m->keys[0], "%s", key);
        m->ranks[m->count++] = rank;
    }
    return 0;
}

static double rank_of(const ranked_matches *m, const char *key) {
    int i;
    for (i = 0; i < m->count; i++)
        if (strcmp(m->keys[i], key) == 0) return m->ranks[i];
    return 1e300;
}

/* Each group of a view ordered by rank holds its matches by rank, best
** first: the ranks read along it never go down, and the rows are the matches. */
static void test_ordered_by_rank(void) {
    search_fixture f;
    ydb_txn *txn;
    const char *queries[] = {"apple", "banana OR cherry", "b*"};
    size_t q;
    setup(&f, 60, 9);
    CHECK_OK(ydb_search_view_register_by_rank(f.db, "ranked", PARENT, INDEX, "apple", NULL));
    for (q = 0; q < sizeof queries / sizeof *queries; q++) {
        ranked_matches m;
        size_t g, shown = 0;
        memset(&m, 0, sizeof m);
        if (q > 0) CHECK_OK(set_query(f.writer, "ranked", queries[q]));
        REQUIRE_OK(ydb_txn_begin_read(f.reader, &txn));
        CHECK_OK(ydb_txn_search(txn, INDEX, queries[q], 0, remember_rank, &m));
        for (g = 0; g < sizeof groups / sizeof *groups; g++) {
            size_t count = 0, i;
            double last = -1e300;
            CHECK_OK(ydb_view_count_in_group(txn, "ranked", groups[g], &count));
            for (i = 0; i < count; i++) {
                char *collection = NULL, *key = NULL;
                double rank;
                if (ydb_view_key_at(txn, "ranked", groups[g], i, &collection, &key) != YDB_OK) continue;
                rank = rank_of(&m, key);
                CHECK(rank < 1e300);        /* a match */
                CHECK(rank >= last);        /* best first */
                last = rank;
                ydb_free(collection);
                ydb_free(key);
            }
            shown += count;
        }
        CHECK(shown == (size_t)m.count);
        ydb_txn_end(txn);
    }
    teardown(&f);
}

int main(int argc, char **argv) {
    long rows = argc > 1 ? strtol(argv[1], NULL, 10) : 3000;
    /* A hang is a failure: the test stops instead of waiting forever. */
    alarm(600);
    test_queries_in_transactions();
    test_ordered_by_rank();
    test_background_searches();
    test_typing_while_another_thread_commits(rows > 0 ? rows : 3000);
    test_misuse();
    test_closing_with_searches_pending();
    return check_summary();
}
