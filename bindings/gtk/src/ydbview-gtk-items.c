/*
** ydbview-gtk-items.c -- the objects a YdbviewGtkListModel hands out: its
** items (one row each), its sections (each a GListModel of its rows), the
** model of its sections, and the model's accessors for its sections.
*/
#include "ydbview-gtk-private.h"

/**
 * ydbview_gtk_error_quark:
 *
 * The error domain of the errors this library reports: their codes are
 * #YdbviewGtkError values, the library's status codes.
 *
 * Returns: the #YDBVIEW_GTK_ERROR domain
 */
G_DEFINE_QUARK(ydbview-gtk-error-quark, ydbview_gtk_error)

void _ydbview_gtk_set_error(GError **error, int status, const char *what) {
    int code = status >= YDBVIEW_GTK_ERROR_FAILED && status <= YDBVIEW_GTK_ERROR_CANCELLED
                   ? status
                   : YDBVIEW_GTK_ERROR_FAILED;
    g_set_error(error, YDBVIEW_GTK_ERROR, code, "%s: %s", what, ydb_errmsg());
}

/* ===========================================================================
** YdbviewGtkItem
** ======================================================================== */

/**
 * YdbviewGtkItem:
 *
 * One row of a #YdbviewGtkListModel: its collection and key, its object
 * and metadata as bytes, and its section's group. Immutable: when the
 * row changes, the model announces a new item in its place.
 */
struct _YdbviewGtkItem {
    GObject parent_instance;
    char *collection;
    char *key;
    GBytes *object;
    GBytes *metadata;
    char *group;
};

enum { ITEM_PROP_0, ITEM_PROP_COLLECTION, ITEM_PROP_KEY, ITEM_PROP_OBJECT, ITEM_PROP_METADATA,
       ITEM_PROP_GROUP, ITEM_PROP_TEXT, ITEM_N_PROPS };
static GParamSpec *item_props[ITEM_N_PROPS];

G_DEFINE_FINAL_TYPE(YdbviewGtkItem, ydbview_gtk_item, G_TYPE_OBJECT)

static void ydbview_gtk_item_finalize(GObject *object) {
    YdbviewGtkItem *self = YDBVIEW_GTK_ITEM(object);
    g_free(self->collection);
    g_free(self->key);
    g_clear_pointer(&self->object, g_bytes_unref);
    g_clear_pointer(&self->metadata, g_bytes_unref);
    g_free(self->group);
    G_OBJECT_CLASS(ydbview_gtk_item_parent_class)->finalize(object);
}

