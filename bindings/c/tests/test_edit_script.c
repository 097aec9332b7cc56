/*
** test_edit_script.c -- the changeset edit script through the C ABI, over
** seeded random histories and mappings configurations: the steps
** (ydb_changeset_step), applied one at a time to the old table and each
** checked against the table as it then stands, give exactly the new table.
** The tables are read through the mappings' getters and the view only.
*/
#define _POSIX_C_SOURCE 200809L
#include "view_helpers.h"

#define V "byGroup"
#define HISTORIES 300
#define MAX_SECTIONS 16
#define MAX_ROWS 64
#define KEYS 14

static const char *const groups[] = {"a", "b", "c", "d", "e"};
#define GROUPS 5

/* A table: each section's group and rows (keys; every row is in "c"). */
typedef struct {
    size_t sections;
    char group[MAX_SECTIONS][16];
    size_t rows[MAX_SECTIONS];
    char key[MAX_SECTIONS][MAX_ROWS][8];
} table;

static uint64_t rng_state;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int random_below(int n) { return (int)(next_random() % (uint64_t)n); }

static int show_all_but_e(void *ctx, const char *group) { (void)ctx; return strcmp(group, "e") != 0; }
static int by_name(void *ctx, const char *a, const char *b) { (void)ctx; return strcmp(a, b); }

/* Reads the table the mappings show, through its getters and the view. */
static int read_table(ydb_connection *reader, ydb_mappings *m, table *out) {
    ydb_txn *txn;
    size_t sections = 0;
    memset(out, 0, sizeof *out);
    if (ydb_txn_begin_read(reader, &txn) != YDB_OK) return 0;
    CHECK_OK(ydb_mappings_number_of_sections(m, &sections));
    if (sections > MAX_SECTIONS) sections = MAX_SECTIONS;
    out->sections = sections;
    for (size_t s = 0; s < sections; s++) {
        const char *group = NULL;
        size_t count = 0;
        CHECK_OK(ydb_mappings_group_for_section(m, s, &group));
        snprintf(out->group[s], sizeof out->group[s], "%s", group ? group : "?");
        CHECK_OK(ydb_mappings_number_of_items_in_section(m, s, &count));
        if (count > MAX_ROWS) count = MAX_ROWS;
        out->rows[s] = count;
        for (size_t r = 0; r < count; r++) {
            const char *view_group = NULL;
            size_t index = 0;
            char *collection = NULL, *key = NULL;
            CHECK_OK(ydb_mappings_group_and_index_for_row(m, r, s, &view_group, &index));
            CHECK_OK(ydb_view_key_at(txn, V, view_group, index, &collection, &key));
            snprintf(out->key[s][r], sizeof out->key[s][r], "%s", key ? key : "?");
            ydb_free(collection);
            ydb_free(key);
        }
    }
    ydb_txn_end(txn);
    return 1;
}

static int same_table(const table *a, const table *b) {
    if (a->sections != b->sections) return 0;
    for (size_t s = 0; s < a->sections; s++) {
        if (strcmp(a->group[s], b->group[s]) != 0 || a->rows[s] != b->rows[s]) return 0;
        for (size_t r = 0; r < a->rows[s]; r++)
            if (strcmp(a->key[s][r], b->key[s][r]) != 0) return 0;
    }
    return 1;
}

static void print_table(const char *label, const table *t) {
    fprintf(stderr, "  %s:", label);
    for (size_t s = 0; s < t->sections; s++) {
        fprintf(stderr, " %s[", t->group[s]);
        for (size_t r = 0; r < t->rows[s]; r++) fprintf(stderr, "%s%s", r ? " " : "", t->key[s][r]);
        fprintf(stderr, "]");
    }
    fprintf(stderr, "\n");
}

static size_t step_counts[7];

