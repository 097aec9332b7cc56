/*
** test_listview.c -- a real GtkListView over YdbviewGtkListModel, through a
** GtkFilterListModel and a GtkSortListModel, on a shown window (run under
** Xvfb by under-xvfb.sh; exit 77 when GTK finds no display).
**
** For a few seeded mappings configurations (histories.h), a timer on the
** main loop commits random writes through another connection; the model
** follows through its wakeup descriptor alone. After every catch-up the
** sort model must hold exactly the mappings' rows (read anew through the C
** ABI) that pass the filter, in the sorter's order; after the last commit
** of each configuration, once the view has drawn, the rows the list view
** shows (its row widgets' labels, top to bottom) must be the first rows of
** that list.
*/
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>

#include "histories.h"

#define CONFIGURATIONS 4
#define COMMITS 40

static int failures, checks;

typedef struct {
    GtkWidget *window, *view;
    GtkFilterListModel *filtered;
    GtkSortListModel *sorted;
    history h;
    YdbviewGtkListModel *model;
    int configuration, commits;
    gboolean waiting_for_frames;
    GMainLoop *loop;
} fixture;

/* The filter hides rows whose key ends in 1; the sorter orders by object,
** descending, then by name: another order than the mappings'. */
static gboolean keep_row(gpointer item, gpointer data) {
    const char *key = ydbview_gtk_item_get_key(item);
    (void)data;
    return key[strlen(key) - 1] != '1';
}

static int compare_descriptions(const char *a, const char *b) {
    const char *object_a = strchr(a, '='), *object_b = strchr(b, '=');
    int order = strcmp(object_b, object_a);
    return order != 0 ? order : strcmp(a, b);
}

static int compare_items(gconstpointer a, gconstpointer b, gpointer data) {
    char *da = history_describe((YdbviewGtkItem *)a), *db = history_describe((YdbviewGtkItem *)b);
    int order = compare_descriptions(da, db);
    (void)data;
    g_free(da);
    g_free(db);
    return order < 0 ? GTK_ORDERING_SMALLER : order > 0 ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
}

static int compare_lines(const void *a, const void *b) {
    return compare_descriptions(*(char *const *)a, *(char *const *)b);
}

/* The rows the stack should show: the mappings' rows, filtered and sorted. */
static GPtrArray *expected_rows(fixture *f) {
    uint64_t snapshot = 0;
    char *text = history_expected(&f->h, ydbview_gtk_list_model_get_mappings(f->model), 0, &snapshot);
    char **lines = g_strsplit(text ? text : "", "\n", -1);
    GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
    for (char **line = lines; *line != NULL; line++) {
        char *equals = strchr(*line, '=');
        if (**line == '\0' || equals == NULL || equals[-1] == '1') continue;
        g_ptr_array_add(rows, g_strdup(*line));
    }
    qsort(rows->pdata, rows->len, sizeof(gpointer), compare_lines);
    g_strfreev(lines);
    g_free(text);
    if (snapshot != ydbview_gtk_list_model_get_snapshot(f->model)) {
        fprintf(stderr, "the model is at snapshot %llu, the database at %llu\n",
                (unsigned long long)ydbview_gtk_list_model_get_snapshot(f->model), (unsigned long long)snapshot);
        failures++;
    }
    return rows;
}

static void check_sorted(fixture *f) {
    GPtrArray *want = expected_rows(f);
    guint n = g_list_model_get_n_items(G_LIST_MODEL(f->sorted));
    int ok = n == want->len;
    for (guint i = 0; ok && i < n; i++) {
        YdbviewGtkItem *item = g_list_model_get_item(G_LIST_MODEL(f->sorted), i);
        char *got = history_describe(item);
        ok = strcmp(got, want->pdata[i]) == 0;
        if (!ok) fprintf(stderr, "sort model row %u: %s, mappings %s\n", i, got, (char *)want->pdata[i]);
        g_free(got);
        g_object_unref(item);
    }
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "configuration %d after %d commits: the sort model (%u rows) differs from the mappings (%u) "
                "(%s)\n", f->configuration, f->commits, n, want->len, f->h.config);
    }
    g_ptr_array_unref(want);
}

/* The labels of the view's row widgets, top to bottom. */
static void check_view(fixture *f) {
    GPtrArray *want = expected_rows(f);
    guint shown = 0;
    graphene_point_t top_left = GRAPHENE_POINT_INIT(0, 0), previous_y = GRAPHENE_POINT_INIT(0, -1);
    for (GtkWidget *row = gtk_widget_get_first_child(f->view); row != NULL; row = gtk_widget_get_next_sibling(row)) {
        GtkWidget *label = gtk_widget_get_first_child(row);
        graphene_point_t at;
        if (!GTK_IS_LABEL(label) || !gtk_widget_get_mapped(row)) continue;
        if (!gtk_widget_compute_point(row, f->view, &top_left, &at)) continue;
        if (at.y <= previous_y.y || shown >= want->len ||
            strcmp(gtk_label_get_text(GTK_LABEL(label)), want->pdata[shown]) != 0) {
            fprintf(stderr, "configuration %d: the view shows %s as row %u, the mappings %s (%s)\n", f->configuration,
                    gtk_label_get_text(GTK_LABEL(label)), shown,
                    shown < want->len ? (char *)want->pdata[shown] : "nothing", f->h.config);
            failures++;
            break;
        }
        previous_y = at;
        shown++;
    }
    if (shown == 0 && want->len > 0) {
        fprintf(stderr, "configuration %d: the view shows no row, the mappings %u\n", f->configuration, want->len);
        failures++;
    }
    checks++;
    printf("configuration %d (%s): %u rows, %u shown by the view\n", f->configuration, f->h.config, want->len,
           shown);
    g_ptr_array_unref(want);
}

