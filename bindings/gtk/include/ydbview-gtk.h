/*
** ydbview-gtk.h -- a GListModel over a ydbview mappings, for GTK 4.
**
** YdbviewGtkListModel shows the rows of one ydb_mappings as one flat list
** (every section's rows, top to bottom) and follows the database on the
** GLib main loop: when another connection commits, the model catches up and
** announces the changes as items-changed signals, one per step of the
** changeset's edit script (ydb_changeset_step), so that GtkListView,
** GtkSortListModel and GtkFilterListModel on top of it stay right.
** ydbview_gtk_list_model_get_sections() gives the same rows by section: a
** GListModel of YdbviewGtkSection, each itself a GListModel of its rows
** (what GtkTreeListModel's create function returns for a section).
**
** Build and link with:   pkg-config --cflags --libs ydbview-gtk
**
** OWNERSHIP.  ydbview_gtk_list_model_new() borrows the database (it must
** stay open while the model lives: close the model first; if it is closed
** anyway the model stops following and keeps the rows it shows) and takes
** the mappings: the model frees them when it is finalized, also when the
** constructor fails. It opens a connection of its own on the database,
** which it keeps in a long-lived read transaction and closes when it is
** disposed. ydbview_gtk_list_model_new_borrowed() borrows both (for
** bindings whose mappings object frees itself: Python's ydbview.gtk).
** The model drives the mappings (updates them, moves them along with each
** changeset): do not use them elsewhere while the model lives.
**
** THREADS.  A model belongs to the thread that made it, like any GTK object:
** it follows commits through the connection's wakeup descriptor
** (ydb_connection_wakeup_fd) with a GSource attached to the thread-default
** main context of the thread that made it -- no thread of its own. Writers
** may commit from any thread or process connection; the model catches up on
** its own thread when that context runs. ydbview_gtk_list_model_catch_up()
** catches up at once (tests, programs without a main loop).
**
** ITEMS.  Items (YdbviewGtkItem) are made when asked for (get_item) and kept
** while their row is shown and unchanged; an item is immutable: a changed
** row gets a new item at its reload step (items-changed(p, 1, 1)). Nothing
** is read per row of the table when a commit is applied: each step costs
** O(log n) in the model (plus the number of sections).
*/
#ifndef YDBVIEW_GTK_H
#define YDBVIEW_GTK_H

#include <gio/gio.h>

#include "ydbview.h"

G_BEGIN_DECLS

/**
 * YDBVIEW_GTK_VERSION:
 *
 * The version of ydbview-gtk these headers belong to (the project's).
 */
#define YDBVIEW_GTK_VERSION "0.2.0"

/**
 * YdbviewGtkError:
 * @YDBVIEW_GTK_ERROR_FAILED: YDB_ERROR: any other failure
 * @YDBVIEW_GTK_ERROR_MISUSE: YDB_MISUSE: a NULL or stale handle, a call made
 *   while the model is announcing a catch-up
 * @YDBVIEW_GTK_ERROR_INVALID_ARGUMENT: YDB_INVALID_ARGUMENT
 * @YDBVIEW_GTK_ERROR_NOT_FOUND: YDB_NOTFOUND: e.g. the mappings' view is not
 *   registered
 * @YDBVIEW_GTK_ERROR_CLOSED: YDB_CLOSED: the database or the model was closed
 * @YDBVIEW_GTK_ERROR_BUSY: YDB_BUSY
 * @YDBVIEW_GTK_ERROR_SQLITE: YDB_SQLITE
 * @YDBVIEW_GTK_ERROR_CALLBACK_FAILED: YDB_CALLBACK_FAILED
 * @YDBVIEW_GTK_ERROR_MISMATCH: YDB_MISMATCH
 * @YDBVIEW_GTK_ERROR_CORRUPT: YDB_CORRUPT
 * @YDBVIEW_GTK_ERROR_TOO_BIG: YDB_TOOBIG
 * @YDBVIEW_GTK_ERROR_RELOAD: YDB_RELOAD
 * @YDBVIEW_GTK_ERROR_CANT_OPEN: YDB_CANTOPEN
 * @YDBVIEW_GTK_ERROR_CANCELLED: YDB_CANCELLED
 *
 * The codes of errors in the %YDBVIEW_GTK_ERROR domain: the library's
 * status codes (ydbview.h), with the library's message.
 */
