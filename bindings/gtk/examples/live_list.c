/*
** live_list.c -- a GTK 4 window showing a live grouped to-do list: a
** ydbview view groups tasks by list ("today", "this week", "later") and
** sorts them by priority; a YdbviewGtkListModel over mappings of those
** groups feeds a GtkTreeListModel (a header per section, its tasks below)
** and a GtkListView. Another thread, with a connection of its own, adds,
** edits and finishes tasks twice a second; the list follows on the main
** loop, with no thread of its own.
**
**   live_list                       run until the window is closed
**   live_list --screenshot FILE     save a PNG of the window after a few
**                                   commits, then exit (scripts/screenshot-gtk.sh)
*/
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>

#include "ydbview-gtk.h"

static const char *const lists[] = {"today", "this week", "later"};
static const char *const titles[] = {
    "Water the plants", "Call Ana",         "Renew the passport", "Book the dentist", "Pay the rent",
    "Fix the bike",     "Answer Tom's mail", "Buy coffee",         "Back up the laptop", "Plan the trip",
    "Read chapter 4",   "Return the books",  "Clean the fridge",   "Order a new lamp",  "Write the report",
    "Recycle the glass", "Bake bread",       "Update the CV"};
#define TITLES (sizeof titles / sizeof titles[0])

/* ---- the view: objects "LIST:PRIORITY:TITLE" ---- */

static int by_list(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    const char *colon = memchr(row->object, ':', row->object_size);
    char group[32];
    size_t n = colon ? (size_t)(colon - (const char *)row->object) : 0;
    (void)ctx;
    (void)txn;
    if (n == 0 || n >= sizeof group) return 0;
    memcpy(group, row->object, n);
    group[n] = '\0';
    return ydb_group_result_set(result, group);
}

static int by_priority(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    const char *text = memchr(row->object, ':', row->object_size);
    (void)ctx;
    (void)txn;
    (void)group;
    ydb_sort_key_append_int64(key, text ? text[1] - '0' : 9, 0);
    return ydb_sort_key_append_text(key, row->key, 0);
}

/* ---- another thread writes ---- */

typedef struct {
    ydb_connection *connection;
    volatile gint stop;
    guint32 seed;
} writer;

static void write_task(ydb_txn *txn, guint32 *seed, int task) {
    char key[8], object[96];
    snprintf(key, sizeof key, "t%02d", task);
    snprintf(object, sizeof object, "%s:%u:%s", lists[g_random_int() % 3], 1 + (*seed = *seed * 1103515245u + 12345u) % 5,
             titles[task]);
    ydb_txn_set_object(txn, "tasks", key, object, strlen(object), NULL, 0);
}

static gpointer write_forever(gpointer data) {
    writer *w = data;
    while (!g_atomic_int_get(&w->stop)) {
        ydb_txn *txn = NULL;
        g_usleep(500 * 1000);
        if (ydb_txn_begin_read_write(w->connection, &txn) != YDB_OK) continue;
        if (g_random_int_range(0, 4) == 0) {
            char key[8];
            snprintf(key, sizeof key, "t%02d", g_random_int_range(0, (gint)TITLES));
            ydb_txn_remove_object(txn, "tasks", key); /* done */
        } else {
            write_task(txn, &w->seed, g_random_int_range(0, (gint)TITLES));
        }
        ydb_txn_commit(txn);
    }
    return NULL;
}

/* ---- the window ---- */

static GListModel *section_rows(gpointer item, gpointer data) {
    (void)data;
    return YDBVIEW_GTK_IS_SECTION(item) ? g_object_ref(G_LIST_MODEL(item)) : NULL;
}

static void setup_row(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
    GtkWidget *expander = gtk_tree_expander_new(), *label = gtk_label_new(NULL);
    (void)factory;
    (void)data;
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_tree_expander_set_child(GTK_TREE_EXPANDER(expander), label);
    gtk_list_item_set_child(item, expander);
}

static void bind_row(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
    GtkTreeListRow *row = gtk_list_item_get_item(item);
    GtkWidget *expander = gtk_list_item_get_child(item);
    GtkLabel *label = GTK_LABEL(gtk_tree_expander_get_child(GTK_TREE_EXPANDER(expander)));
    gpointer shown = gtk_tree_list_row_get_item(row);
    (void)factory;
    (void)data;
    gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(expander), row);
    if (YDBVIEW_GTK_IS_SECTION(shown)) {
        char *markup = g_markup_printf_escaped("<b>%s</b>", ydbview_gtk_section_get_group(shown));
        gtk_label_set_markup(label, markup);
        g_free(markup);
    } else {
        char *text = ydbview_gtk_item_dup_text(shown);
        char **parts = g_strsplit(text ? text : "", ":", 3);
        char *shown_text = g_strdup_printf("%s   %s", parts[0] && parts[1] ? parts[1] : "?",
                                           parts[0] && parts[1] && parts[2] ? parts[2] : "");
        gtk_label_set_text(label, shown_text);
        g_free(shown_text);
        g_strfreev(parts);
        g_free(text);
    }
    g_object_unref(shown);
}

typedef struct {
    GtkWidget *window, *status;
    const char *screenshot;
    int catch_ups;
    GMainLoop *loop;
} app;

