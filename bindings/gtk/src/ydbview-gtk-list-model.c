/*
** ydbview-gtk-list-model.c -- YdbviewGtkListModel: the rows of a mappings
** as one GListModel that follows commits on the main loop.
**
** The model keeps a shadow of the table it has announced: every shown row
** as (collection, key) in one GSequence (a balanced tree: finding, inserting
** and removing by position cost O(log n)), and each section's row count.
** Between two items-changed signals the shadow is exactly the list the
** consumers were told of, which is what GtkListView, GtkSortListModel and
** GtkFilterListModel read back inside their handlers. A catch-up applies
** the changeset's edit script step by step to the shadow, one signal each,
** so its cost follows the change, not the table.
*/
#include <glib-unix.h>

#include "ydbview-gtk-private.h"

/* GtkSectionModel exists from GTK 4.12; the build defines
** YDBVIEW_GTK_SECTION_MODEL (and links GTK) when the GTK found has it. */
#define WITH_SECTION_MODEL 0
#if defined(YDBVIEW_GTK_SECTION_MODEL)
#include <gtk/gtk.h>
#if GTK_CHECK_VERSION(4, 12, 0)
#undef WITH_SECTION_MODEL
#define WITH_SECTION_MODEL 1
#endif
#endif


enum { PROP_0, PROP_FOLLOWING, PROP_SNAPSHOT, N_PROPS };
static GParamSpec *props[N_PROPS];
enum { SIGNAL_CAUGHT_UP, N_SIGNALS };
static guint signals[N_SIGNALS];

static void list_model_init(GListModelInterface *iface);
#if WITH_SECTION_MODEL
static void section_model_init(GtkSectionModelInterface *iface);
#endif

/**
 * YdbviewGtkListModel:
 *
 * The rows a ydbview mappings shows, as one #GListModel of #YdbviewGtkItem
 * that follows commits on its main context: each changeset arrives as one
 * #GListModel::items-changed per edit step (a move as a removal and an
 * insertion), and a connection that fell too far behind as one signal
 * replacing every row. ydbview_gtk_list_model_get_sections() gives the
 * sections as child models.
 */
G_DEFINE_FINAL_TYPE_WITH_CODE(YdbviewGtkListModel, ydbview_gtk_list_model, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, list_model_init)
#if WITH_SECTION_MODEL
                              G_IMPLEMENT_INTERFACE(GTK_TYPE_SECTION_MODEL, section_model_init)
#endif
)

/* ---- the shadow ---- */

YdbviewGtkRow *_ydbview_gtk_row_new(const char *collection, const char *key) {
    YdbviewGtkRow *row = g_new0(YdbviewGtkRow, 1);
    row->collection = g_intern_string(collection);
    row->key = g_strdup(key);
    return row;
}

void _ydbview_gtk_row_free(gpointer data) {
    YdbviewGtkRow *row = data;
    if (row == NULL) return;
    g_clear_object(&row->item);
    g_free(row->key);
    g_free(row);
}

/* The sequence has no destroy function, so that a moved row can be taken
** out and put back: its rows are freed here. */
static void free_each_row(gpointer row, gpointer unused) {
    (void)unused;
    _ydbview_gtk_row_free(row);
}

void _ydbview_gtk_free_rows(GSequence *rows) {
    g_sequence_foreach(rows, free_each_row, NULL);
    g_sequence_free(rows);
}

guint _ydbview_gtk_list_model_section_offset(YdbviewGtkListModel *self, guint section) {
    guint offset = 0;
    for (guint s = 0; s < section && s < self->sections->len; s++)
        offset += ((YdbviewGtkSection *)g_ptr_array_index(self->sections, s))->n_rows;
    return offset;
}

gint _ydbview_gtk_list_model_index_of_section(YdbviewGtkListModel *self, YdbviewGtkSection *section) {
    guint index;
    return g_ptr_array_find(self->sections, section, &index) ? (gint)index : -1;
}

guint _ydbview_gtk_list_model_count_sections(YdbviewGtkListModel *self) {
    return self->sections->len;
}

gpointer _ydbview_gtk_list_model_section_item(YdbviewGtkListModel *self, guint section) {
    return section < self->sections->len ? g_object_ref(g_ptr_array_index(self->sections, section)) : NULL;
}

void _ydbview_gtk_list_model_forget_sections_model(YdbviewGtkListModel *self) {
    self->sections_model = NULL;
}

void _ydbview_gtk_detach_sections(GPtrArray *sections) {
    for (guint s = 0; s < sections->len; s++) _ydbview_gtk_section_detach(g_ptr_array_index(sections, s));
}