static void ydbview_gtk_item_get_property(GObject *object, guint id, GValue *value, GParamSpec *spec) {
    YdbviewGtkItem *self = YDBVIEW_GTK_ITEM(object);
    switch (id) {
    case ITEM_PROP_COLLECTION: g_value_set_string(value, self->collection); break;
    case ITEM_PROP_KEY: g_value_set_string(value, self->key); break;
    case ITEM_PROP_OBJECT: g_value_set_boxed(value, self->object); break;
    case ITEM_PROP_METADATA: g_value_set_boxed(value, self->metadata); break;
    case ITEM_PROP_GROUP: g_value_set_string(value, self->group); break;
    case ITEM_PROP_TEXT: g_value_take_string(value, ydbview_gtk_item_dup_text(self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
    }
}

static void ydbview_gtk_item_class_init(YdbviewGtkItemClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
    object_class->finalize = ydbview_gtk_item_finalize;
    object_class->get_property = ydbview_gtk_item_get_property;
    /**
     * YdbviewGtkItem:collection:
     *
     * The row's collection.
     */
    item_props[ITEM_PROP_COLLECTION] = g_param_spec_string("collection", NULL, NULL, NULL, flags);
    /**
     * YdbviewGtkItem:key:
     *
     * The row's key.
     */
    item_props[ITEM_PROP_KEY] = g_param_spec_string("key", NULL, NULL, NULL, flags);
    /**
     * YdbviewGtkItem:object:
     *
     * The row's object, or %NULL when it could not be read (the model was
     * closed, or its snapshot was released: a reload follows).
     */
    item_props[ITEM_PROP_OBJECT] = g_param_spec_boxed("object", NULL, NULL, G_TYPE_BYTES, flags);
    /**
     * YdbviewGtkItem:metadata:
     *
     * The row's metadata, or %NULL when it has none.
     */
    item_props[ITEM_PROP_METADATA] = g_param_spec_boxed("metadata", NULL, NULL, G_TYPE_BYTES, flags);
    /**
     * YdbviewGtkItem:group:
     *
     * The group of the section showing the row: the row's view group, or
     * the consolidated group's name while the mappings consolidate groups.
     */
    item_props[ITEM_PROP_GROUP] = g_param_spec_string("group", NULL, NULL, NULL, flags);
    /**
     * YdbviewGtkItem:text:
     *
     * The object as text when it is valid UTF-8 (for GtkExpression-based
     * sorters and filters), else %NULL.
     */
    item_props[ITEM_PROP_TEXT] = g_param_spec_string("text", NULL, NULL, NULL, flags);
    g_object_class_install_properties(object_class, ITEM_N_PROPS, item_props);
}

static void ydbview_gtk_item_init(YdbviewGtkItem *self) { (void)self; }

/* Takes the bytes; copies the strings. */
YdbviewGtkItem *_ydbview_gtk_item_new(const char *collection, const char *key, GBytes *object,
                                      GBytes *metadata, const char *group) {
    YdbviewGtkItem *self = g_object_new(YDBVIEW_GTK_TYPE_ITEM, NULL);
    self->collection = g_strdup(collection);
    self->key = g_strdup(key);
    self->object = object;
    self->metadata = metadata;
    self->group = g_strdup(group);
    return self;
}

/**
 * ydbview_gtk_item_get_collection:
 * @item: an item
 *
 * The collection of the row this item shows.
 *
 * Returns: (transfer none): the row's collection
 */
const char *ydbview_gtk_item_get_collection(YdbviewGtkItem *item) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_ITEM(item), NULL);
    return item->collection;
}

/**
 * ydbview_gtk_item_get_key:
 * @item: an item
 *
 * The key of the row this item shows.
 *
 * Returns: (transfer none): the row's key
 */
const char *ydbview_gtk_item_get_key(YdbviewGtkItem *item) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_ITEM(item), NULL);
    return item->key;
}

/**
 * ydbview_gtk_item_get_object:
 * @item: an item
 *
 * The row's object, as bytes.
 *
 * Returns: (transfer none) (nullable): the row's object as the model was
 *   told of it, or %NULL when it could not be read
 */
GBytes *ydbview_gtk_item_get_object(YdbviewGtkItem *item) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_ITEM(item), NULL);
    return item->object;
}

/**
 * ydbview_gtk_item_get_metadata:
 * @item: an item
 *
 * The row's metadata, as bytes.
 *
 * Returns: (transfer none) (nullable): the row's metadata, %NULL when it
 *   has none
 */
GBytes *ydbview_gtk_item_get_metadata(YdbviewGtkItem *item) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_ITEM(item), NULL);
    return item->metadata;
}

/**
 * ydbview_gtk_item_get_group:
 * @item: an item
 *
 * The view group of the section that shows the row.
 *
 * Returns: (transfer none) (nullable): the group of the section showing the
 *   row (the consolidated name while groups are consolidated)
 */
const char *ydbview_gtk_item_get_group(YdbviewGtkItem *item) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_ITEM(item), NULL);
    return item->group;
}

/**
 * ydbview_gtk_item_dup_text:
 * @item: an item
 *
 * The row's object as text, for labels.
 *
 * Returns: (transfer full) (nullable): the object as a string when it is
 *   valid UTF-8, else %NULL
 */
char *ydbview_gtk_item_dup_text(YdbviewGtkItem *item) {
    gsize size = 0;
    const char *data;
    g_return_val_if_fail(YDBVIEW_GTK_IS_ITEM(item), NULL);
    if (item->object == NULL) return NULL;
    data = g_bytes_get_data(item->object, &size);
    if (data == NULL) return g_strdup("");
    if (!g_utf8_validate(data, (gssize)size, NULL)) return NULL;
    return g_strndup(data, size);
}

/* ===========================================================================
** YdbviewGtkSection: a GListModel of one section's rows
** ======================================================================== */

/**
 * YdbviewGtkSection:
 *
 * One section of a #YdbviewGtkListModel: the group it shows, and its rows
 * as a #GListModel of #YdbviewGtkItem (a child model for
 * #GtkTreeListModel). It emits items-changed for its own rows as the
 * model catches up; once the section is gone from its model it is empty.
 */
