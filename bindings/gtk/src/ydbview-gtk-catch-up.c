/*
** ydbview-gtk-catch-up.c -- how a YdbviewGtkListModel follows its mappings:
** reading the whole table (at construction and when the connection fell too
** far behind) and applying a changeset's edit script to the shadow, one
** items-changed signal per step.
*/
#include "ydbview-gtk-private.h"

/* How many times a reload reads the newest table before giving up: each try
** fails only when writers commit more than max_commits_behind meanwhile. */
#define RELOAD_ATTEMPTS 3

/* ---- reading the whole table (construction and reloads) ---- */

static int append_key(void *ctx, const char *collection, const char *key, size_t index) {
    (void)index;
    g_sequence_append(ctx, _ydbview_gtk_row_new(collection, key));
    return 0;
}

/* Reads the rows the mappings show in `txn` into `rows`, and the sections.
** Rows of one group shown next to each other are read in one enumeration:
** the run is found by bisection on the mappings' getters (a group's rows
** are contiguous in a section, with indexes going one way), so reading a
** section of a single group costs a few calls plus one per row read. */
static gboolean read_table(YdbviewGtkListModel *self, ydb_txn *txn, GSequence *rows, GPtrArray *sections,
                           GError **error) {
    size_t count = 0;
    int rc = ydb_mappings_number_of_sections(self->mappings, &count);
    for (size_t s = 0; rc == YDB_OK && s < count; s++) {
        const char *group = NULL;
        size_t n = 0, r = 0;
        YdbviewGtkSection *section;
        if ((rc = ydb_mappings_group_for_section(self->mappings, s, &group)) != YDB_OK ||
            (rc = ydb_mappings_number_of_items_in_section(self->mappings, s, &n)) != YDB_OK)
            break;
        section = _ydbview_gtk_section_new(self, group);
        section->n_rows = (guint)n;
        g_ptr_array_add(sections, section);
        while (r < n) {
            const char *g0 = NULL, *g1 = NULL;
            size_t i0 = 0, i1 = 0, run = 1;
            int direction = 0;
            gint before = g_sequence_get_length(rows);
            if ((rc = ydb_mappings_group_and_index_for_row(self->mappings, r, s, &g0, &i0)) != YDB_OK) break;
            if (r + 1 < n && ydb_mappings_group_and_index_for_row(self->mappings, r + 1, s, &g1, &i1) == YDB_OK &&
                strcmp(g0, g1) == 0)
                direction = i1 == i0 + 1 ? 1 : (i0 > 0 && i1 == i0 - 1 ? -1 : 0);
            if (direction != 0) {
                size_t lo = 2, hi = n - r; /* rows r .. r+lo-1 are in the run; find the largest */
                while (lo < hi) {
                    size_t mid = lo + (hi - lo + 1) / 2, im = 0;
                    const char *gm = NULL;
                    size_t want = direction > 0 ? i0 + (mid - 1) : i0 - (mid - 1);
                    if (direction < 0 && mid - 1 > i0) {
                        hi = mid - 1;
                        continue;
                    }
                    if (ydb_mappings_group_and_index_for_row(self->mappings, r + mid - 1, s, &gm, &im) == YDB_OK &&
                        strcmp(gm, g0) == 0 && im == want)
                        lo = mid;
                    else
                        hi = mid - 1;
                }
                run = lo;
            }
            if (direction >= 0)
                rc = ydb_view_enumerate_keys(txn, self->view, g0, i0, i0 + run, 0, append_key, rows);
            else
                rc = ydb_view_enumerate_keys(txn, self->view, g0, i0 + 1 - run, i0 + 1, 1, append_key, rows);
            if (rc != YDB_OK) break;
            if ((size_t)(g_sequence_get_length(rows) - before) != run) {
                g_set_error(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_FAILED,
                            "reading the table: the view has fewer rows in group '%s' than the mappings show", g0);
                return FALSE;
            }
            r += run;
        }
    }
    if (rc != YDB_OK) {
        _ydbview_gtk_set_error(error, rc, "reading the table");
        return FALSE;
    }
    return TRUE;
}