/* ---- the read transaction items are read in ---- */

void _ydbview_gtk_list_model_end_txn(YdbviewGtkListModel *self) {
    if (self->txn_release != 0) {
        GSource *source = g_main_context_find_source_by_id(self->context, self->txn_release);
        if (source != NULL) g_source_destroy(source);
        self->txn_release = 0;
    }
    if (self->txn != NULL) {
        ydb_txn_end(self->txn);
        self->txn = NULL;
    }
}

static gboolean release_txn(gpointer data) {
    YdbviewGtkListModel *self = data;
    self->txn_release = 0;
    _ydbview_gtk_list_model_end_txn(self);
    return G_SOURCE_REMOVE;
}

/* Items are asked for in bursts (a view laying out a screenful, a sort
** model reading every row): one transaction serves a burst and ends when
** the main loop goes idle, after the frame is drawn. */
void _ydbview_gtk_list_model_keep_txn(YdbviewGtkListModel *self, ydb_txn *txn) {
    GSource *source;
    self->txn = txn;
    if (self->txn_release != 0) return;
    source = g_idle_source_new();
    g_source_set_callback(source, release_txn, self, NULL);
    g_source_set_name(source, "ydbview-gtk: end read transaction");
    self->txn_release = g_source_attach(source, self->context);
    g_source_unref(source);
}

static ydb_txn *current_txn(YdbviewGtkListModel *self) {
    ydb_txn *txn = NULL;
    if (self->txn != NULL) return self->txn;
    if (self->connection == NULL || ydb_txn_begin_read(self->connection, &txn) != YDB_OK) return NULL;
    _ydbview_gtk_list_model_keep_txn(self, txn);
    return txn;
}

/* ---- items ---- */

static GBytes *take_bytes(void *data, size_t size) {
    return data == NULL ? NULL : g_bytes_new_with_free_func(data, size, ydb_free, data);
}

/* The row's item, made from the model's snapshot the first time it is
** asked for and kept while the row is shown and unchanged. Its group is the
** group of the section showing it (no lookup in the view: asking the view
** where a row stands costs as much again as reading it). When the row
** cannot be read (the model was closed, or fell so far behind that its
** snapshot was released: the catch-up that follows reloads everything), the
** item has only its keys and is not kept. */
static YdbviewGtkItem *item_of(YdbviewGtkListModel *self, YdbviewGtkRow *row, guint position) {
    ydb_txn *txn;
    void *object = NULL, *metadata = NULL;
    size_t object_size = 0, metadata_size = 0;
    guint section;
    const char *group;
    YdbviewGtkItem *item;
    if (row->item != NULL) return g_object_ref(row->item);
    section = ydbview_gtk_list_model_section_at(self, position);
    group = section < self->sections->len ? ((YdbviewGtkSection *)g_ptr_array_index(self->sections, section))->group
                                          : NULL;
    txn = current_txn(self);
    if (txn == NULL ||
        ydb_txn_get_row_hinted(txn, row->collection, row->key, row->rowid, &object, &object_size, &metadata,
                               &metadata_size) !=
            YDB_OK)
        return _ydbview_gtk_item_new(row->collection, row->key, NULL, NULL, group);
    item = _ydbview_gtk_item_new(row->collection, row->key, take_bytes(object, object_size),
                                 take_bytes(metadata, metadata_size), group);
    row->item = g_object_ref(item);
    return item;
}

gpointer _ydbview_gtk_list_model_item_at(YdbviewGtkListModel *self, guint position) {
    GSequenceIter *iter = g_sequence_get_iter_at_pos(self->rows, (gint)position);
    if (g_sequence_iter_is_end(iter)) return NULL;
    return item_of(self, g_sequence_get(iter), position);
}

static GType get_item_type(GListModel *list) {
    (void)list;
    return YDBVIEW_GTK_TYPE_ITEM;
}

static guint get_n_items(GListModel *list) {
    return (guint)g_sequence_get_length(YDBVIEW_GTK_LIST_MODEL(list)->rows);
}

static gpointer get_item(GListModel *list, guint position) {
    return _ydbview_gtk_list_model_item_at(YDBVIEW_GTK_LIST_MODEL(list), position);
}

static void list_model_init(GListModelInterface *iface) {
    iface->get_item_type = get_item_type;
    iface->get_n_items = get_n_items;
    iface->get_item = get_item;
}

