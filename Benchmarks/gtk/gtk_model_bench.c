/*
** gtk_model_bench.c -- how long YdbviewGtkListModel takes to apply a commit.
**
** For each table size: a view of N rows "GROUP:RANK" in 4 groups sorted by
** rank (a sort key), mappings of the 4 groups, and a model following on the
** GLib main loop with a plain consumer attached: for every items-changed it
** reads each added item (as a list view reads the rows it shows). Then, for
** each kind of commit, another connection commits and the time is taken
** from the wakeup (the descriptor is readable; the main loop is entered)
** to the model's caught-up signal, after the last items-changed was
** handled. The median and the worst of the rounds are printed, with the
** signals and items read, next to the engine's own share: another
** connection with the same mappings catching up, computing the changeset
** and reading its edit steps, which the model does before its own work. Not a test (ctest runs a smoke pass); see
** Benchmarks/README.md, "GTK list model".
**
**   ydbview-gtk-bench [--sizes 10000,100000] [--rounds 5] [--view]
**
** --view adds a third consumer, a GtkListView in a window (needs a display:
** bindings/gtk/tests/under-xvfb.sh runs it under Xvfb).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gtk/gtk.h>

#include "ydbview-gtk.h"

#define GROUPS 4
static const char *const group_names[GROUPS] = {"a", "b", "c", "d"};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_group(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    char group[2] = {((const char *)row->object)[0], 0};
    (void)ctx;
    (void)txn;
    return ydb_group_result_set(result, group);
}

static int by_rank(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    (void)ctx;
    (void)txn;
    (void)group;
    ydb_sort_key_append_int64(key, strtol((const char *)row->object + 2, NULL, 10), 0);
    return ydb_sort_key_append_text(key, row->key, 0);
}

/* ---- the consumer ---- */

typedef struct {
    int read_items; /* read each added item, or only count the signals */
    unsigned long signals, items;
    int caught_up;
    double finished;
} consumer;

static void on_items_changed(GListModel *model, guint position, guint removed, guint added, gpointer data) {
    consumer *c = data;
    (void)removed;
    c->signals++;
    for (guint i = 0; c->read_items && i < added; i++) {
        GObject *item = g_list_model_get_item(model, position + i);
        c->items += item != NULL;
        g_clear_object(&item);
    }
}

static void on_caught_up(YdbviewGtkListModel *model, gboolean reloaded, gpointer data) {
    consumer *c = data;
    (void)model;
    (void)reloaded;
    c->finished = now();
    c->caught_up = 1;
}

/* ---- commits ---- */

static unsigned long long rng = 88172645463325252ull;
static int below(int n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (unsigned long long)n);
}

enum { INSERT, UPDATE, REMOVE };
static const char *const kind_names[] = {"insert", "update (moves)", "remove"};

/* Writes `count` rows of one kind in one commit. Keys below `*next` exist
** (removed ones are written back first by the insert rounds). */
static int write_rows(ydb_connection *writer, int kind, int count, int size, int *next) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(writer, &txn);
    for (int i = 0; rc == YDB_OK && i < count; i++) {
        char key[24], object[32];
        if (kind == INSERT) {
            snprintf(key, sizeof key, "n%09d", (*next)++);
        } else {
            snprintf(key, sizeof key, "k%09d", below(size));
        }
        snprintf(object, sizeof object, "%s:%d", group_names[below(GROUPS)], below(1000000));
        rc = kind == REMOVE ? ydb_txn_remove_object(txn, "rows", key)
                            : ydb_txn_set_object(txn, "rows", key, object, strlen(object), NULL, 0);
    }
    return rc == YDB_OK ? ydb_txn_commit(txn) : (ydb_txn_rollback(txn), rc);
}

