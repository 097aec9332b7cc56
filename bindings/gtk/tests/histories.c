/*
** histories.c -- random histories and plain consumers for the ydbview-gtk
** tests (see histories.h).
*/
#include "histories.h"

#include <stdio.h>
#include <string.h>

static const char *const collections[HISTORY_COLLECTIONS] = {"c1", "c2"};
static const char *const view_groups[] = {"a", "b", "c", "d", "e"};
#define VIEW_GROUPS 5

/* ---- random numbers: splitmix64 to seed, xorshift64 to draw ---- */

static uint64_t rng;

void history_seed(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    rng = (z ^ (z >> 31)) | 1u;
}

int history_below(int n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

/* ---- the view: objects "GROUP:RANK"; objects starting with x are left out ---- */

static int rank_of(const void *object, size_t size) {
    const char *text = object;
    size_t i = 0;
    int rank = 0;
    while (i < size && text[i] != ':') i++;
    for (i++; i < size && text[i] >= '0' && text[i] <= '9'; i++) rank = rank * 10 + (text[i] - '0');
    return rank;
}

static int group_of(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    const char *text = row->object;
    char group[16];
    size_t n = 0;
    (void)ctx;
    (void)txn;
    if (text == NULL) return 1;
    if (row->object_size == 0 || text[0] == 'x') return 0;
    while (n < row->object_size && n + 1 < sizeof group && text[n] != ':') {
        group[n] = text[n];
        n++;
    }
    group[n] = '\0';
    return ydb_group_result_set(result, group);
}

static int by_rank(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b,
                   int *out_order) {
    int left = rank_of(a->object, a->object_size), right = rank_of(b->object, b->object_size);
    int order = (left > right) - (left < right);
    (void)ctx;
    (void)txn;
    (void)group;
    if (order == 0) order = strcmp(a->collection, b->collection);
    if (order == 0) order = strcmp(a->key, b->key);
    *out_order = order;
    return 0;
}

int history_register_view(ydb_database *db) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = group_of;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = by_rank;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    def.persistent = 0;
    return ydb_view_register(db, HISTORY_VIEW, &def, NULL, NULL);
}

int history_open(history *h) {
    memset(h, 0, sizeof *h);
    h->groups.hidden = -1;
    if (ydb_database_open(NULL, &h->db) != YDB_OK || ydb_connection_open(h->db, &h->writer) != YDB_OK ||
        ydb_connection_open(h->db, &h->checker) != YDB_OK || history_register_view(h->db) != YDB_OK) {
        fprintf(stderr, "opening a history's database: %s\n", ydb_errmsg());
        return 0;
    }
    return 1;
}

void history_close(history *h) {
    ydb_connection_close(h->checker);
    ydb_connection_close(h->writer);
    ydb_database_close(h->db);
    memset(h, 0, sizeof *h);
}

/* ---- mappings ---- */

static int show_group(void *ctx, ydb_txn *txn, const char *group) {
    const history_groups *choice = ctx;
    (void)txn;
    return choice->hidden < 0 || strcmp(group, view_groups[choice->hidden]) != 0;
}

static int sort_groups(void *ctx, ydb_txn *txn, const char *group1, const char *group2) {
    const history_groups *choice = ctx;
    int order = strcmp(group1, group2);
    (void)txn;
    return choice->descending ? -order : order;
}

static void say(history *h, const char *text) {
    size_t used = strlen(h->config);
    snprintf(h->config + used, sizeof h->config - used, "%s", text);
}

