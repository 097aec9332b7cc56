/*
** fuzz_numbers.c -- every numeric argument of the C API given hostile values
** (0, -1, the extremes of its type, 2^53, 2^62, NaN, infinities, small
** random numbers) on live handles, and then the engine made to use them:
** commits that insert before, inside and after hostile windows, lagging
** readers, catch-ups, changesets read field by field and step by step,
** getters and enumerations at hostile indexes, registrations waited for
** with hostile timeouts. Every call must return a documented status (0..14)
** and nothing may trap (a Swift overflow or bounds check kills the
** process), hang (an alarm fails the run) or upset AddressSanitizer/UBSan.
** Time-bounded and seeded:
**
**   fuzz_numbers [SECONDS]   (default 3; or YDBVIEW_FUZZ_SECONDS;
**                             YDBVIEW_FUZZ_SEED picks the sequence)
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "view_helpers.h"
#include "random.h"


static long calls = 0, undocumented = 0;

static void record(int rc, const char *what) {
    calls++;
    if (rc < 0 || rc > 14) {
        undocumented++;
        fprintf(stderr, "%s returned undocumented status %d\n", what, rc);
    }
}
#define CALL(expr) record((expr), #expr)

/* Hostile values of each type, with small honest ones mixed in. */
static int64_t any_int64(void) {
    static const int64_t values[] = { 0, 1, 2, 3, -1, -2, INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1,
                                      (int64_t)1 << 53, ((int64_t)1 << 53) + 1, (int64_t)1 << 62,
                                      INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN };
    if (pick(3) == 0) return (int64_t)pick(12);
    return values[pick(sizeof values / sizeof *values)];
}
static uint64_t any_uint64(void) {
    static const uint64_t values[] = { 0, 1, 2, UINT64_MAX, UINT64_MAX - 1, (uint64_t)INT64_MAX,
                                       (uint64_t)INT64_MAX + 1, (uint64_t)1 << 53, (uint64_t)1 << 63 };
    if (pick(3) == 0) return pick(12);
    return values[pick(sizeof values / sizeof *values)];
}
static size_t any_size(void) { return (size_t)any_uint64(); }
static int any_int(void) {
    static const int values[] = { 0, 1, 2, 3, -1, -2, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1 };
    if (pick(3) == 0) return (int)pick(4);
    return values[pick(sizeof values / sizeof *values)];
}
static double any_double(void) {
    static double values[9];
    values[0] = 0.0; values[1] = -0.0; values[2] = NAN; values[3] = INFINITY; values[4] = -INFINITY;
    values[5] = 1e308; values[6] = -1e308; values[7] = 5e-324; values[8] = 9007199254740993.0;
    return values[pick(9)];
}

static const char *groups[] = { "a", "b", "c" };

/* A hostile range on `group` (most calls are refused; some are accepted). */
static void hostile_range(ydb_mappings *m, const char *group) {
    ydb_range_options o = YDB_RANGE_OPTIONS_INIT;
    switch (pick(4)) {
    case 0:
        CALL(ydb_mappings_set_range_fixed(m, group, any_int64(), any_int64(), any_int()));
        break;
    case 1:
        CALL(ydb_mappings_set_range_flexible(m, group, any_int64(), any_int64(), any_int(), any_int64(),
                                             any_int64(), any_int()));
        break;
    case 2:
        o.kind = pick(2) ? YDB_RANGE_FIXED : YDB_RANGE_FLEXIBLE;
        if (pick(4) == 0) o.kind = any_int();
        o.length = any_int64(); o.offset = any_int64(); o.pin = pick(4) ? (int)pick(2) : any_int();
        o.max_length = any_int64(); o.min_length = any_int64(); o.grow = pick(4) ? (int)pick(3) : any_int();
        CALL(ydb_range_options_set_length(&o, any_int64()));
        CALL(ydb_mappings_set_range_options(m, group, &o));
        break;
    default:
        /* Accepted for sure: a huge offset and length with sane everything else. */
        CALL(ydb_mappings_set_range_flexible(m, group, pick(2) ? INT64_MAX : 1 + (int64_t)pick(5),
                                             pick(2) ? INT64_MAX : (int64_t)1 << 53, (int)pick(2), 0, 0,
                                             (int)pick(3)));
        break;
    }
    if (ydb_mappings_range_options(m, group, &o) == YDB_OK) {
        CALL(ydb_mappings_set_range_options(m, group, &o));   /* what was read back is accepted */
    }
}