#if WITH_SECTION_MODEL
static void get_section(GtkSectionModel *model, guint position, guint *out_start, guint *out_end) {
    YdbviewGtkListModel *self = YDBVIEW_GTK_LIST_MODEL(model);
    guint offset = 0;
    for (guint s = 0; s < self->sections->len; s++) {
        guint rows = ((YdbviewGtkSection *)g_ptr_array_index(self->sections, s))->n_rows;
        if (position < offset + rows) {
            *out_start = offset;
            *out_end = offset + rows;
            return;
        }
        offset += rows;
    }
    *out_start = offset;
    *out_end = G_MAXUINT;
}

static void section_model_init(GtkSectionModelInterface *iface) {
    iface->get_section = get_section;
}
#endif


void _ydbview_gtk_list_model_note_snapshot(YdbviewGtkListModel *self) {
    guint64 snapshot = 0;
    if (self->connection != NULL && ydb_connection_snapshot(self->connection, &snapshot) == YDB_OK &&
        snapshot != self->snapshot) {
        self->snapshot = snapshot;
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_SNAPSHOT]);
    }
}

/* ---- following commits ---- */

static gboolean on_wakeup(gint fd, GIOCondition condition, gpointer data) {
    YdbviewGtkListModel *self = data;
    GError *error = NULL;
    (void)fd;
    (void)condition;
    if (self->announcing) return G_SOURCE_CONTINUE; /* a nested main loop inside a handler */
    if (!ydbview_gtk_list_model_catch_up(self, &error)) {
        /* The descriptor stays readable while the model cannot catch up
        ** (its database was closed, say): stop rather than spin. */
        g_warning("ydbview-gtk: the model stops following commits: %s", error->message);
        g_error_free(error);
        g_source_unref(self->wakeup);
        self->wakeup = NULL;
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_FOLLOWING]);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static void stop_following(YdbviewGtkListModel *self) {
    if (self->wakeup == NULL) return;
    g_source_destroy(self->wakeup);
    g_clear_pointer(&self->wakeup, g_source_unref);
}

/**
 * ydbview_gtk_list_model_set_following:
 * @model: a model
 * @following: whether to follow commits
 *
 * Starts or stops following commits: while following (the default), the
 * model catches up on its main context whenever the connection's wakeup
 * descriptor becomes readable, that is after another connection commits.
 * Stopped, it changes only in ydbview_gtk_list_model_catch_up().
 */
void ydbview_gtk_list_model_set_following(YdbviewGtkListModel *model, gboolean following) {
    int fd = -1;
    g_return_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model));
    if (!following == (model->wakeup == NULL)) return;
    if (!following) {
        stop_following(model);
    } else {
        if (model->connection == NULL || ydb_connection_wakeup_fd(model->connection, &fd) != YDB_OK) {
            g_warning("ydbview-gtk: cannot follow commits: %s",
                      model->connection == NULL ? "the model is closed" : ydb_errmsg());
            return;
        }
        model->wakeup = g_unix_fd_source_new(fd, G_IO_IN);
        g_source_set_callback(model->wakeup, G_SOURCE_FUNC(on_wakeup), model, NULL);
        g_source_set_name(model->wakeup, "ydbview-gtk: commits");
        g_source_attach(model->wakeup, model->context);
    }
    g_object_notify_by_pspec(G_OBJECT(model), props[PROP_FOLLOWING]);
}

/**
 * ydbview_gtk_list_model_get_following:
 * @model: a model
 *
 * Whether the model follows commits by itself (see ydbview_gtk_list_model_set_following()).
 *
 * Returns: whether the model follows commits on its main context
 */
gboolean ydbview_gtk_list_model_get_following(YdbviewGtkListModel *model) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), FALSE);
    return model->wakeup != NULL;
}

/**
 * ydbview_gtk_list_model_catch_up:
 * @model: a model
 * @error: where a failure is reported
 *
 * Moves the model to the newest snapshot now and announces the changes:
 * one items-changed signal per step of the changeset's edit script (a move
 * as a removal, then an insertion), on the model, on the sections concerned
 * and on the sections model. When the connection fell more than the
 * database's max_commits_behind commits behind, the table is read anew and
 * announced as one items-changed replacing everything. Then
 * #YdbviewGtkListModel::caught-up is emitted, unless nothing changed.
 *
 * Calling it from inside one of the model's own signals fails
 * (%YDBVIEW_GTK_ERROR_MISUSE) and changes nothing.
 *
 * Returns: %TRUE on success (also when there was nothing to catch up with)
 */