ydb_mappings *history_random_mappings(history *h, history_coverage *coverage) {
    ydb_mappings *m = NULL;
    char words[160];
    int offsets_set = 0, sections_set = 0;
    h->config[0] = '\0';
    if (history_below(3) == 0) {
        h->groups.hidden = history_below(3) == 0 ? -1 : history_below(VIEW_GROUPS);
        h->groups.descending = history_below(2);
        if (ydb_mappings_new_dynamic(HISTORY_VIEW, show_group, sort_groups, &h->groups, NULL, &m) != YDB_OK)
            return NULL;
        coverage->dynamic_groups++;
        snprintf(words, sizeof words, "dynamic groups (hiding %s, %s)",
                 h->groups.hidden < 0 ? "none" : view_groups[h->groups.hidden],
                 h->groups.descending ? "descending" : "ascending");
        say(h, words);
    } else {
        const char *groups[VIEW_GROUPS + 1];
        size_t count = 0;
        for (int g = 0; g < VIEW_GROUPS; g++)
            if (history_below(6) != 0) groups[count++] = view_groups[g];
        if (count == 0 || history_below(4) == 0) groups[count++] = "f"; /* never used by a row */
        for (size_t i = count; i > 1; i--) {
            size_t j = (size_t)history_below((int)i);
            const char *swap = groups[i - 1];
            groups[i - 1] = groups[j];
            groups[j] = swap;
        }
        if (ydb_mappings_new(HISTORY_VIEW, groups, count, &m) != YDB_OK) return NULL;
        coverage->static_groups++;
        say(h, "static groups [");
        for (size_t i = 0; i < count; i++) {
            say(h, i ? " " : "");
            say(h, groups[i]);
        }
        say(h, "]");
    }
    if (history_below(3) == 1) {
        ydb_mappings_set_dynamic_section_for_all_groups(m, 1);
        say(h, ", dynamic sections");
        sections_set = 1;
    } else {
        for (int g = 0; g < VIEW_GROUPS; g++)
            if (history_below(4) == 0) {
                ydb_mappings_set_dynamic_section(m, view_groups[g], 1);
                snprintf(words, sizeof words, ", dynamic section %s", view_groups[g]);
                say(h, words);
                sections_set = 1;
            }
    }
    coverage->dynamic_sections += sections_set;
    for (int g = 0; g < VIEW_GROUPS; g++) {
        const char *group = view_groups[g];
        int kind = history_below(10), pin = history_below(2) ? YDB_PIN_END : YDB_PIN_BEGINNING;
        int64_t length = 1 + history_below(5), offset = history_below(4);
        if (kind < 2) {
            ydb_mappings_set_range_fixed(m, group, length, offset, pin);
            snprintf(words, sizeof words, ", %s fixed %lld+%lld from %s", group, (long long)offset,
                     (long long)length, pin ? "end" : "beginning");
            say(h, words);
            coverage->fixed++;
        } else if (kind < 5) {
            int64_t max_length = history_below(2) ? 0 : length + history_below(4);
            int64_t min_length = history_below(3);
            int grow = history_below(3);
            if (max_length != 0 && min_length > max_length) min_length = max_length;
            ydb_mappings_set_range_flexible(m, group, length, offset, pin, max_length, min_length, grow);
            snprintf(words, sizeof words, ", %s flexible %lld+%lld from %s max %lld min %lld grow %d", group,
                     (long long)offset, (long long)length, pin ? "end" : "beginning", (long long)max_length,
                     (long long)min_length, grow);
            say(h, words);
            coverage->flexible++;
        }
        if (kind < 5 && pin == YDB_PIN_END) coverage->pin_end++;
        if (history_below(4) == 0) {
            ydb_mappings_set_reversed(m, group, 1);
            snprintf(words, sizeof words, ", %s reversed", group);
            say(h, words);
            coverage->reversed++;
        }
        if (history_below(5) == 0) {
            static const int sets[4][2] = {{-1, 0}, {1, 0}, {-1, 1}, {-2, 1}};
            int which = history_below(4);
            ydb_mappings_set_cell_drawing_dependency_offsets(m, group, sets[which], which < 2 ? 1 : 2);
            snprintf(words, sizeof words, ", %s offsets %d%s", group, sets[which][0], which < 2 ? "" : ",+1");
            say(h, words);
            offsets_set = 1;
        }
    }
    coverage->offsets += offsets_set;
    if (history_below(4) == 0) {
        size_t threshold = 2 + (size_t)history_below(12);
        ydb_mappings_set_auto_consolidate_groups(m, threshold, "all");
        snprintf(words, sizeof words, ", consolidate under %zu", threshold);
        say(h, words);
        coverage->consolidation++;
    }
    return m;
}

/* ---- commits ---- */

static int pick(history *h, int want_present, int *out_c, int *out_k) {
    for (int tries = 0; tries < 40; tries++) {
        int c = history_below(HISTORY_COLLECTIONS), k = history_below(HISTORY_KEYS);
        if (h->present[c][k] == want_present) {
            *out_c = c;
            *out_k = k;
            return 1;
        }
    }
    return 0;
}

static void random_object(char *object, size_t size) {
    if (history_below(12) == 0)
        snprintf(object, size, "x:%d", history_below(10));
    else
        snprintf(object, size, "%s:%d", view_groups[history_below(VIEW_GROUPS)], history_below(10));
}

