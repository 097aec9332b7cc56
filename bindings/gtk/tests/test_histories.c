/*
** test_histories.c -- YdbviewGtkListModel and its sections model over
** seeded random histories, through nothing but their signals.
**
** For each seed: a database, mappings in a random configuration (every kind
** histories.h lists) given to a model, and a consumer that knows only
** items-changed: it replays each signal on a plain array of row
** descriptions ("collection/key=object", the added items read at once),
** checking the model's count after each signal; the same for the sections
** model, a replay per section. Then rounds of random commits; after each
** catch-up the replayed arrays must equal the table the mappings show, read
** anew through the C ABI (getters, view, rows) at the same snapshot. One
** history in eight has max_commits_behind of 1 or 2 and commits several
** times between catch-ups, so that the model must reload: those catch-ups
** must say so (caught-up's `reloaded`), the others must never reload.
**
** Run with a seed to replay one history verbosely.
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "histories.h"

#define HISTORIES 240
#define BASE_SEED 0x67746B34u
#define MAX_REPORTS 5

static int failures, reports;
static unsigned long catch_ups, reloads, row_signals, commits;

static void on_caught_up(YdbviewGtkListModel *model, gboolean reloaded, gpointer data) {
    int *reloaded_out = data;
    (void)model;
    if (reloaded) *reloaded_out = 1;
}

static int compare(const char *what, const char *want, const char *got, uint64_t seed, int round,
                   const history *h) {
    if (want != NULL && got != NULL && strcmp(want, got) == 0) return 1;
    failures++;
    if (reports++ < MAX_REPORTS)
        fprintf(stderr, "seed %llu round %d: the %s differs from the mappings (%s)\n--- mappings:\n%s--- %s:\n%s",
                (unsigned long long)seed, round, what, h->config, want ? want : "(unreadable)\n", what,
                got ? got : "");
    return 0;
}

/* Compares both consumers with the mappings; returns 1 when they agree. */
static int check(YdbviewGtkListModel *model, history *h, replay *rows, sections_replay *sections, uint64_t seed,
                 int round) {
    uint64_t snapshot = 0;
    ydb_mappings *m = ydbview_gtk_list_model_get_mappings(model);
    char *want = history_expected(h, m, 0, &snapshot), *got = replay_text(rows);
    char *want_sections = history_expected(h, m, 1, &snapshot), *got_sections = sections_replay_text(sections);
    int ok = compare("list", want, got, seed, round, h) &&
             compare("sections", want_sections, got_sections, seed, round, h);
    if (ok && snapshot != ydbview_gtk_list_model_get_snapshot(model)) {
        failures++;
        ok = 0;
        fprintf(stderr, "seed %llu round %d: the model is at snapshot %llu, the database at %llu\n",
                (unsigned long long)seed, round, (unsigned long long)ydbview_gtk_list_model_get_snapshot(model),
                (unsigned long long)snapshot);
    }
    g_free(want);
    g_free(got);
    g_free(want_sections);
    g_free(got_sections);
    return ok;
}

static void run_history(uint64_t seed, int verbose, history_coverage *coverage) {
    history h;
    ydb_mappings *m;
    YdbviewGtkListModel *model;
    YdbviewGtkSectionsModel *sections;
    replay rows;
    sections_replay by_section;
    GError *error = NULL;
    int lagging, reloaded = 0, before = failures;

    history_seed(seed);
    if (!history_open(&h)) {
        failures++;
        return;
    }
    lagging = history_below(8) == 0;
    if (lagging) ydb_database_set_max_commits_behind(h.db, 1 + (uint64_t)history_below(2));
    for (int i = history_below(8); i > 0; i--) history_commit(&h);
    m = history_random_mappings(&h, coverage);
    if (verbose) fprintf(stderr, "seed %llu: %s%s\n", (unsigned long long)seed, h.config, lagging ? ", lagging" : "");
    model = ydbview_gtk_list_model_new(h.db, m, &error);
    if (model == NULL) {
        fprintf(stderr, "seed %llu: no model: %s\n", (unsigned long long)seed, error->message);
        g_error_free(error);
        failures++;
        history_close(&h);
        return;
    }
    /* No main loop runs here: the test catches up itself. */
    ydbview_gtk_list_model_set_following(model, FALSE);
    g_signal_connect(model, "caught-up", G_CALLBACK(on_caught_up), &reloaded);
    sections = ydbview_gtk_list_model_get_sections(model);
    replay_start(&rows, G_LIST_MODEL(model), &failures);
    sections_replay_start(&by_section, G_LIST_MODEL(sections), &failures);
    check(model, &h, &rows, &by_section, seed, -1);

    for (int round = 0, rounds = 4 + history_below(10); round < rounds && failures == before; round++) {
        int writes = lagging ? 1 + history_below(4) : 1 + history_below(2);
        for (int i = 0; i < writes; i++) commits += (unsigned long)history_commit(&h);
        reloaded = 0;
        if (!ydbview_gtk_list_model_catch_up(model, &error)) {
            fprintf(stderr, "seed %llu round %d: catch-up failed: %s\n", (unsigned long long)seed, round,
                    error->message);
            g_clear_error(&error);
            failures++;
            break;
        }
        catch_ups++;
        reloads += (unsigned long)reloaded;
        if (reloaded && !lagging) {
            failures++;
            fprintf(stderr, "seed %llu round %d: the model reloaded without falling behind (%s)\n",
                    (unsigned long long)seed, round, h.config);
        }
        if (verbose) {
            char *text = sections_replay_text(&by_section);
            fprintf(stderr, "  round %d (%d commits%s):\n%s", round, writes, reloaded ? ", reloaded" : "", text);
            g_free(text);
        }
        check(model, &h, &rows, &by_section, seed, round);
    }
    row_signals += rows.signals;
    replay_stop(&rows);
    sections_replay_stop(&by_section);
    g_object_unref(sections);
    g_object_unref(model); /* frees the mappings */
    history_close(&h);
}

int main(int argc, char **argv) {
    history_coverage coverage = {0};
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (argc > 1) {
        run_history(strtoull(argv[1], NULL, 0), 1, &coverage);
    } else {
        for (int i = 0; i < HISTORIES; i++) run_history((uint64_t)BASE_SEED + (uint64_t)i, 0, &coverage);
        /* The histories must have covered what they claim to. */
        if (coverage.dynamic_groups == 0 || coverage.static_groups == 0 || coverage.dynamic_sections == 0 ||
            coverage.fixed == 0 || coverage.flexible == 0 || coverage.pin_end == 0 || coverage.reversed == 0 ||
            coverage.offsets == 0 || coverage.consolidation == 0 || reloads == 0) {
            fprintf(stderr, "some configuration was never drawn, or no catch-up reloaded\n");
            failures++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%d histories, %lu commits, %lu catch-ups (%lu reloads), %lu items-changed on the list; "
           "configurations: %d dynamic-group, %d static-group, %d dynamic-section, %d fixed, %d flexible, "
           "%d pinned at the end, %d reversed, %d with dependencies, %d consolidating; %.2f s\n",
           argc > 1 ? 1 : HISTORIES, commits, catch_ups, reloads, row_signals, coverage.dynamic_groups,
           coverage.static_groups, coverage.dynamic_sections, coverage.fixed, coverage.flexible, coverage.pin_end,
           coverage.reversed, coverage.offsets, coverage.consolidation,
           (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9);
    printf("%s\n", failures == 0 ? "all histories agree with the mappings" : "FAILED");
    return failures == 0 ? 0 : 1;
}