gboolean ydbview_gtk_list_model_catch_up(YdbviewGtkListModel *model, GError **error) {
    int outcome;
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), FALSE);
    g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
    if (model->connection == NULL) {
        g_set_error_literal(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_CLOSED, "the model is closed");
        return FALSE;
    }
    if (model->announcing) {
        g_set_error_literal(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_MISUSE,
                            "the model is already catching up (called from one of its signals)");
        return FALSE;
    }
    g_object_ref(model); /* a handler may drop the last reference */
    model->announcing = TRUE;
    outcome = _ydbview_gtk_list_model_catch_up(model, error);
    model->announcing = FALSE;
    if (outcome > 0) g_signal_emit(model, signals[SIGNAL_CAUGHT_UP], 0, outcome == 2);
    g_object_unref(model);
    return outcome >= 0;
}

/**
 * ydbview_gtk_list_model_close:
 * @model: a model
 *
 * Stops following commits and closes the model's connection (the mappings
 * stay until the model is finalized). The model keeps the rows it shows:
 * items already made keep their values, new ones have only their keys.
 * Closing twice does nothing. Close models before their database.
 */
void ydbview_gtk_list_model_close(YdbviewGtkListModel *model) {
    g_return_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model));
    if (model->wakeup != NULL) {
        stop_following(model);
        g_object_notify_by_pspec(G_OBJECT(model), props[PROP_FOLLOWING]);
    }
    _ydbview_gtk_list_model_end_txn(model);
    if (model->connection != NULL) {
        ydb_connection_close(model->connection);
        model->connection = NULL;
    }
}

/* ---- construction ---- */

static YdbviewGtkListModel *model_new(ydb_database *database, ydb_mappings *mappings, gboolean owns,
                                      GError **error) {
    YdbviewGtkListModel *self;
    const char *view = NULL;
    int rc;
    if (database == NULL || mappings == NULL) {
        g_set_error_literal(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_MISUSE,
                            "a list model needs a database and mappings (got NULL)");
        if (owns) ydb_mappings_free(mappings);
        return NULL;
    }
    self = g_object_new(YDBVIEW_GTK_TYPE_LIST_MODEL, NULL);
    self->database = database;
    self->mappings = mappings;
    self->owns_mappings = owns;
    if ((rc = ydb_mappings_view(mappings, &view)) != YDB_OK) {
        _ydbview_gtk_set_error(error, rc, "reading the mappings");
    } else if ((rc = ydb_connection_open(database, &self->connection)) != YDB_OK) {
        _ydbview_gtk_set_error(error, rc, "opening the model's connection");
    } else {
        self->view = g_strdup(view);
        if (_ydbview_gtk_list_model_reload(self, FALSE, error)) {
            ydbview_gtk_list_model_set_following(self, TRUE);
            return self;
        }
    }
    g_object_unref(self);
    return NULL;
}

/**
 * ydbview_gtk_list_model_new: (skip)
 * @database: an open database: borrowed, it must outlive the model
 * @mappings: (transfer full): mappings over a view registered on @database;
 *   the model frees them (also when it fails)
 * @error: where a failure is reported
 *
 * Makes a model of the rows @mappings show: it opens a connection of its
 * own on @database, moves it to the newest snapshot, updates @mappings
 * there and reads the table. It follows commits on the thread-default main
 * context of the calling thread (see ydbview_gtk_list_model_set_following()).
 *
 * Returns: (transfer full) (nullable): the model, or %NULL with @error set
 *   (e.g. %YDBVIEW_GTK_ERROR_NOT_FOUND when the view is not registered)
 */
YdbviewGtkListModel *ydbview_gtk_list_model_new(ydb_database *database, ydb_mappings *mappings,
                                                GError **error) {
    return model_new(database, mappings, TRUE, error);
}

/**
 * ydbview_gtk_list_model_new_borrowed: (constructor)
 * @database: (nullable): a `ydb_database *` as an address: borrowed, it must
 *   outlive the model
 * @mappings: (nullable): a `ydb_mappings *` as an address: borrowed, it must
 *   outlive the model, which drives it (do not use it elsewhere meanwhile)
 * @error: where a failure is reported
 *
 * ydbview_gtk_list_model_new() for language bindings, whose own objects
 * own the database and the mappings: Python's `ydbview.gtk.list_model()`
 * passes their handles and keeps them alive as long as the model.
 *
 * Returns: (transfer full) (nullable): the model, or %NULL with @error set
 */
YdbviewGtkListModel *ydbview_gtk_list_model_new_borrowed(gpointer database, gpointer mappings, GError **error) {
    return model_new(database, mappings, FALSE, error);
}

/* ---- sections and other getters ---- */