/* Moves to the newest snapshot and reads the table anew, replacing the
** shadow; `announce` says whether consumers are told (not at construction):
** one items-changed replacing everything, for the list and the sections. */
gboolean _ydbview_gtk_list_model_reload(YdbviewGtkListModel *self, gboolean announce, GError **error) {
    GSequence *rows = NULL;
    GPtrArray *sections = NULL, *old_sections;
    guint old_rows = (guint)g_sequence_get_length(self->rows), old_count = self->sections->len;
    GError *failure = NULL;
    for (int attempt = 0; attempt < RELOAD_ATTEMPTS; attempt++) {
        ydb_txn *txn = NULL;
        int rc;
        g_clear_error(&failure);
        _ydbview_gtk_list_model_end_txn(self);
        rc = ydb_connection_begin_long_lived_read(self->connection, NULL);
        if (rc == YDB_OK || rc == YDB_RELOAD) rc = ydb_txn_begin_read(self->connection, &txn);
        if (rc == YDB_OK) rc = ydb_mappings_update(self->mappings, txn);
        if (rc != YDB_OK) {
            _ydbview_gtk_set_error(&failure, rc, "reading the newest table"); /* before ydb_errmsg() changes */
            if (txn != NULL) ydb_txn_end(txn);
            if (rc == YDB_RELOAD) continue;
            break;
        }
        rows = g_sequence_new(NULL);
        sections = g_ptr_array_new_with_free_func(g_object_unref);
        if (read_table(self, txn, rows, sections, &failure)) {
            _ydbview_gtk_list_model_keep_txn(self, txn);
            break;
        }
        ydb_txn_end(txn);
        _ydbview_gtk_detach_sections(sections);
        g_clear_pointer(&rows, _ydbview_gtk_free_rows);
        g_clear_pointer(&sections, g_ptr_array_unref);
    }
    if (rows == NULL) {
        g_propagate_error(error, failure);
        return FALSE;
    }
    /* Sections leaving are emptied first, so that a tree holding them never
    ** sees rows the list no longer has. */
    old_sections = self->sections;
    if (announce)
        for (guint s = 0; s < old_sections->len; s++) {
            YdbviewGtkSection *section = g_ptr_array_index(old_sections, s);
            guint n = section->n_rows;
            _ydbview_gtk_section_detach(section);
            if (n > 0) g_list_model_items_changed(G_LIST_MODEL(section), 0, n, 0);
        }
    _ydbview_gtk_detach_sections(old_sections);
    _ydbview_gtk_free_rows(self->rows);
    self->rows = rows;
    self->sections = sections;
    g_ptr_array_unref(old_sections);
    _ydbview_gtk_list_model_note_snapshot(self);
    if (announce) {
        if (self->sections_model != NULL)
            g_list_model_items_changed(G_LIST_MODEL(self->sections_model), 0, old_count, sections->len);
        g_list_model_items_changed(G_LIST_MODEL(self), 0, old_rows, (guint)g_sequence_get_length(rows));
    }
    return TRUE;
}

/* ---- applying an edit script ---- */

static gboolean inconsistent(GError **error, const char *what, size_t section, size_t row) {
    g_set_error(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_MISMATCH,
                "the edit script does not fit the model: %s at (%zu, %zu)", what, section, row);
    return FALSE;
}

/* Announces a change to one section's own list. Most sections have no
** listener (a flat ListView listens to the model, not to them), and an
** emission nobody hears still costs about as much as one somebody does
** (about 2M instructions of a 1,000-move catch-up's 47M). Checked per
** emission, so a
** handler connected at any time hears everything from then on. */
static void section_changed(YdbviewGtkSection *shown, guint position, guint removed, guint added) {
    static guint items_changed = 0;
    if (items_changed == 0) items_changed = g_signal_lookup("items-changed", G_TYPE_LIST_MODEL);
    if (g_signal_has_handler_pending(shown, items_changed, 0, FALSE))
        g_list_model_items_changed(G_LIST_MODEL(shown), position, removed, added);
}

static YdbviewGtkSection *section_for(YdbviewGtkListModel *self, size_t section) {
    return section < self->sections->len ? g_ptr_array_index(self->sections, section) : NULL;
}