/* The engine's share, for comparison: a connection of its own with the same
** mappings catches up, computes the changeset in a read transaction and
** reads every edit step -- what the model does before its own work. */
static double engine_catch_up(ydb_connection *mirror, ydb_mappings *mappings) {
    ydb_notification_list *commits = NULL;
    ydb_changeset *changeset = NULL;
    ydb_txn *txn = NULL;
    size_t steps = 0;
    double start = now();
    ydb_connection_begin_long_lived_read(mirror, &commits);
    ydb_txn_begin_read(mirror, &txn);
    ydb_changeset_new_in_txn(mappings, commits, txn, &changeset);
    ydb_changeset_step_count(changeset, &steps);
    for (size_t i = 0; i < steps; i++) {
        ydb_edit_step step;
        ydb_changeset_step(changeset, i, &step);
    }
    ydb_changeset_free(changeset);
    ydb_txn_end(txn);
    ydb_notification_list_free(commits);
    return (now() - start) * 1e3;
}

/* ---- a real view (--view, under a display) ---- */

static int view_wanted; /* --view and a display could be opened */

static void setup_label(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
    (void)factory;
    (void)data;
    gtk_list_item_set_child(item, gtk_label_new(""));
}

static void bind_label(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
    YdbviewGtkItem *row = gtk_list_item_get_item(item);
    (void)factory;
    (void)data;
    gtk_label_set_text(GTK_LABEL(gtk_list_item_get_child(item)), ydbview_gtk_item_get_key(row));
}

/* A window of about 30 rows showing the model in a GtkListView, as an
** application would: the view reads only the items on screen. */
static GtkWidget *show_in_view(YdbviewGtkListModel *model) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    GtkWidget *window = gtk_window_new(), *scrolled = gtk_scrolled_window_new(), *view;
    g_signal_connect(factory, "setup", G_CALLBACK(setup_label), NULL);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_label), NULL);
    view = gtk_list_view_new(GTK_SELECTION_MODEL(gtk_no_selection_new(G_LIST_MODEL(g_object_ref(model)))), factory);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), view);
    gtk_window_set_default_size(GTK_WINDOW(window), 320, 600);
    gtk_window_set_child(GTK_WINDOW(window), scrolled);
    gtk_window_present(GTK_WINDOW(window));
    for (double until = now() + 0.5; now() < until;) g_main_context_iteration(NULL, FALSE); /* mapped, drawn */
    return window;
}