static void on_caught_up(YdbviewGtkListModel *model, gboolean reloaded, gpointer data) {
    (void)model;
    if (reloaded) {
        fprintf(stderr, "an unexpected reload\n");
        failures++;
    }
    check_sorted(data);
}

static gboolean next_configuration(gpointer data);

static gboolean after_frames(gpointer data) {
    fixture *f = data;
    check_view(f);
    g_idle_add(next_configuration, f);
    return G_SOURCE_REMOVE;
}

static gboolean commit(gpointer data) {
    fixture *f = data;
    if (f->commits == COMMITS) {
        /* Let the view lay out and draw what the last catch-up announced. */
        g_timeout_add(300, after_frames, f);
        return G_SOURCE_REMOVE;
    }
    history_commit(&f->h);
    f->commits++;
    return G_SOURCE_CONTINUE;
}

static gboolean next_configuration(gpointer data) {
    fixture *f = data;
    GError *error = NULL;
    ydb_mappings *m;
    if (f->model != NULL) {
        gtk_filter_list_model_set_model(f->filtered, NULL);
        g_clear_object(&f->model);
        history_close(&f->h);
    }
    if (f->configuration == CONFIGURATIONS) {
        g_main_loop_quit(f->loop);
        return G_SOURCE_REMOVE;
    }
    history_seed(0x4C495354u + (uint64_t)f->configuration++);
    if (!history_open(&f->h)) {
        failures++;
        g_main_loop_quit(f->loop);
        return G_SOURCE_REMOVE;
    }
    for (int i = 0; i < 10; i++) history_commit(&f->h);
    {
        history_coverage ignored = {0};
        m = history_random_mappings(&f->h, &ignored);
    }
    f->model = ydbview_gtk_list_model_new(f->h.db, m, &error);
    if (f->model == NULL) {
        fprintf(stderr, "no model: %s\n", error->message);
        g_error_free(error);
        failures++;
        g_main_loop_quit(f->loop);
        return G_SOURCE_REMOVE;
    }
    g_signal_connect(f->model, "caught-up", G_CALLBACK(on_caught_up), f);
    gtk_filter_list_model_set_model(f->filtered, G_LIST_MODEL(f->model));
    check_sorted(f);
    f->commits = 0;
    g_timeout_add(15, commit, f);
    return G_SOURCE_REMOVE;
}

static void setup_row(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
    (void)factory;
    (void)data;
    gtk_list_item_set_child(item, gtk_label_new(""));
}

static void bind_row(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
    char *text = history_describe(gtk_list_item_get_item(item));
    (void)factory;
    (void)data;
    gtk_label_set_text(GTK_LABEL(gtk_list_item_get_child(item)), text);
    g_free(text);
}

int main(void) {
    fixture f = {0};
    GtkListItemFactory *factory;
    GtkNoSelection *selection;
    if (!gtk_init_check()) {
        printf("skipped: GTK cannot open a display\n");
        return 77;
    }
    f.loop = g_main_loop_new(NULL, FALSE);
    f.filtered = gtk_filter_list_model_new(NULL, GTK_FILTER(gtk_custom_filter_new(keep_row, NULL, NULL)));
    f.sorted = gtk_sort_list_model_new(G_LIST_MODEL(g_object_ref(f.filtered)),
                                       GTK_SORTER(gtk_custom_sorter_new(compare_items, NULL, NULL)));
    selection = gtk_no_selection_new(G_LIST_MODEL(g_object_ref(f.sorted)));
    factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_row), NULL);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_row), NULL);
    f.view = gtk_list_view_new(GTK_SELECTION_MODEL(selection), factory);
    f.window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(f.window), 320, 2000); /* every row on screen */
    gtk_window_set_child(GTK_WINDOW(f.window), f.view);
    gtk_window_present(GTK_WINDOW(f.window));
    g_idle_add(next_configuration, &f);
    g_main_loop_run(f.loop);
    gtk_window_destroy(GTK_WINDOW(f.window));
    g_object_unref(f.sorted);
    g_object_unref(f.filtered);
    g_main_loop_unref(f.loop);
    printf("%d checks, %d failures\n%s\n", checks, failures,
           failures == 0 ? "the list view shows the mappings' rows" : "FAILED");
    return failures == 0 && checks > CONFIGURATIONS ? 0 : 1;
}