/* Takes the row at (section, row) out of the shadow and announces it. */
static YdbviewGtkRow *take_row(YdbviewGtkListModel *self, YdbviewGtkSection *shown, size_t section, size_t row) {
    guint position = _ydbview_gtk_list_model_section_offset(self, (guint)section) + (guint)row;
    GSequenceIter *iter = g_sequence_get_iter_at_pos(self->rows, (gint)position);
    YdbviewGtkRow *taken = g_sequence_get(iter);
    g_sequence_remove(iter); /* the sequence frees nothing: the row is ours */
    shown->n_rows--;
    g_list_model_items_changed(G_LIST_MODEL(self), position, 1, 0);
    section_changed(shown, (guint)row, 1, 0);
    return taken;
}

/* Puts `put` at (section, row) of the shadow and announces it. */
static void put_row(YdbviewGtkListModel *self, YdbviewGtkSection *shown, size_t section, size_t row,
                    YdbviewGtkRow *put) {
    guint position = _ydbview_gtk_list_model_section_offset(self, (guint)section) + (guint)row;
    g_sequence_insert_before(g_sequence_get_iter_at_pos(self->rows, (gint)position), put);
    put->placed = self->catch_ups;
    shown->n_rows++;
    g_list_model_items_changed(G_LIST_MODEL(self), position, 0, 1);
    section_changed(shown, (guint)row, 0, 1);
}

static gboolean apply_step(YdbviewGtkListModel *self, const ydb_edit_step *step, ydb_txn *txn, GError **error) {
    size_t s = step->section, r = step->row;
    YdbviewGtkSection *shown = section_for(self, s);
    switch (step->type) {
    case YDB_STEP_REMOVE_SECTION:
        if (shown == NULL || shown->n_rows != 0) return inconsistent(error, "removing a section", s, 0);
        _ydbview_gtk_section_detach(shown);
        g_ptr_array_remove_index(self->sections, (guint)s);
        if (self->sections_model != NULL)
            g_list_model_items_changed(G_LIST_MODEL(self->sections_model), (guint)s, 1, 0);
        return TRUE;
    case YDB_STEP_INSERT_SECTION:
        if (s > self->sections->len) return inconsistent(error, "inserting a section", s, 0);
        g_ptr_array_insert(self->sections, (gint)s, _ydbview_gtk_section_new(self, step->group));
        if (self->sections_model != NULL)
            g_list_model_items_changed(G_LIST_MODEL(self->sections_model), (guint)s, 0, 1);
        return TRUE;
    case YDB_STEP_REMOVE_ROW:
        if (shown == NULL || r >= shown->n_rows) return inconsistent(error, "removing a row", s, r);
        _ydbview_gtk_row_free(take_row(self, shown, s, r));
        return TRUE;
    case YDB_STEP_INSERT_ROW: {
        YdbviewGtkRow *row;
        if (shown == NULL || r > shown->n_rows) return inconsistent(error, "inserting a row", s, r);
        if (step->key != NULL) {
            row = _ydbview_gtk_row_new(step->collection, step->key);
        } else {
            /* A row that only slid into a range window: the changeset does not
            ** name it, the new table (the mappings are there now) does. */
            char *collection = NULL, *key = NULL;
            int rc = ydb_view_key_at_index_path(txn, self->mappings, step->final_section, step->final_row,
                                                &collection, &key);
            if (rc != YDB_OK) {
                _ydbview_gtk_set_error(error, rc, "reading an inserted row");
                return FALSE;
            }
            row = _ydbview_gtk_row_new(collection, key);
            ydb_free(collection);
            ydb_free(key);
        }
        row->rowid = step->rowid;
        put_row(self, shown, s, r, row);
        return TRUE;
    }
    case YDB_STEP_MOVE_ROW: {
        YdbviewGtkSection *to = section_for(self, step->to_section);
        YdbviewGtkRow *row;
        if (shown == NULL || r >= shown->n_rows || to == NULL) return inconsistent(error, "moving a row", s, r);
        /* GListModel has no move: a removal, then an insertion. The item is
        ** made anew (its group may have changed). */
        row = take_row(self, shown, s, r);
        g_clear_object(&row->item);
        if (step->to_row > to->n_rows) {
            _ydbview_gtk_row_free(row);
            return inconsistent(error, "moving a row to", step->to_section, step->to_row);
        }
        row->rowid = step->rowid;
        put_row(self, to, step->to_section, step->to_row, row);
        return TRUE;
    }
    case YDB_STEP_RELOAD_ROW: {
        guint position;
        YdbviewGtkRow *row;
        if (shown == NULL || r >= shown->n_rows) return inconsistent(error, "reloading a row", s, r);
        position = _ydbview_gtk_list_model_section_offset(self, (guint)s) + (guint)r;
        row = g_sequence_get(g_sequence_get_iter_at_pos(self->rows, (gint)position));
        row->rowid = step->rowid;
        /* Moved here in this catch-up: its insertion was announced with an
        ** item made from the new snapshot (items are read from the catch-up's
        ** transaction), so a reload would only repeat it. Skipping it saves a
        ** signal pair and an item per updated-and-moved row (1,000 of each in
        ** the benchmark's 1,000 moves). */
        if (row->placed == self->catch_ups) return TRUE;
        g_clear_object(&row->item);
        g_list_model_items_changed(G_LIST_MODEL(self), position, 1, 1);
        section_changed(shown, (guint)r, 1, 1);
        return TRUE;
    }
    default:
        return inconsistent(error, "an unknown step", s, r);
    }
}