/* The rest of the turn after a catch-up: what the view does with the
** signals (its layout; the paint waits for the frame clock). */
static double settle(void) {
    double start = now();
    while (g_main_context_pending(NULL)) g_main_context_iteration(NULL, FALSE);
    return (now() - start) * 1e3;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run_size(int size, int rounds) {
    ydb_database *db = NULL;
    ydb_connection *writer = NULL, *mirror = NULL;
    ydb_mappings *mirror_mappings = NULL;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    ydb_mappings *mappings = NULL;
    YdbviewGtkListModel *model;
    GtkWidget *window = NULL;
    GError *error = NULL;
    consumer c = {0};
    ydb_txn *txn = NULL;
    int next = 0, rc;
    double start;

    def.grouping = by_group;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = by_rank;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.persistent = 0;
    if (ydb_database_open(NULL, &db) != YDB_OK || ydb_connection_open(db, &writer) != YDB_OK ||
        ydb_view_register(db, "byRank", &def, NULL, NULL) != YDB_OK) {
        fprintf(stderr, "%s\n", ydb_errmsg());
        return 1;
    }
    rc = ydb_txn_begin_read_write(writer, &txn);
    for (int i = 0; rc == YDB_OK && i < size; i++) {
        char key[24], object[32];
        snprintf(key, sizeof key, "k%09d", i);
        snprintf(object, sizeof object, "%s:%d", group_names[i % GROUPS], below(1000000));
        rc = ydb_txn_set_object(txn, "rows", key, object, strlen(object), NULL, 0);
    }
    if (rc != YDB_OK || ydb_txn_commit(txn) != YDB_OK) return 1;
    ydb_mappings_new("byRank", group_names, GROUPS, &mappings);
    ydb_mappings_new("byRank", group_names, GROUPS, &mirror_mappings);
    ydb_connection_open(db, &mirror);
    ydb_connection_begin_long_lived_read(mirror, NULL);
    ydb_txn_begin_read(mirror, &txn);
    ydb_mappings_update(mirror_mappings, txn);
    ydb_txn_end(txn);
    start = now();
    model = ydbview_gtk_list_model_new(db, mappings, &error);
    if (model == NULL) {
        fprintf(stderr, "%s\n", error->message);
        return 1;
    }
    printf("%d rows: model made in %.1f ms (reads every key once)\n", size, (now() - start) * 1e3);
    g_signal_connect(model, "items-changed", G_CALLBACK(on_items_changed), &c);
    g_signal_connect(model, "caught-up", G_CALLBACK(on_caught_up), &c);

    for (int mode = 0; mode < (view_wanted ? 3 : 2); mode++) {
      static const char *const consumers[] = {
          "a consumer that reads every added item (a view showing every row)",
          "a consumer that only counts the signals (the rows are off screen)",
          "a GtkListView in a 320x600 window (reads the rows on screen; \"then\": its layout after)"};
      c.read_items = mode == 0;
      if (mode == 2) window = show_in_view(model);
      printf("  %s:\n", consumers[mode]);
      for (int batch = 1; batch <= 1000; batch *= 1000) {
        for (int kind = INSERT; kind <= REMOVE; kind++) {
            double *times = calloc((size_t)rounds, sizeof *times), *engine = calloc((size_t)rounds, sizeof *engine);
            double *then = calloc((size_t)rounds, sizeof *then);
            unsigned long signals = 0, items = 0;
            for (int round = 0; round < rounds; round++) {
                uint64_t before = 0, after = 0;
                if (window != NULL) settle(); /* the view idle before the commit */
                ydb_database_snapshot(db, &before);
                do { /* a commit that changed nothing (removing gone rows) wakes no one: again */
                    if (write_rows(writer, kind, batch, size, &next) != YDB_OK) {
                        fprintf(stderr, "commit: %s\n", ydb_errmsg());
                        return 1;
                    }
                    ydb_database_snapshot(db, &after);
                } while (after == before);
                c.caught_up = 0;
                c.signals = c.items = 0;
                /* Whichever catches up first may copy the log back into the
                ** database (see ydb_connection_begin_long_lived_read): take turns. */
                if (round % 2) engine[round] = engine_catch_up(mirror, mirror_mappings);
                start = now(); /* the descriptor is readable: the main loop wakes */
                while (!c.caught_up) g_main_context_iteration(NULL, TRUE);
                times[round] = (c.finished - start) * 1e3;
                if (window != NULL) then[round] = settle();
                if (round % 2 == 0) engine[round] = engine_catch_up(mirror, mirror_mappings);
                signals += c.signals;
                items += c.items;
            }
            qsort(times, (size_t)rounds, sizeof *times, compare_doubles);
            qsort(engine, (size_t)rounds, sizeof *engine, compare_doubles);
            qsort(then, (size_t)rounds, sizeof *then, compare_doubles);
            printf("    %4d-row commit, %-15s model %7.2f ms (worst %7.2f), engine alone %7.2f ms",
                   batch, kind_names[kind], times[rounds / 2], times[rounds - 1], engine[rounds / 2]);
            if (window != NULL) printf(", then %6.2f ms", then[rounds / 2]);
            printf("  (%lu items-changed, %lu items read; %u rows)\n", signals / (unsigned long)rounds,
                   items / (unsigned long)rounds, g_list_model_get_n_items(G_LIST_MODEL(model)));
            free(times);
            free(engine);
            free(then);
        }
      }
    }
    if (window != NULL) gtk_window_destroy(GTK_WINDOW(window));
    g_object_unref(model);
    ydb_mappings_free(mirror_mappings);
    ydb_connection_close(mirror);
    ydb_connection_close(writer);
    ydb_database_close(db);
    return 0;
}

int main(int argc, char **argv) {
    const char *sizes = "10000,100000";
    int rounds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--sizes") == 0) sizes = argv[i + 1];
        else if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
    }
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--view") == 0) {
            view_wanted = gtk_init_check();
            if (!view_wanted) printf("--view: no display could be opened; measuring without a view\n");
        }
    if (rounds < 1) rounds = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ydbview-gtk: time from the wakeup to the last items-changed handled (median of %d rounds)\n", rounds);
    char **each = g_strsplit(sizes, ",", -1);
    for (char **size = each; *size != NULL; size++)
        if (run_size(atoi(*size), rounds) != 0) return 1;
    g_strfreev(each);
    return 0;
}