int history_commit(history *h) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(h->writer, &txn);
    for (int n = 1 + history_below(4); rc == YDB_OK && n > 0; n--) {
        char key[8], object[16];
        int choice = history_below(100), c = 0, k = 0;
        if (choice < 35 || !pick(h, 1, &c, &k)) {
            if (!pick(h, 0, &c, &k)) pick(h, 1, &c, &k);
            snprintf(key, sizeof key, "k%d", k);
            random_object(object, sizeof object);
            if (history_below(3) == 0)
                rc = ydb_txn_set_object(txn, collections[c], key, object, strlen(object), "m", 1);
            else
                rc = ydb_txn_set_object(txn, collections[c], key, object, strlen(object), NULL, 0);
            h->present[c][k] = 1;
            continue;
        }
        snprintf(key, sizeof key, "k%d", k);
        if (choice < 65) {
            random_object(object, sizeof object);
            rc = ydb_txn_replace_object(txn, collections[c], key, object, strlen(object));
        } else if (choice < 78) {
            switch (history_below(3)) {
            case 0: rc = ydb_txn_touch_object(txn, collections[c], key); break;
            case 1: rc = ydb_txn_touch_row(txn, collections[c], key); break;
            default: rc = ydb_txn_replace_metadata(txn, collections[c], key, "z", 1); break;
            }
        } else if (choice < 97) {
            rc = ydb_txn_remove_object(txn, collections[c], key);
            h->present[c][k] = 0;
        } else {
            rc = ydb_txn_remove_all_objects(txn, collections[c]);
            memset(h->present[c], 0, sizeof h->present[c]);
        }
    }
    if (rc != YDB_OK) {
        fprintf(stderr, "a random write failed: %s\n", ydb_errmsg());
        ydb_txn_rollback(txn);
        return 0;
    }
    return ydb_txn_commit(txn) == YDB_OK;
}

int history_fill(ydb_connection *writer, const char *collection, int count, int groups) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(writer, &txn);
    for (int i = 0; rc == YDB_OK && i < count; i++) {
        char key[24], object[32];
        snprintf(key, sizeof key, "k%07d", i);
        snprintf(object, sizeof object, "%s:%d", view_groups[i % groups], i);
        rc = ydb_txn_set_object(txn, collection, key, object, strlen(object), NULL, 0);
    }
    return rc == YDB_OK ? ydb_txn_commit(txn) : (ydb_txn_rollback(txn), rc);
}

/* ---- the expected table ---- */

static void append_row(GString *out, ydb_txn *txn, const char *collection, const char *key) {
    void *object = NULL;
    size_t size = 0;
    ydb_txn_get_object(txn, collection, key, &object, &size);
    g_string_append_printf(out, "%s/%s=%.*s\n", collection, key, (int)size, object ? (const char *)object : "");
    ydb_free(object);
}