/* Applies every step to `work` (a copy of the old table), checking each at
** its moment; returns 0 and says why at the first bad step. */
static int apply_steps(ydb_changeset *cs, table *work, const table *new_table) {
    size_t count = 0;
    ydb_edit_step step;
    CHECK_OK(ydb_changeset_step_count(cs, &count));
    for (size_t i = 0; i < count; i++) {
        const char *why = NULL;
        size_t s, r;
        if (ydb_changeset_step(cs, i, &step) != YDB_OK) return 0;
        if (step.type >= 1 && step.type <= 6) step_counts[step.type]++;
        if ((step.changes & ~7u) != 0) why = "unknown change flags";
        s = step.section;
        r = step.row;
        switch (why ? 0 : step.type) {
        case 0:
            break;
        case YDB_STEP_REMOVE_SECTION:
            if (s >= work->sections || r != YDB_NO_INDEX) why = "no such section";
            else if (!step.group || strcmp(step.group, work->group[s]) != 0) why = "section shows another group";
            else if (work->rows[s] != 0) why = "section still has rows";
            else {
                memmove(&work->group[s], &work->group[s + 1], (work->sections - s - 1) * sizeof work->group[0]);
                memmove(&work->rows[s], &work->rows[s + 1], (work->sections - s - 1) * sizeof work->rows[0]);
                memmove(&work->key[s], &work->key[s + 1], (work->sections - s - 1) * sizeof work->key[0]);
                work->sections--;
            }
            break;
        case YDB_STEP_INSERT_SECTION:
            if (s > work->sections || work->sections == MAX_SECTIONS || !step.group) why = "bad section insert";
            else {
                memmove(&work->group[s + 1], &work->group[s], (work->sections - s) * sizeof work->group[0]);
                memmove(&work->rows[s + 1], &work->rows[s], (work->sections - s) * sizeof work->rows[0]);
                memmove(&work->key[s + 1], &work->key[s], (work->sections - s) * sizeof work->key[0]);
                snprintf(work->group[s], sizeof work->group[s], "%s", step.group);
                work->rows[s] = 0;
                work->sections++;
            }
            break;
        case YDB_STEP_REMOVE_ROW:
        case YDB_STEP_MOVE_ROW:
        case YDB_STEP_INSERT_ROW: {
            char moving[8] = "";
            if (step.type != YDB_STEP_INSERT_ROW) {
                if (s >= work->sections || r >= work->rows[s]) { why = "no row there"; break; }
                if (step.key && strcmp(step.key, work->key[s][r]) != 0) { why = "another row is there"; break; }
                memcpy(moving, work->key[s][r], sizeof moving);
                memmove(&work->key[s][r], &work->key[s][r + 1], (work->rows[s] - r - 1) * sizeof work->key[0][0]);
                work->rows[s]--;
                if (step.type == YDB_STEP_REMOVE_ROW) break;
                if (step.to_section == s && step.to_row == r) { why = "a move that stays"; break; }
                s = step.to_section;
                r = step.to_row;
            } else if (step.key) {
                snprintf(moving, sizeof moving, "%s", step.key);
            } else if (step.final_section < new_table->sections &&
                       step.final_row < new_table->rows[step.final_section]) {
                memcpy(moving, new_table->key[step.final_section][step.final_row], sizeof moving);
            } else {
                why = "unnamed insert with no final position";
                break;
            }
            if (s >= work->sections || r > work->rows[s] || work->rows[s] == MAX_ROWS) {
                why = "destination out of range";
                break;
            }
            memmove(&work->key[s][r + 1], &work->key[s][r], (work->rows[s] - r) * sizeof work->key[0][0]);
            memcpy(work->key[s][r], moving, sizeof moving);
            work->rows[s]++;
            break;
        }
        case YDB_STEP_RELOAD_ROW:
            if (s >= work->sections || r >= work->rows[s]) why = "no row to reload";
            else if (step.key && strcmp(step.key, work->key[s][r]) != 0) why = "reloads another row";
            else if (step.final_section != s || step.final_row != r) why = "reload away from its final position";
            break;
        default:
            why = "unknown step type";
        }
        if (why) {
            fprintf(stderr, "  step %zu (type %d, [%zu, %zu] -> [%zu, %zu], key %s): %s\n", i, step.type,
                    step.section, step.row, step.to_section, step.to_row, step.key ? step.key : "-", why);
            return 0;
        }
    }
    /* Past the end: an error, and the step cleared. */
    step.type = 9;
    CHECK(ydb_changeset_step(cs, count, &step) == YDB_INVALID_ARGUMENT);
    CHECK(step.type == 0 && step.section == YDB_NO_INDEX && step.key == NULL);
    return 1;
}

