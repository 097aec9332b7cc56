/*
** histories.h -- seeded random histories for the ydbview-gtk tests: a
** database with a view of rows "GROUP:RANK" (grouped by GROUP, sorted by
** RANK then collection then key), mappings in a random configuration (static
** or dynamic groups, dynamic sections, fixed and flexible ranges pinned at
** either end, reversed groups, cell-drawing dependencies,
** auto-consolidation), random commits, and the table the mappings show read
** through the C ABI alone, to compare a model with.
*/
#ifndef YDBVIEW_GTK_TESTS_HISTORIES_H
#define YDBVIEW_GTK_TESTS_HISTORIES_H

#include <stdint.h>

#include "ydbview-gtk.h"

#define HISTORY_VIEW "byGroupRank"
#define HISTORY_COLLECTIONS 2
#define HISTORY_KEYS 12

typedef struct {
    int hidden;     /* index into the view's groups, or -1 */
    int descending;
} history_groups;

typedef struct {
    ydb_database *db;
    ydb_connection *writer;
    ydb_connection *checker; /* reads the expected table */
    history_groups groups;   /* the dynamic groups' choice, outliving the mappings */
    int present[HISTORY_COLLECTIONS][HISTORY_KEYS];
    char config[768];        /* the mappings' configuration, in words */
} history;

/* Counts of configurations covered, printed by the tests. */
typedef struct {
    int dynamic_groups, static_groups, dynamic_sections, fixed, flexible, pin_end, reversed, offsets,
        consolidation;
} history_coverage;

void history_seed(uint64_t seed);
int history_below(int n);

/* A new database in a private temporary file with the view registered. */
int history_open(history *h);
void history_close(history *h);
ydb_mappings *history_random_mappings(history *h, history_coverage *coverage);
/* One read-write commit of 1 to 4 random writes through h->writer. */
int history_commit(history *h);
/* Stores `count` rows "g:rank" in one commit (benchmarks, examples). */
int history_fill(ydb_connection *writer, const char *collection, int count, int groups);
int history_register_view(ydb_database *db);

/* The table `mappings` show, read at the newest snapshot through the C ABI
** (the mappings' getters, then the view and the rows): every row as
** "collection/key=object" on a line, each section headed by "# group" when
** `with_sections`. Owned: g_free. NULL on failure. *out_snapshot gets the
** snapshot read. */
char *history_expected(history *h, ydb_mappings *mappings, int with_sections, uint64_t *out_snapshot);

/* How a test describes an item: "collection/key=object". */
char *history_describe(YdbviewGtkItem *item);

/* A consumer that knows nothing but items-changed: it replays each signal
** on an array of row descriptions, reading the added items, and checks
** that the model's count agrees after each signal. */
typedef struct {
    GListModel *model;
    GPtrArray *rows;     /* char*, owned */
    gulong handler;
    int *failures;
    unsigned long signals;
} replay;

void replay_start(replay *r, GListModel *model, int *failures);
void replay_stop(replay *r);
/* The rows, one per line ("" when empty). Owned: g_free. */
char *replay_text(const replay *r);

/* The same for a YdbviewGtkSectionsModel: a replay per section. */
typedef struct {
    GListModel *sections;
    GPtrArray *shown;    /* section_replay*, owned */
    gulong handler;
    int *failures;
} sections_replay;

void sections_replay_start(sections_replay *r, GListModel *sections, int *failures);
void sections_replay_stop(sections_replay *r);
/* "# group" then its rows, for each section. Owned: g_free. */
char *sections_replay_text(const sections_replay *r);

#endif