char *history_expected(history *h, ydb_mappings *m, int with_sections, uint64_t *out_snapshot) {
    ydb_txn *txn = NULL;
    size_t sections = 0;
    GString *out = g_string_new("");
    int rc = ydb_connection_begin_long_lived_read(h->checker, NULL);
    if (rc == YDB_OK || rc == YDB_RELOAD) rc = ydb_txn_begin_read(h->checker, &txn);
    if (rc == YDB_OK) rc = ydb_txn_snapshot(txn, out_snapshot);
    if (rc == YDB_OK) rc = ydb_mappings_number_of_sections(m, &sections);
    for (size_t s = 0; rc == YDB_OK && s < sections; s++) {
        const char *group = NULL;
        size_t rows = 0;
        if ((rc = ydb_mappings_group_for_section(m, s, &group)) != YDB_OK ||
            (rc = ydb_mappings_number_of_items_in_section(m, s, &rows)) != YDB_OK)
            break;
        if (with_sections) g_string_append_printf(out, "# %s\n", group);
        for (size_t r = 0; rc == YDB_OK && r < rows; r++) {
            const char *view_group = NULL;
            size_t index = 0;
            char *collection = NULL, *key = NULL;
            rc = ydb_mappings_group_and_index_for_row(m, r, s, &view_group, &index);
            if (rc == YDB_OK) rc = ydb_view_key_at(txn, HISTORY_VIEW, view_group, index, &collection, &key);
            if (rc == YDB_OK) append_row(out, txn, collection, key);
            ydb_free(collection);
            ydb_free(key);
        }
    }
    ydb_txn_end(txn);
    if (rc != YDB_OK) {
        fprintf(stderr, "reading the expected table: %s\n", ydb_errmsg());
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

/* ---- consumers ---- */

char *history_describe(YdbviewGtkItem *item) {
    GBytes *object = ydbview_gtk_item_get_object(item);
    gsize size = 0;
    const char *data = object ? g_bytes_get_data(object, &size) : NULL;
    return g_strdup_printf("%s/%s=%.*s", ydbview_gtk_item_get_collection(item), ydbview_gtk_item_get_key(item),
                           (int)size, data ? data : "");
}

static void on_rows_changed(GListModel *model, guint position, guint removed, guint added, gpointer data) {
    replay *r = data;
    r->signals++;
    if (position + removed > r->rows->len) {
        fprintf(stderr, "items-changed(%u, %u, %u) past the %u rows announced before\n", position, removed, added,
                r->rows->len);
        (*r->failures)++;
        return;
    }
    g_ptr_array_remove_range(r->rows, position, removed);
    for (guint i = 0; i < added; i++) {
        YdbviewGtkItem *item = g_list_model_get_item(model, position + i);
        g_ptr_array_insert(r->rows, (gint)(position + i),
                           item ? history_describe(item) : g_strdup("(no item where one was announced)"));
        g_clear_object(&item);
    }
    if (g_list_model_get_n_items(model) != r->rows->len) {
        fprintf(stderr, "after items-changed(%u, %u, %u) the model has %u items, the consumer %u\n", position,
                removed, added, g_list_model_get_n_items(model), r->rows->len);
        (*r->failures)++;
    }
}

void replay_start(replay *r, GListModel *model, int *failures) {
    r->model = g_object_ref(model);
    r->rows = g_ptr_array_new_with_free_func(g_free);
    r->failures = failures;
    r->signals = 0;
    for (guint i = 0, n = g_list_model_get_n_items(model); i < n; i++) {
        YdbviewGtkItem *item = g_list_model_get_item(model, i);
        g_ptr_array_add(r->rows, item ? history_describe(item) : g_strdup("(no item)"));
        g_clear_object(&item);
    }
    r->handler = g_signal_connect(model, "items-changed", G_CALLBACK(on_rows_changed), r);
}

void replay_stop(replay *r) {
    if (r->model == NULL) return;
    g_signal_handler_disconnect(r->model, r->handler);
    g_clear_object(&r->model);
    g_ptr_array_unref(r->rows);
}

char *replay_text(const replay *r) {
    GString *out = g_string_new("");
    for (guint i = 0; i < r->rows->len; i++) g_string_append_printf(out, "%s\n", (char *)r->rows->pdata[i]);
    return g_string_free(out, FALSE);
}

typedef struct {
    char *group;
    replay rows;
} section_replay;

static void section_replay_free(gpointer data) {
    section_replay *shown = data;
    replay_stop(&shown->rows);
    g_free(shown->group);
    g_free(shown);
}

static void on_sections_changed(GListModel *model, guint position, guint removed, guint added, gpointer data) {
    sections_replay *r = data;
    if (position + removed > r->shown->len) {
        fprintf(stderr, "sections items-changed(%u, %u, %u) past the %u sections\n", position, removed, added,
                r->shown->len);
        (*r->failures)++;
        return;
    }
    g_ptr_array_remove_range(r->shown, position, removed);
    for (guint i = 0; i < added; i++) {
        YdbviewGtkSection *section = g_list_model_get_item(model, position + i);
        section_replay *shown = g_new0(section_replay, 1);
        shown->group = g_strdup(section ? ydbview_gtk_section_get_group(section) : "(no section)");
        if (section != NULL) replay_start(&shown->rows, G_LIST_MODEL(section), r->failures);
        g_ptr_array_insert(r->shown, (gint)(position + i), shown);
        g_clear_object(&section);
    }
    if (g_list_model_get_n_items(model) != r->shown->len) {
        fprintf(stderr, "the sections model has %u sections, the consumer %u\n", g_list_model_get_n_items(model),
                r->shown->len);
        (*r->failures)++;
    }
}

void sections_replay_start(sections_replay *r, GListModel *sections, int *failures) {
    r->sections = g_object_ref(sections);
    r->shown = g_ptr_array_new_with_free_func(section_replay_free);
    r->failures = failures;
    on_sections_changed(sections, 0, 0, g_list_model_get_n_items(sections), r);
    r->handler = g_signal_connect(sections, "items-changed", G_CALLBACK(on_sections_changed), r);
}

void sections_replay_stop(sections_replay *r) {
    if (r->sections == NULL) return;
    g_signal_handler_disconnect(r->sections, r->handler);
    g_ptr_array_unref(r->shown);
    g_clear_object(&r->sections);
}

char *sections_replay_text(const sections_replay *r) {
    GString *out = g_string_new("");
    for (guint s = 0; s < r->shown->len; s++) {
        section_replay *shown = r->shown->pdata[s];
        char *rows = shown->rows.rows ? replay_text(&shown->rows) : g_strdup("");
        g_string_append_printf(out, "# %s\n%s", shown->group, rows);
        g_free(rows);
    }
    return g_string_free(out, FALSE);
}