static void hostile_configuration(ydb_mappings *m) {
    int offsets[4];
    size_t g;
    for (g = 0; g < 3; g++) {
        if (pick(3)) hostile_range(m, groups[g]);
        if (pick(3) == 0) CALL(ydb_mappings_set_reversed(m, groups[g], any_int()));
        if (pick(3) == 0) {
            offsets[0] = any_int(); offsets[1] = any_int(); offsets[2] = -1; offsets[3] = 1;
            CALL(ydb_mappings_set_cell_drawing_dependency_offsets(m, groups[g], offsets, 1 + pick(4)));
        }
        if (pick(4) == 0) CALL(ydb_mappings_set_dynamic_section(m, groups[g], any_int()));
    }
    if (pick(4) == 0) CALL(ydb_mappings_set_dynamic_section_for_all_groups(m, any_int()));
    if (pick(3) == 0) CALL(ydb_mappings_set_auto_consolidate_groups(m, any_size(), "all"));
}

/* Every getter of the mappings, at hostile and honest indexes. */
static void read_mappings(ydb_mappings *m) {
    size_t count = 0, a, b, i;
    const char *group;
    int offsets[8];
    ydb_range_options o = YDB_RANGE_OPTIONS_INIT;
    CALL(ydb_mappings_number_of_sections(m, &count));
    for (i = 0; i < 6; i++) {
        size_t index = pick(2) ? pick(count + 2) : any_size();
        CALL(ydb_mappings_number_of_items_in_section(m, index, &a));
        CALL(ydb_mappings_group_for_section(m, index, &group));
        CALL(ydb_mappings_group_and_index_for_row(m, any_size(), index, &group, &a));
        CALL(ydb_mappings_index_for_row_in_section(m, any_size(), index, &a));
        CALL(ydb_mappings_index_for_row_in_group(m, any_size(), groups[pick(3)], &a));
        CALL(ydb_mappings_row_and_section_for_index(m, any_size(), groups[pick(3)], &a, &b));
        CALL(ydb_mappings_row_for_index(m, any_size(), groups[pick(3)], &a));
        CALL(ydb_mappings_window_row_for_index(m, any_size(), groups[pick(3)], &a));
        CALL(ydb_mappings_nearest_index_path(m, any_size(), groups[pick(3)], &a, &b));
    }
    CALL(ydb_mappings_cell_drawing_dependency_offsets(m, groups[pick(3)], offsets, pick(9), &a));
    CALL(ydb_mappings_range_options(m, groups[pick(3)], &o));
    CALL(ydb_mappings_auto_consolidate_groups_threshold(m, &a));
}

/* Every field of every row change and step, and hostile indexes. */
static void read_changeset(ydb_changeset *cs) {
    size_t count = 0, a, b, i;
    int type;
    unsigned int flags;
    const char *text;
    ydb_row_change change;
    ydb_edit_step step;
    CALL(ydb_changeset_section_change_count(cs, &count));
    for (i = 0; i <= count; i++) CALL(ydb_changeset_section_change(cs, pick(4) ? i : any_size(), &type, &a, &text));
    CALL(ydb_changeset_row_change_count(cs, &count));
    for (i = 0; i <= count; i++) {
        size_t index = pick(4) ? i : any_size();
        CALL(ydb_changeset_row(cs, index, &change));
        CALL(ydb_changeset_row_type(cs, index, &type));
        CALL(ydb_changeset_row_index_path(cs, index, &a, &b));
        CALL(ydb_changeset_row_new_index_path(cs, index, &a, &b));
        CALL(ydb_changeset_row_original_position(cs, index, &a, &b));
        CALL(ydb_changeset_row_final_position(cs, index, &a, &b));
        CALL(ydb_changeset_row_original_group(cs, index, &text));
        CALL(ydb_changeset_row_final_group(cs, index, &text));
        CALL(ydb_changeset_row_changes(cs, index, &flags));
        CALL(ydb_changeset_row_collection(cs, index, &text));
        CALL(ydb_changeset_row_key(cs, index, &text));
    }
    CALL(ydb_changeset_step_count(cs, &count));
    for (i = 0; i <= count; i++) CALL(ydb_changeset_step(cs, pick(4) ? i : any_size(), &step));
}