/* The catch-up proper: returns 1 when it announced a changeset, 2 when it
** reloaded, 0 when there was nothing to do, -1 on failure. */
int _ydbview_gtk_list_model_catch_up(YdbviewGtkListModel *self, GError **error) {
    ydb_notification_list *commits = NULL;
    ydb_changeset *changeset = NULL;
    ydb_txn *txn = NULL;
    size_t count = 0, steps = 0;
    GError *failure = NULL;
    int rc;
    _ydbview_gtk_list_model_end_txn(self);
    rc = ydb_connection_begin_long_lived_read(self->connection, &commits);
    if (rc == YDB_RELOAD) return _ydbview_gtk_list_model_reload(self, TRUE, error) ? 2 : -1;
    if (rc != YDB_OK) {
        _ydbview_gtk_set_error(error, rc, "catching up");
        return -1;
    }
    ydb_notification_list_count(commits, &count);
    if (count == 0) {
        ydb_notification_list_free(commits);
        return 0;
    }
    /* The changeset is computed in a read transaction at the new snapshot:
    ** dynamic groups whose filter reads rows need one, and the same
    ** transaction then serves the items asked for during the signals. */
    rc = ydb_txn_begin_read(self->connection, &txn);
    if (rc == YDB_OK) rc = ydb_changeset_new_in_txn(self->mappings, commits, txn, &changeset);
    ydb_notification_list_free(commits);
    if (rc != YDB_OK) {
        if (txn != NULL) ydb_txn_end(txn);
        /* The commits were dropped while we read, or the mappings disagree
        ** with them: the table read anew is still right. */
        return _ydbview_gtk_list_model_reload(self, TRUE, error) ? 2 : -1;
    }
    _ydbview_gtk_list_model_keep_txn(self, txn);
    _ydbview_gtk_list_model_note_snapshot(self);
    self->catch_ups++;
    ydb_changeset_step_count(changeset, &steps);
    for (size_t i = 0; i < steps && failure == NULL; i++) {
        ydb_edit_step step;
        if (ydb_changeset_step(changeset, i, &step) != YDB_OK)
            _ydbview_gtk_set_error(&failure, ydb_errcode(), "reading the edit script");
        else
            apply_step(self, &step, txn, &failure);
    }
    ydb_changeset_free(changeset);
    if (failure != NULL) {
        /* Never expected; if it happens, the consumers are told to start
        ** over rather than left with a list that disagrees with the model. */
        g_warning("ydbview-gtk: %s; reloading the table", failure->message);
        g_clear_error(&failure);
        return _ydbview_gtk_list_model_reload(self, TRUE, error) ? 2 : -1;
    }
    return 1;
}