static ydb_mappings *random_mappings(void) {
    ydb_mappings *m = NULL;
    if (random_below(4) == 0) {
        REQUIRE_OK(ydb_mappings_new_dynamic(V, show_all_but_e, by_name, NULL, NULL, &m));
    } else {
        REQUIRE_OK(ydb_mappings_new(V, (const char *const *)groups, GROUPS, &m));
        if (random_below(2)) CHECK_OK(ydb_mappings_set_dynamic_section_for_all_groups(m, 1));
    }
    for (int g = 0; g < GROUPS; g++) {
        int choice = random_below(10), pin = random_below(2) ? YDB_PIN_END : YDB_PIN_BEGINNING;
        if (choice < 2)
            CHECK_OK(ydb_mappings_set_range_fixed(m, groups[g], 1 + random_below(4), random_below(3), pin));
        else if (choice < 4)
            CHECK_OK(ydb_mappings_set_range_flexible(m, groups[g], 1 + random_below(4), random_below(3), pin,
                                                     random_below(2) ? 0 : 6, random_below(2), random_below(3)));
        if (random_below(3) == 0) CHECK_OK(ydb_mappings_set_reversed(m, groups[g], 1));
        if (random_below(5) == 0) {
            int offsets[2] = {-1, 1};
            CHECK_OK(ydb_mappings_set_cell_drawing_dependency_offsets(m, groups[g], offsets + random_below(2), 1));
        }
    }
    if (random_below(5) == 0) CHECK_OK(ydb_mappings_set_auto_consolidate_groups(m, 2 + (size_t)random_below(8), "all"));
    return m;
}

static void random_commit(ydb_connection *writer) {
    ydb_txn *txn;
    REQUIRE_OK(ydb_txn_begin_read_write(writer, &txn));
    for (int n = 1 + random_below(5); n > 0; n--) {
        char key[8], object[16];
        int choice = random_below(100);
        snprintf(key, sizeof key, "k%d", random_below(KEYS));
        if (choice < 55) {
            snprintf(object, sizeof object, "%s:%d", groups[random_below(GROUPS)], random_below(10));
            CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
        } else if (choice < 70) {
            CHECK_OK(ydb_txn_touch_object(txn, "c", key));
        } else if (choice < 97) {
            CHECK_OK(ydb_txn_remove_object(txn, "c", key));
        } else {
            CHECK_OK(ydb_txn_remove_all_objects(txn, "c"));
        }
    }
    REQUIRE_OK(ydb_txn_commit(txn));
}

static void test_random_histories(void) {
    size_t changesets = 0;
    for (int history = 0; history < HISTORIES; history++) {
        ydb_database *db;
        ydb_connection *writer, *reader;
        ydb_mappings *m;
        ydb_txn *txn;
        view_counter counter = {0};
        uint64_t seed = 0x5EED0000u + (uint64_t)history;
        rng_state = seed * 2654435761u + 1;
        REQUIRE_OK(ydb_database_open(NULL, &db));
        REQUIRE_OK(ydb_connection_open(db, &writer));
        REQUIRE_OK(ydb_connection_open(db, &reader));
        REQUIRE_OK(register_sorted(db, V, "", 0, &counter, sort_by_suffix, NULL));
        for (int i = random_below(10); i > 0; i--) random_commit(writer);
        m = random_mappings();
        REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, NULL));
        REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
        REQUIRE_OK(ydb_mappings_update(m, txn));
        ydb_txn_end(txn);
        for (int round = 1 + random_below(4); round > 0; round--) {
            table old_table, new_table, work;
            ydb_notification_list *skipped = NULL;
            ydb_changeset *cs = NULL;
            CHECK(read_table(reader, m, &old_table));
            for (int commits = 1 + random_below(3); commits > 0; commits--) random_commit(writer);
            REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, &skipped));
            CHECK_OK(ydb_changeset_new(m, skipped, &cs));
            ydb_notification_list_free(skipped);
            CHECK(read_table(reader, m, &new_table));
            work = old_table;
            changesets++;
            if (!apply_steps(cs, &work, &new_table) || !same_table(&work, &new_table)) {
                fprintf(stderr, "seed %llu: the steps do not rebuild the new table\n", (unsigned long long)seed);
                print_table("old", &old_table);
                print_table("new", &new_table);
                print_table("got", &work);
                CHECK(0);
            }
            ydb_changeset_free(cs);
        }
        ydb_mappings_free(m);
        ydb_connection_close(reader);
        ydb_connection_close(writer);
        ydb_database_close(db);
    }
    printf("%d histories, %zu changesets; steps: %zu remove section, %zu insert section, %zu remove row, "
           "%zu insert row, %zu move, %zu reload\n", HISTORIES, changesets, step_counts[1], step_counts[2],
           step_counts[3], step_counts[4], step_counts[5], step_counts[6]);
    /* Not vacuous: every kind of step happened. */
    for (int type = 1; type <= 6; type++) CHECK(step_counts[type] > 0);
}

int main(void) {
    test_random_histories();
    return check_summary();
}