static void ydbview_gtk_section_list_model_init(GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(YdbviewGtkSection, ydbview_gtk_section, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, ydbview_gtk_section_list_model_init))

enum { SECTION_PROP_0, SECTION_PROP_GROUP, SECTION_N_PROPS };
static GParamSpec *section_props[SECTION_N_PROPS];

static GType section_get_item_type(GListModel *list) {
    (void)list;
    return YDBVIEW_GTK_TYPE_ITEM;
}

static guint section_get_n_items(GListModel *list) {
    return YDBVIEW_GTK_SECTION(list)->n_rows;
}

static gpointer section_get_item(GListModel *list, guint position) {
    YdbviewGtkSection *self = YDBVIEW_GTK_SECTION(list);
    gint index;
    if (self->model == NULL || position >= self->n_rows) return NULL;
    index = _ydbview_gtk_list_model_index_of_section(self->model, self);
    if (index < 0) return NULL;
    return _ydbview_gtk_list_model_item_at(self->model,
                                           _ydbview_gtk_list_model_section_offset(self->model, (guint)index) +
                                               position);
}

static void ydbview_gtk_section_list_model_init(GListModelInterface *iface) {
    iface->get_item_type = section_get_item_type;
    iface->get_n_items = section_get_n_items;
    iface->get_item = section_get_item;
}

static void ydbview_gtk_section_finalize(GObject *object) {
    g_free(YDBVIEW_GTK_SECTION(object)->group);
    G_OBJECT_CLASS(ydbview_gtk_section_parent_class)->finalize(object);
}

static void ydbview_gtk_section_get_property(GObject *object, guint id, GValue *value, GParamSpec *spec) {
    if (id == SECTION_PROP_GROUP)
        g_value_set_string(value, YDBVIEW_GTK_SECTION(object)->group);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
}

static void ydbview_gtk_section_class_init(YdbviewGtkSectionClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->finalize = ydbview_gtk_section_finalize;
    object_class->get_property = ydbview_gtk_section_get_property;
    /**
     * YdbviewGtkSection:group:
     *
     * The group the section shows (the consolidated group's name while the
     * mappings consolidate their groups).
     */
    section_props[SECTION_PROP_GROUP] =
        g_param_spec_string("group", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, SECTION_N_PROPS, section_props);
}

static void ydbview_gtk_section_init(YdbviewGtkSection *self) { (void)self; }

YdbviewGtkSection *_ydbview_gtk_section_new(YdbviewGtkListModel *model, const char *group) {
    YdbviewGtkSection *self = g_object_new(YDBVIEW_GTK_TYPE_SECTION, NULL);
    self->model = model;
    self->group = g_strdup(group != NULL ? group : "");
    return self;
}

void _ydbview_gtk_section_detach(YdbviewGtkSection *section) {
    section->model = NULL;
    section->n_rows = 0;
}

/**
 * ydbview_gtk_section_get_group:
 * @section: a section
 *
 * The view group this section shows.
 *
 * Returns: (transfer none): the group the section shows
 */
const char *ydbview_gtk_section_get_group(YdbviewGtkSection *section) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_SECTION(section), NULL);
    return section->group;
}

/* ===========================================================================
** YdbviewGtkSectionsModel: a GListModel of the sections
** ======================================================================== */

/**
 * YdbviewGtkSectionsModel:
 *
 * The sections of a #YdbviewGtkListModel as a #GListModel of
 * #YdbviewGtkSection, in order. Give it to a #GtkTreeListModel whose
 * create function returns the section itself (a #GListModel of its rows)
 * for a section and %NULL for a row. It keeps its list model alive.
 */
static void ydbview_gtk_sections_model_list_model_init(GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(YdbviewGtkSectionsModel, ydbview_gtk_sections_model, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, ydbview_gtk_sections_model_list_model_init))

static GType sections_get_item_type(GListModel *list) {
    (void)list;
    return YDBVIEW_GTK_TYPE_SECTION;
}

static guint sections_get_n_items(GListModel *list) {
    return _ydbview_gtk_list_model_count_sections(YDBVIEW_GTK_SECTIONS_MODEL(list)->model);
}