static gboolean save_screenshot(gpointer data) {
    app *a = data;
    int width = gtk_widget_get_width(a->window), height = gtk_widget_get_height(a->window);
    GdkPaintable *paintable = gtk_widget_paintable_new(a->window);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    GskRenderNode *node;
    GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(a->window));
    gdk_paintable_snapshot(paintable, snapshot, width, height);
    node = gtk_snapshot_free_to_node(snapshot);
    if (node != NULL && renderer != NULL) {
        GdkTexture *texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
        if (gdk_texture_save_to_png(texture, a->screenshot))
            printf("saved %s (%dx%d) after %d catch-ups\n", a->screenshot, width, height, a->catch_ups);
        else
            fprintf(stderr, "cannot write %s\n", a->screenshot);
        g_object_unref(texture);
        gsk_render_node_unref(node);
    }
    g_object_unref(paintable);
    g_main_loop_quit(a->loop);
    return G_SOURCE_REMOVE;
}

static void on_caught_up(YdbviewGtkListModel *model, gboolean reloaded, gpointer data) {
    app *a = data;
    char *text = g_strdup_printf("snapshot %llu: %u tasks in %u lists%s",
                                 (unsigned long long)ydbview_gtk_list_model_get_snapshot(model),
                                 g_list_model_get_n_items(G_LIST_MODEL(model)),
                                 ydbview_gtk_list_model_get_n_sections(model), reloaded ? " (reloaded)" : "");
    gtk_label_set_text(GTK_LABEL(a->status), text);
    g_free(text);
    if (a->screenshot != NULL && ++a->catch_ups == 6) g_timeout_add(300, save_screenshot, a); /* after a frame */
}

int main(int argc, char **argv) {
    app a = {0};
    writer w = {0};
    ydb_database *db = NULL;
    ydb_connection *setup = NULL;
    ydb_txn *txn = NULL;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    ydb_mappings *mappings = NULL;
    YdbviewGtkListModel *model;
    YdbviewGtkSectionsModel *sections;
    GtkTreeListModel *tree;
    GtkListItemFactory *factory;
    GtkWidget *box, *scroller, *view;
    GError *error = NULL;
    GThread *thread;
    guint32 seed = 7;

    if (argc == 3 && strcmp(argv[1], "--screenshot") == 0) a.screenshot = argv[2];
    if (!gtk_init_check()) {
        fprintf(stderr, "live_list: GTK cannot open a display\n");
        return 77;
    }
    /* A temporary database with the view and a dozen tasks. */
    def.grouping = by_list;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = by_priority;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    if (ydb_database_open(NULL, &db) != YDB_OK || ydb_view_register(db, "byList", &def, NULL, NULL) != YDB_OK ||
        ydb_connection_open(db, &setup) != YDB_OK || ydb_txn_begin_read_write(setup, &txn) != YDB_OK) {
        fprintf(stderr, "live_list: %s\n", ydb_errmsg());
        return 1;
    }
    for (int task = 0; task < 12; task++) write_task(txn, &seed, task);
    ydb_txn_commit(txn);
    ydb_connection_close(setup);

    /* The model takes the mappings; the database must outlive it. */
    ydb_mappings_new("byList", lists, 3, &mappings);
    model = ydbview_gtk_list_model_new(db, mappings, &error);
    if (model == NULL) {
        fprintf(stderr, "live_list: %s\n", error->message);
        return 1;
    }
    sections = ydbview_gtk_list_model_get_sections(model);
    /* The tree takes the sections model (transfer full), which keeps the model. */
    tree = gtk_tree_list_model_new(G_LIST_MODEL(sections), FALSE, TRUE, section_rows, NULL, NULL);
    factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_row), NULL);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_row), NULL);
    view = gtk_list_view_new(GTK_SELECTION_MODEL(gtk_no_selection_new(G_LIST_MODEL(tree))), factory);
    scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), view);
    gtk_widget_set_vexpand(scroller, TRUE);
    a.status = gtk_label_new("waiting for the first commit");
    box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_box_append(GTK_BOX(box), scroller);
    gtk_box_append(GTK_BOX(box), a.status);
    a.window = gtk_window_new();
    gtk_window_set_title(GTK_WINDOW(a.window), "ydbview-gtk: a live list");
    gtk_window_set_default_size(GTK_WINDOW(a.window), 360, 560);
    gtk_window_set_child(GTK_WINDOW(a.window), box);
    a.loop = g_main_loop_new(NULL, FALSE);
    g_signal_connect(model, "caught-up", G_CALLBACK(on_caught_up), &a);
    g_signal_connect_swapped(a.window, "close-request", G_CALLBACK(g_main_loop_quit), a.loop);
    gtk_window_present(GTK_WINDOW(a.window));

    ydb_connection_open(db, &w.connection);
    w.seed = 11;
    thread = g_thread_new("writer", write_forever, &w);
    g_main_loop_run(a.loop);
    g_atomic_int_set(&w.stop, 1);
    g_thread_join(thread);

    gtk_window_destroy(GTK_WINDOW(a.window));
    g_object_unref(model); /* the last holder of the sections model lets it go too */
    ydb_connection_close(w.connection);
    ydb_database_close(db);
    g_main_loop_unref(a.loop);
    return 0;
}