static int count_key(void *ctx, const char *collection, const char *key, size_t index) {
    (void)collection; (void)key; (void)index;
    (*(long *)ctx)++;
    return 0;
}

/* View queries at hostile indexes and ranges, in a read transaction. */
static void read_view(ydb_connection *conn, ydb_mappings *m) {
    ydb_txn *txn = NULL;
    char *collection = NULL, *key = NULL;
    void *bytes = NULL;
    size_t size = 0, a, b;
    long visited = 0;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return;
    if (ydb_view_key_at(txn, "v", groups[pick(3)], any_size(), &collection, &key) == YDB_OK) {
        ydb_free(collection);
        ydb_free(key);
    }
    if (ydb_view_object_at(txn, "v", groups[pick(3)], any_size(), &bytes, &size) == YDB_OK) ydb_free(bytes);
    CALL(ydb_view_enumerate_keys(txn, "v", groups[pick(3)], any_size(), any_size(), any_int(), count_key, &visited));
    if (ydb_view_key_at_index_path(txn, m, any_size(), any_size(), &collection, &key) == YDB_OK) {
        ydb_free(collection);
        ydb_free(key);
    }
    CALL(ydb_view_index_path_for_key(txn, m, "c", "k1", &a, &b));
    {   /* a hostile rowid hint: the answer is the key's whatever the hint */
        void *object = NULL, *metadata = NULL;
        size_t object_size = 0, metadata_size = 0;
        char hinted[16];
        snprintf(hinted, sizeof hinted, "k%d", (int)pick(20));
        CALL(ydb_txn_get_row_hinted(txn, "c", hinted, any_int64(), &object, &object_size, &metadata,
                                    &metadata_size));
        ydb_free(object);
        ydb_free(metadata);
    }
    CALL(ydb_txn_end(txn));
}

/* A sort key built from hostile numbers (view "s"); the callback's own
** statuses are recorded, and it succeeds whatever they were. */
static int hostile_sort_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row,
                            ydb_sort_key *key) {
    (void)ctx; (void)txn; (void)group; (void)row;
    CALL(ydb_sort_key_append_int64(key, any_int64(), any_int()));
    CALL(ydb_sort_key_append_double(key, any_double(), any_int()));
    CALL(ydb_sort_key_append_text(key, "t", any_int()));
    CALL(ydb_sort_key_append_blob(key, NULL, any_size(), any_int()));
    CALL(ydb_sort_key_append_raw(key, NULL, any_size()));
    return YDB_OK;
}

static view_counter counter;

static int progress(void *ctx, uint64_t done, uint64_t total) { (void)ctx; (void)done; (void)total; return 1; }
static void finished(void *ctx, int status, int outcome, const char *message) {
    (void)ctx; (void)status; (void)outcome; (void)message;
}

/* A background registration waited for with hostile timeouts (a negative
** one waits for the end: the view is small). */
static void hostile_waits(ydb_database *db) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    ydb_registration *reg = NULL;
    int finished_flag = 0, outcome = 0, i;
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sort_by_suffix;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    if (ydb_view_register_async(db, "w", &def, &counter, NULL, progress, finished, NULL, &reg) != YDB_OK) return;
    for (i = 0; i < 3; i++) {
        int64_t timeout = any_int64();
        if (timeout > 1000) timeout = pick(2) ? INT64_MAX : 1000;   /* finishes well before: returns at once */
        CALL(ydb_registration_wait(reg, timeout, &finished_flag));
    }
    CALL(ydb_registration_wait(reg, -1, &finished_flag));
    CALL(ydb_registration_result(reg, &outcome));
    CALL(ydb_registration_free(reg));
}

