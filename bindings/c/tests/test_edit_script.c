/*
** test_edit_script.c -- the changeset edit script (ydb_changeset_step)
** through the C ABI only, as a seeded random-history property test.
**
** For each seed: a database in a temporary directory, a view of rows
** "GROUP:RANK" grouped by GROUP and sorted by RANK then collection then key,
** a mappings object in a random configuration (static or dynamic groups,
** dynamic sections, fixed and flexible ranges pinned at either end,
** reversed groups, cell-drawing dependency offsets, auto-consolidation)
** kept by a reader in a long-lived read transaction. Then rounds of: read
** the old table through the mappings' getters and the view; commit random
** writes; catch the reader up and compute the changeset; read the new
** table; apply the steps one at a time to a copy of the old table, checking
** each step against the table as it stands at that moment (and its place
** in the order the header documents); the result must be the new table.
**
** Run with a seed number as argument to replay one history verbosely.
*/
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "histories.h"

#define VIEW "byGroupRank"
#define HISTORIES 300
#define BASE_SEED 0xED175C41u

static size_t changesets, empty_changesets, consolidated_tables;

/* One seeded history; returns 1 when every changeset checked out. */
static int run_history(const char *directory, uint64_t seed, int verbose, int *reports) {
    ydb_database *db = NULL;
    ydb_connection *writer = NULL, *reader = NULL;
    ydb_mappings *m;
    ydb_txn *txn = NULL;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    group_choice choice = {-1, 0};
    text config = {"", 0};
    char file[256];
    int ok = 1;

    random_state = seed;
    memset(present, 0, sizeof present);
    snprintf(file, sizeof file, "%s/h%llu.sqlite", directory, (unsigned long long)seed);
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    def.grouping = group_of_object;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = rank_then_key;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    def.persistent = random_below(2);
    REQUIRE_OK(ydb_view_register(db, VIEW, &def, NULL, NULL));
    for (int i = random_below(6); i > 0; i--) random_commit(writer);

    m = random_mappings(VIEW, &choice, &config);
    if (verbose) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, config.description);
    REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
    REQUIRE_OK(ydb_mappings_update(m, txn));
    ydb_txn_end(txn);

    for (int round = 0, rounds = 2 + random_below(5); round < rounds; round++) {
        table old_table, new_table;
        ydb_notification_list *skipped = NULL;
        ydb_changeset *cs = NULL;
        int empty = 0;
        if (!read_table(reader, m, VIEW, &old_table)) {
            ok = 0;
            break;
        }
        for (int commits = 1 + random_below(3); commits > 0; commits--) random_commit(writer);
        REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, &skipped));
        CHECK_OK(ydb_changeset_new(m, skipped, &cs));
        ydb_notification_list_free(skipped);
        if (cs == NULL || !read_table(reader, m, VIEW, &new_table)) {
            ydb_changeset_free(cs);
            ok = 0;
            break;
        }
        changesets++;
        if (is_consolidated(m)) consolidated_tables++;
        CHECK_OK(ydb_changeset_is_empty(cs, &empty));
        if (empty) empty_changesets++;
        if (verbose) fprintf(stderr, "  round %d:\n", round);
        if (!check_steps(cs, &old_table, &new_table, seed, round, verbose, reports)) {
            if (*reports <= MAX_FAILURE_REPORTS)
                fprintf(stderr, "    (seed %llu: %s)\n", (unsigned long long)seed, config.description);
            ok = 0;
        }
        ydb_changeset_free(cs);
        if (!ok) break;
    }

    ydb_mappings_free(m);
    CHECK_OK(ydb_connection_close(reader));
    CHECK_OK(ydb_connection_close(writer));
    CHECK_OK(ydb_database_close(db));
    remove_database_files(file);
    return ok;
}

int main(int argc, char **argv) {
    char directory[64];
    struct timespec start, end;
    int failed_histories = 0, reports = 0;
    double seconds;

    snprintf(directory, sizeof directory, "%s", "ydbview-edit-script-XXXXXX");
    if (mkdtemp(directory) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);

    if (argc > 1) {
        /* Replay one seed, printing every table and step. */
        uint64_t seed = strtoull(argv[1], NULL, 0);
        CHECK(run_history(directory, seed, 1, &reports));
        CHECK(rmdir(directory) == 0);
        return check_summary();
    }

    for (int history = 0; history < HISTORIES; history++) {
        uint64_t seed = (uint64_t)BASE_SEED + (uint64_t)history;
        if (!run_history(directory, seed, 0, &reports)) failed_histories++;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;

    printf("%d histories (%d failed), %zu changesets (%zu empty, %zu consolidated), %.1f s\n", HISTORIES,
           failed_histories, changesets, empty_changesets, consolidated_tables, seconds);
    printf("steps: %zu remove section, %zu insert section, %zu remove row, %zu insert row, %zu move row, "
           "%zu reload row; %zu row steps without a key\n",
           step_totals[1], step_totals[2], step_totals[3], step_totals[4], step_totals[5], step_totals[6],
           unnamed_steps);
    printf("configurations: %zu static, %zu dynamic groups, %zu dynamic sections, %zu fixed ranges, "
           "%zu flexible ranges (%zu pinned at the end), %zu reversed groups, %zu with dependency offsets, "
           "%zu auto-consolidating\n",
           with_static_groups, with_dynamic_groups, with_dynamic_sections, with_fixed, with_flexible,
           with_pin_end, with_reversed, with_offsets, with_consolidation);

    CHECK(failed_histories == 0);
    /* Not vacuous: every kind of step, keyless rows, every configuration. */
    for (int type = 1; type <= 6; type++) CHECK(step_totals[type] > 0);
    CHECK(unnamed_steps > 0);
    CHECK(consolidated_tables > 0);
    CHECK(with_static_groups > 0 && with_dynamic_groups > 0 && with_dynamic_sections > 0 && with_fixed > 0 &&
          with_flexible > 0 && with_pin_end > 0 && with_reversed > 0 && with_offsets > 0 &&
          with_consolidation > 0);
    CHECK(rmdir(directory) == 0); /* every database file was removed */
    return check_summary();
}