/**
 * ydbview_gtk_list_model_get_sections:
 * @model: a model
 *
 * The model's sections, as a #GListModel of #YdbviewGtkSection (each a
 * #GListModel of its rows). Every call returns the same object while it
 * lives; it keeps the model alive.
 *
 * Returns: (transfer full): the sections model
 */
YdbviewGtkSectionsModel *ydbview_gtk_list_model_get_sections(YdbviewGtkListModel *model) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), NULL);
    if (model->sections_model != NULL) return g_object_ref(model->sections_model);
    model->sections_model = _ydbview_gtk_sections_model_new(model);
    return model->sections_model;
}

/**
 * ydbview_gtk_list_model_get_snapshot:
 * @model: a model
 *
 * The database snapshot the model shows: the last commit it has announced.
 *
 * Returns: the snapshot the model shows
 */
guint64 ydbview_gtk_list_model_get_snapshot(YdbviewGtkListModel *model) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), 0);
    return model->snapshot;
}

/**
 * ydbview_gtk_list_model_get_mappings: (skip)
 * @model: a model
 *
 * The mappings the model drives, at the model's snapshot: read them (their
 * getters agree with the model after each catch-up), do not move them.
 *
 * Returns: (transfer none): the mappings
 */
ydb_mappings *ydbview_gtk_list_model_get_mappings(YdbviewGtkListModel *model) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), NULL);
    return model->mappings;
}

/* ---- GObject ---- */

static void ydbview_gtk_list_model_dispose(GObject *object) {
    YdbviewGtkListModel *self = YDBVIEW_GTK_LIST_MODEL(object);
    ydbview_gtk_list_model_close(self);
    G_OBJECT_CLASS(ydbview_gtk_list_model_parent_class)->dispose(object);
}

static void ydbview_gtk_list_model_finalize(GObject *object) {
    YdbviewGtkListModel *self = YDBVIEW_GTK_LIST_MODEL(object);
    _ydbview_gtk_detach_sections(self->sections);
    g_ptr_array_unref(self->sections);
    _ydbview_gtk_free_rows(self->rows);
    if (self->owns_mappings) ydb_mappings_free(self->mappings);
    g_free(self->view);
    g_main_context_unref(self->context);
    G_OBJECT_CLASS(ydbview_gtk_list_model_parent_class)->finalize(object);
}

static void ydbview_gtk_list_model_get_property(GObject *object, guint id, GValue *value, GParamSpec *spec) {
    YdbviewGtkListModel *self = YDBVIEW_GTK_LIST_MODEL(object);
    switch (id) {
    case PROP_FOLLOWING: g_value_set_boolean(value, self->wakeup != NULL); break;
    case PROP_SNAPSHOT: g_value_set_uint64(value, self->snapshot); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
    }
}

static void ydbview_gtk_list_model_set_property(GObject *object, guint id, const GValue *value,
                                                GParamSpec *spec) {
    if (id == PROP_FOLLOWING)
        ydbview_gtk_list_model_set_following(YDBVIEW_GTK_LIST_MODEL(object), g_value_get_boolean(value));
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
}

static void ydbview_gtk_list_model_class_init(YdbviewGtkListModelClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->dispose = ydbview_gtk_list_model_dispose;
    object_class->finalize = ydbview_gtk_list_model_finalize;
    object_class->get_property = ydbview_gtk_list_model_get_property;
    object_class->set_property = ydbview_gtk_list_model_set_property;
    /**
     * YdbviewGtkListModel:following:
     *
     * Whether the model follows commits on its main context.
     */
    props[PROP_FOLLOWING] = g_param_spec_boolean("following", NULL, NULL, FALSE,
                                                 G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                     G_PARAM_STATIC_STRINGS);
    /**
     * YdbviewGtkListModel:snapshot:
     *
     * The snapshot the model shows.
     */
    props[PROP_SNAPSHOT] = g_param_spec_uint64("snapshot", NULL, NULL, 0, G_MAXUINT64, 0,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                   G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    /**
     * YdbviewGtkListModel::caught-up:
     * @model: the model
     * @reloaded: whether the table was read anew (one items-changed
     *   replacing everything) instead of following a changeset
     *
     * Emitted after a catch-up changed the model, once all its
     * items-changed signals were emitted.
     */
    signals[SIGNAL_CAUGHT_UP] = g_signal_new("caught-up", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                             NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
}

static void ydbview_gtk_list_model_init(YdbviewGtkListModel *self) {
    self->rows = g_sequence_new(NULL);
    self->sections = g_ptr_array_new_with_free_func(g_object_unref);
    self->context = g_main_context_ref_thread_default();
}