static gpointer sections_get_item(GListModel *list, guint position) {
    return _ydbview_gtk_list_model_section_item(YDBVIEW_GTK_SECTIONS_MODEL(list)->model, position);
}

static void ydbview_gtk_sections_model_list_model_init(GListModelInterface *iface) {
    iface->get_item_type = sections_get_item_type;
    iface->get_n_items = sections_get_n_items;
    iface->get_item = sections_get_item;
}

static void ydbview_gtk_sections_model_dispose(GObject *object) {
    YdbviewGtkSectionsModel *self = YDBVIEW_GTK_SECTIONS_MODEL(object);
    if (self->model != NULL) {
        _ydbview_gtk_list_model_forget_sections_model(self->model);
        g_clear_object(&self->model);
    }
    G_OBJECT_CLASS(ydbview_gtk_sections_model_parent_class)->dispose(object);
}

static void ydbview_gtk_sections_model_class_init(YdbviewGtkSectionsModelClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = ydbview_gtk_sections_model_dispose;
}

static void ydbview_gtk_sections_model_init(YdbviewGtkSectionsModel *self) { (void)self; }

YdbviewGtkSectionsModel *_ydbview_gtk_sections_model_new(YdbviewGtkListModel *model) {
    YdbviewGtkSectionsModel *self = g_object_new(YDBVIEW_GTK_TYPE_SECTIONS_MODEL, NULL);
    self->model = g_object_ref(model);
    return self;
}

/**
 * ydbview_gtk_sections_model_get_model:
 * @sections: the sections model
 *
 * The flat list model these sections belong to.
 *
 * Returns: (transfer none): the list model whose sections these are
 */
YdbviewGtkListModel *ydbview_gtk_sections_model_get_model(YdbviewGtkSectionsModel *sections) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_SECTIONS_MODEL(sections), NULL);
    return sections->model;
}

/* ---- The list model's sections, by index and position ---- */

/**
 * ydbview_gtk_list_model_get_n_sections:
 * @model: a model
 *
 * The number of sections the model shows.
 *
 * Returns: how many sections the model shows (empty ones included)
 */
guint ydbview_gtk_list_model_get_n_sections(YdbviewGtkListModel *model) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), 0);
    return model->sections->len;
}

/**
 * ydbview_gtk_list_model_get_section:
 * @model: a model
 * @section: a section index
 *
 * One section of the model, as a list model of its rows.
 *
 * Returns: (transfer full) (nullable): the section, or %NULL past the last
 */
YdbviewGtkSection *ydbview_gtk_list_model_get_section(YdbviewGtkListModel *model, guint section) {
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), NULL);
    return _ydbview_gtk_list_model_section_item(model, section);
}

/**
 * ydbview_gtk_list_model_get_section_range:
 * @model: a model
 * @section: a section index
 * @out_start: (out) (optional): the position of the section's first row
 * @out_end: (out) (optional): the position after its last row
 *
 * Where a section's rows are in the flat list.
 *
 * Returns: %FALSE (and 0, 0) when there is no such section
 */
gboolean ydbview_gtk_list_model_get_section_range(YdbviewGtkListModel *model, guint section, guint *out_start,
                                                  guint *out_end) {
    guint start = 0, end = 0;
    gboolean found = FALSE;
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), FALSE);
    if (section < model->sections->len) {
        start = _ydbview_gtk_list_model_section_offset(model, section);
        end = start + ((YdbviewGtkSection *)g_ptr_array_index(model->sections, section))->n_rows;
        found = TRUE;
    }
    if (out_start != NULL) *out_start = start;
    if (out_end != NULL) *out_end = end;
    return found;
}

/**
 * ydbview_gtk_list_model_section_at:
 * @model: a model
 * @position: a position in the list
 *
 * Which section shows the row at a position of the flat list.
 *
 * Returns: the index of the section showing the row at @position, or
 *   G_MAXUINT past the last row
 */
guint ydbview_gtk_list_model_section_at(YdbviewGtkListModel *model, guint position) {
    guint offset = 0;
    g_return_val_if_fail(YDBVIEW_GTK_IS_LIST_MODEL(model), G_MAXUINT);
    for (guint s = 0; s < model->sections->len; s++) {
        offset += ((YdbviewGtkSection *)g_ptr_array_index(model->sections, s))->n_rows;
        if (position < offset) return s;
    }
    return G_MAXUINT;
}
