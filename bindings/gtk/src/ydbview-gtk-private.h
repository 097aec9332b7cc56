/*
** ydbview-gtk-private.h -- what the list model and its item, section and
** sections classes share inside the library (not installed).
*/
#ifndef YDBVIEW_GTK_PRIVATE_H
#define YDBVIEW_GTK_PRIVATE_H

#include "ydbview-gtk.h"

G_BEGIN_DECLS

/* One shown row in the model's shadow of the table: which row it is, and
** its item once someone asked for it (dropped when the row changes). */
typedef struct {
    const char *collection; /* interned: a table has few collections */
    char *key;
    YdbviewGtkItem *item;   /* NULL until asked for */
    guint placed;           /* the catch-up that last inserted or moved it */
    gint64 rowid;           /* its id as the last step naming it gave it; 0: unknown.
                            ** Only a hint (ydb_txn_get_row_hinted): reads stay right if stale */
} YdbviewGtkRow;

struct _YdbviewGtkSection {
    GObject parent_instance;
    /* Not a reference: the model holds its sections, and clears this when
    ** the section leaves it (or the model goes), so a section kept by a
    ** view after that is an empty list rather than a dangling one. */
    YdbviewGtkListModel *model;
    char *group;
    guint n_rows;
};

struct _YdbviewGtkSectionsModel {
    GObject parent_instance;
    YdbviewGtkListModel *model; /* a reference: the sections keep the rows alive */
};

/* The model's state; the functions of list-model.c and catch-up.c work on it. */
struct _YdbviewGtkListModel {
    GObject parent_instance;
    ydb_database *database; /* borrowed */
    ydb_mappings *mappings;
    gboolean owns_mappings;
    ydb_connection *connection; /* the model's own, in a long-lived read */
    char *view;
    GSequence *rows;            /* YdbviewGtkRow*, every section's rows in order */
    GPtrArray *sections;        /* YdbviewGtkSection*, owned */
    YdbviewGtkSectionsModel *sections_model; /* weak: it holds us */
    ydb_txn *txn;               /* a read transaction kept for get_item */
    guint txn_release;          /* the idle source that ends it */
    GMainContext *context;      /* where the model follows commits */
    GSource *wakeup;
    gboolean announcing;        /* inside a catch-up's signals */
    guint catch_ups;            /* numbers the catch-ups, for YdbviewGtkRow.placed */
    guint64 snapshot;
};

/* items.c */
YdbviewGtkItem *_ydbview_gtk_item_new(const char *collection, const char *key, GBytes *object,
                                      GBytes *metadata, const char *group);
YdbviewGtkSection *_ydbview_gtk_section_new(YdbviewGtkListModel *model, const char *group);
void _ydbview_gtk_section_detach(YdbviewGtkSection *section);
YdbviewGtkSectionsModel *_ydbview_gtk_sections_model_new(YdbviewGtkListModel *model);

/* list-model.c: what a section asks its model */
gint _ydbview_gtk_list_model_index_of_section(YdbviewGtkListModel *model, YdbviewGtkSection *section);
guint _ydbview_gtk_list_model_section_offset(YdbviewGtkListModel *model, guint section);
gpointer _ydbview_gtk_list_model_item_at(YdbviewGtkListModel *model, guint position);
guint _ydbview_gtk_list_model_count_sections(YdbviewGtkListModel *model);
gpointer _ydbview_gtk_list_model_section_item(YdbviewGtkListModel *model, guint section);
void _ydbview_gtk_list_model_forget_sections_model(YdbviewGtkListModel *model);

/* list-model.c: the shadow's rows, the read transaction */
YdbviewGtkRow *_ydbview_gtk_row_new(const char *collection, const char *key);
void _ydbview_gtk_row_free(gpointer row);
void _ydbview_gtk_free_rows(GSequence *rows);
void _ydbview_gtk_detach_sections(GPtrArray *sections);
void _ydbview_gtk_list_model_end_txn(YdbviewGtkListModel *model);
void _ydbview_gtk_list_model_keep_txn(YdbviewGtkListModel *model, ydb_txn *txn);
void _ydbview_gtk_list_model_note_snapshot(YdbviewGtkListModel *model);

/* catch-up.c: 1 when a changeset was announced, 2 after a reload, 0 when
** there was nothing to do, -1 on failure (with *error set). */
int _ydbview_gtk_list_model_catch_up(YdbviewGtkListModel *model, GError **error);
gboolean _ydbview_gtk_list_model_reload(YdbviewGtkListModel *model, gboolean announce, GError **error);

/* Sets *error from a failed ydb_ call: the status as the code, the
** library's message after `what`. */
void _ydbview_gtk_set_error(GError **error, int status, const char *what);

G_END_DECLS

#endif