static void one_history(void) {
    ydb_database *db = NULL;
    ydb_connection *writer = NULL, *reader = NULL;
    ydb_mappings *m = NULL;
    ydb_notification_list *skipped = NULL;
    const ydb_notification *notification = NULL;
    ydb_changeset *cs = NULL;
    size_t count = 0;
    uint64_t limit = 0;
    int commit;
    char key[16], object[32];

    REQUIRE_OK(ydb_database_open(NULL, &db));
    CALL(ydb_database_set_max_commits_behind(db, pick(2) ? any_uint64() : 1 + pick(3)));
    CALL(ydb_database_max_commits_behind(db, &limit));
    CALL(ydb_database_set_commit_log_limit(db, pick(2) ? any_uint64() : pick(3)));
    CALL(ydb_database_commit_log_limit(db, &limit));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    CALL(ydb_connection_set_row_cache_limit(reader, any_size()));
    memset(&counter, 0, sizeof counter);
    REQUIRE_OK(register_standard(db, "v", "1", (int)pick(2), &counter));
    REQUIRE_OK(register_sorted(db, "s", "1", (int)pick(2), &counter, NULL, hostile_sort_key));
    for (commit = 0; commit < 6; commit++) {
        snprintf(key, sizeof key, "k%d", (int)pick(20));
        snprintf(object, sizeof object, "%s:%02d", groups[pick(3)], (int)pick(40));
        CALL(set_row(writer, "c", key, object));
    }

    REQUIRE_OK(ydb_mappings_new("v", groups, 3, &m));
    hostile_configuration(m);
    CALL(ydb_connection_begin_long_lived_read(reader, &skipped));   /* may say reload: it updates next */
    ydb_notification_list_free(skipped);
    skipped = NULL;
    {
        ydb_txn *txn = NULL;
        REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
        CALL(ydb_mappings_update(m, txn));
        CALL(ydb_txn_end(txn));
    }
    read_mappings(m);

    for (commit = 0; commit < 8; commit++) {
        int rows = 1 + (int)pick(4), row;
        for (row = 0; row < rows; row++) {
            snprintf(key, sizeof key, "k%d", (int)pick(20));
            /* Mostly before every window: the sort key "00" sorts first. */
            snprintf(object, sizeof object, "%s:%02d", groups[pick(3)], pick(3) ? 0 : (int)pick(40));
            if (pick(5) == 0) CALL(remove_row(writer, "c", key));
            else CALL(set_row(writer, "c", key, object));
        }
        if (pick(3) == 0) continue;   /* let the reader lag */
        if (ydb_connection_begin_long_lived_read(reader, &skipped) != YDB_OK) {
            ydb_txn *txn = NULL;   /* fell behind: reload */
            ydb_notification_list_free(skipped);
            skipped = NULL;
            if (ydb_txn_begin_read(reader, &txn) == YDB_OK) {
                CALL(ydb_mappings_update(m, txn));
                CALL(ydb_txn_end(txn));
            }
            continue;
        }
        CALL(ydb_notification_list_count(skipped, &count));
        CALL(ydb_notification_list_get(skipped, any_size(), &notification));
        if (ydb_changeset_new(m, skipped, &cs) == YDB_OK) {
            read_changeset(cs);
            ydb_changeset_free(cs);
        }
        ydb_notification_list_free(skipped);
        skipped = NULL;
        read_mappings(m);
        read_view(reader, m);
        if (pick(4) == 0) hostile_configuration(m);
    }
    CALL(ydb_errstr(any_int()) == NULL ? YDB_ERROR : YDB_OK);
    if (pick(4) == 0) hostile_waits(db);
    ydb_mappings_free(m);
    ydb_connection_close(reader);
    ydb_connection_close(writer);
    ydb_database_close(db);
}

int main(int argc, char **argv) {
    const char *env_seconds = getenv("YDBVIEW_FUZZ_SECONDS"), *env_seed = getenv("YDBVIEW_FUZZ_SEED");
    double seconds = argc > 1 ? atof(argv[1]) : env_seconds ? atof(env_seconds) : 3.0;
    struct timespec start, now;
    long histories = 0;
    random_state = env_seed ? strtoull(env_seed, NULL, 10) : (uint64_t)time(NULL);
    printf("seed %llu (YDBVIEW_FUZZ_SEED repeats it)\n", (unsigned long long)random_state);
    alarm((unsigned)seconds + 60);   /* a hang fails the run */
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        one_history();
        histories++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    printf("%ld histories, %ld calls, %ld undocumented statuses\n", histories, calls, undocumented);
    CHECK(undocumented == 0);
    CHECK(histories > 0);
    return check_summary();
}