typedef enum {
    YDBVIEW_GTK_ERROR_FAILED = 1,
    YDBVIEW_GTK_ERROR_MISUSE = 2,
    YDBVIEW_GTK_ERROR_INVALID_ARGUMENT = 3,
    YDBVIEW_GTK_ERROR_NOT_FOUND = 4,
    YDBVIEW_GTK_ERROR_CLOSED = 5,
    YDBVIEW_GTK_ERROR_BUSY = 6,
    YDBVIEW_GTK_ERROR_SQLITE = 7,
    YDBVIEW_GTK_ERROR_CALLBACK_FAILED = 8,
    YDBVIEW_GTK_ERROR_MISMATCH = 9,
    YDBVIEW_GTK_ERROR_CORRUPT = 10,
    YDBVIEW_GTK_ERROR_TOO_BIG = 11,
    YDBVIEW_GTK_ERROR_RELOAD = 12,
    YDBVIEW_GTK_ERROR_CANT_OPEN = 13,
    YDBVIEW_GTK_ERROR_CANCELLED = 14
} YdbviewGtkError;

#define YDBVIEW_GTK_ERROR (ydbview_gtk_error_quark())
GQuark ydbview_gtk_error_quark(void);

/* ---- YdbviewGtkItem: one row ---- */

#define YDBVIEW_GTK_TYPE_ITEM (ydbview_gtk_item_get_type())
G_DECLARE_FINAL_TYPE(YdbviewGtkItem, ydbview_gtk_item, YDBVIEW_GTK, ITEM, GObject)

const char *ydbview_gtk_item_get_collection(YdbviewGtkItem *item);
const char *ydbview_gtk_item_get_key(YdbviewGtkItem *item);
GBytes *ydbview_gtk_item_get_object(YdbviewGtkItem *item);
GBytes *ydbview_gtk_item_get_metadata(YdbviewGtkItem *item);
const char *ydbview_gtk_item_get_group(YdbviewGtkItem *item);
char *ydbview_gtk_item_dup_text(YdbviewGtkItem *item);

/* ---- YdbviewGtkSection: one section, a GListModel of its rows ---- */

#define YDBVIEW_GTK_TYPE_SECTION (ydbview_gtk_section_get_type())
G_DECLARE_FINAL_TYPE(YdbviewGtkSection, ydbview_gtk_section, YDBVIEW_GTK, SECTION, GObject)

const char *ydbview_gtk_section_get_group(YdbviewGtkSection *section);

/* ---- YdbviewGtkListModel ---- */

#define YDBVIEW_GTK_TYPE_LIST_MODEL (ydbview_gtk_list_model_get_type())
G_DECLARE_FINAL_TYPE(YdbviewGtkListModel, ydbview_gtk_list_model, YDBVIEW_GTK, LIST_MODEL, GObject)

/* ---- YdbviewGtkSectionsModel: the sections, a GListModel of YdbviewGtkSection ---- */

#define YDBVIEW_GTK_TYPE_SECTIONS_MODEL (ydbview_gtk_sections_model_get_type())
G_DECLARE_FINAL_TYPE(YdbviewGtkSectionsModel, ydbview_gtk_sections_model, YDBVIEW_GTK, SECTIONS_MODEL, GObject)

YdbviewGtkListModel *ydbview_gtk_sections_model_get_model(YdbviewGtkSectionsModel *sections);

YdbviewGtkListModel *ydbview_gtk_list_model_new(ydb_database *database, ydb_mappings *mappings,
                                                GError **error);
YdbviewGtkListModel *ydbview_gtk_list_model_new_borrowed(gpointer database, gpointer mappings,
                                                         GError **error);

gboolean ydbview_gtk_list_model_catch_up(YdbviewGtkListModel *model, GError **error);
void ydbview_gtk_list_model_close(YdbviewGtkListModel *model);

void ydbview_gtk_list_model_set_following(YdbviewGtkListModel *model, gboolean following);
gboolean ydbview_gtk_list_model_get_following(YdbviewGtkListModel *model);

YdbviewGtkSectionsModel *ydbview_gtk_list_model_get_sections(YdbviewGtkListModel *model);
guint ydbview_gtk_list_model_get_n_sections(YdbviewGtkListModel *model);
YdbviewGtkSection *ydbview_gtk_list_model_get_section(YdbviewGtkListModel *model, guint section);
gboolean ydbview_gtk_list_model_get_section_range(YdbviewGtkListModel *model, guint section,
                                                  guint *out_start, guint *out_end);
guint ydbview_gtk_list_model_section_at(YdbviewGtkListModel *model, guint position);

guint64 ydbview_gtk_list_model_get_snapshot(YdbviewGtkListModel *model);
ydb_mappings *ydbview_gtk_list_model_get_mappings(YdbviewGtkListModel *model);

G_END_DECLS

#endif /* YDBVIEW_GTK_H */
