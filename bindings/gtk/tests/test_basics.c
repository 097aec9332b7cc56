/*
** test_basics.c -- ydbview-gtk's edges: NULL arguments and failures give
** GErrors or criticals, never a crash; ownership (the model frees the
** mappings it takes, also when it fails; borrowed ones are left alone);
** closing in either order; sections outliving their model; a catch-up from
** inside the model's own signal is refused; following through the wakeup
** descriptor on a main loop; items are made lazily and kept.
*/
#include <stdio.h>
#include <string.h>

#include "histories.h"

static int passed, failed;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (cond) {                                                                    \
            passed++;                                                                  \
        } else {                                                                       \
            failed++;                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
        }                                                                              \
    } while (0)

static ydb_mappings *all_groups(void) {
    const char *groups[] = {"a", "b", "c"};
    ydb_mappings *m = NULL;
    ydb_mappings_new(HISTORY_VIEW, groups, 3, &m);
    return m;
}

static void test_nulls_and_errors(void) {
    history h;
    GError *error = NULL;
    ydb_mappings *m;
    CHECK(ydbview_gtk_list_model_new(NULL, NULL, &error) == NULL);
    CHECK(g_error_matches(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_MISUSE));
    g_clear_error(&error);
    CHECK(ydbview_gtk_list_model_new_borrowed(NULL, NULL, NULL) == NULL); /* no error wanted: fine too */
    /* Criticals, not crashes, for NULL models. */
    CHECK(ydbview_gtk_list_model_get_n_sections(NULL) == 0);
    CHECK(!ydbview_gtk_list_model_catch_up(NULL, NULL));
    CHECK(ydbview_gtk_list_model_get_sections(NULL) == NULL);
    CHECK(ydbview_gtk_item_get_key(NULL) == NULL);
    CHECK(ydbview_gtk_section_get_group(NULL) == NULL);
    ydbview_gtk_list_model_close(NULL);

    CHECK(history_open(&h));
    /* An unregistered view: NOT_FOUND naming it; the taken mappings are freed. */
    {
        const char *groups[] = {"a"};
        ydb_mappings_new("no such view", groups, 1, &m);
    }
    CHECK(ydbview_gtk_list_model_new(h.db, m, &error) == NULL);
    CHECK(g_error_matches(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_NOT_FOUND));
    CHECK(error != NULL && strstr(error->message, "no such view") != NULL);
    if (error) printf("an unregistered view: %s\n", error->message);
    g_clear_error(&error);
    {
        size_t count = 0;
        CHECK(ydb_mappings_number_of_sections(m, &count) == YDB_MISUSE); /* freed: a stale handle */
    }
    /* Borrowed mappings are the caller's, also after a failure. */
    {
        const char *groups[] = {"a"};
        ydb_mappings_new("no such view", groups, 1, &m);
    }
    CHECK(ydbview_gtk_list_model_new_borrowed(h.db, m, &error) == NULL);
    g_clear_error(&error);
    {
        const char *view = NULL;
        CHECK(ydb_mappings_view(m, &view) == YDB_OK);
    }
    ydb_mappings_free(m);
    history_close(&h);
}

static gboolean saw_misuse;

static void catch_up_inside(GListModel *list, guint position, guint removed, guint added, gpointer data) {
    GError *error = NULL;
    (void)position;
    (void)removed;
    (void)added;
    (void)data;
    if (!ydbview_gtk_list_model_catch_up(YDBVIEW_GTK_LIST_MODEL(list), &error))
        saw_misuse = g_error_matches(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_MISUSE);
    g_clear_error(&error);
}

static gboolean give_up(gpointer data) {
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

static void test_lifecycle(void) {
    history h;
    GError *error = NULL;
    YdbviewGtkListModel *model;
    YdbviewGtkSectionsModel *sections;
    YdbviewGtkSection *first;
    YdbviewGtkItem *item, *again;
    ydb_mappings *m = NULL;

    CHECK(history_open(&h));
    CHECK(history_fill(h.writer, "c1", 30, 3) == YDB_OK);
    model = ydbview_gtk_list_model_new(h.db, all_groups(), &error);
    CHECK(model != NULL && error == NULL);
    if (model == NULL) return;
    CHECK(g_list_model_get_n_items(G_LIST_MODEL(model)) == 30);
    CHECK(g_list_model_get_item_type(G_LIST_MODEL(model)) == YDBVIEW_GTK_TYPE_ITEM);
    CHECK(ydbview_gtk_list_model_get_n_sections(model) == 3);
    CHECK(g_list_model_get_item(G_LIST_MODEL(model), 30) == NULL);
    /* Items: made when asked for, then the same object while unchanged. */
    item = g_list_model_get_item(G_LIST_MODEL(model), 0);
    again = g_list_model_get_item(G_LIST_MODEL(model), 0);
    CHECK(item != NULL && item == again);
    CHECK(item != NULL && strcmp(ydbview_gtk_item_get_group(item), "a") == 0);
    CHECK(item != NULL && ydbview_gtk_item_get_metadata(item) == NULL);
    {
        char *text = item ? ydbview_gtk_item_dup_text(item) : NULL;
        CHECK(text != NULL && strcmp(text, "a:0") == 0);
        g_free(text);
    }
    g_clear_object(&again);
    {
        guint start = 0, end = 0;
        CHECK(ydbview_gtk_list_model_get_section_range(model, 1, &start, &end) && start == 10 && end == 20);
        CHECK(!ydbview_gtk_list_model_get_section_range(model, 3, &start, &end) && start == 0 && end == 0);
        CHECK(ydbview_gtk_list_model_section_at(model, 25) == 2);
        CHECK(ydbview_gtk_list_model_section_at(model, 30) == G_MAXUINT);
    }
    /* One sections model while it lives; it keeps the list model. */
    sections = ydbview_gtk_list_model_get_sections(model);
    {
        YdbviewGtkSectionsModel *same = ydbview_gtk_list_model_get_sections(model);
        CHECK(same == sections);
        g_object_unref(same);
    }
    first = g_list_model_get_item(G_LIST_MODEL(sections), 0);
    CHECK(first != NULL && g_list_model_get_n_items(G_LIST_MODEL(first)) == 10);

    /* A catch-up from inside the model's own signal is refused. */
    g_signal_connect(model, "items-changed", G_CALLBACK(catch_up_inside), NULL);
    history_fill(h.writer, "c2", 1, 1);
    CHECK(ydbview_gtk_list_model_catch_up(model, &error) && error == NULL);
    CHECK(saw_misuse);
    g_signal_handlers_disconnect_by_func(model, G_CALLBACK(catch_up_inside), NULL);

    /* Following: a commit wakes the main loop, which catches the model up. */
    CHECK(ydbview_gtk_list_model_get_following(model));
    history_fill(h.writer, "c3", 2, 1);
    {
        gboolean gave_up = FALSE;
        guint timer = g_timeout_add(5000, give_up, &gave_up);
        while (!gave_up && g_list_model_get_n_items(G_LIST_MODEL(model)) != 33) g_main_context_iteration(NULL, TRUE);
        if (!gave_up) g_source_remove(timer);
    }
    CHECK(g_list_model_get_n_items(G_LIST_MODEL(model)) == 33);
    CHECK(g_list_model_get_n_items(G_LIST_MODEL(first)) == 13);
    ydbview_gtk_list_model_set_following(model, FALSE);
    CHECK(!ydbview_gtk_list_model_get_following(model));

    /* Closed: the rows stay (keys only for new items), catch-ups fail. */
    ydbview_gtk_list_model_close(model);
    ydbview_gtk_list_model_close(model);
    CHECK(!ydbview_gtk_list_model_catch_up(model, &error));
    CHECK(g_error_matches(error, YDBVIEW_GTK_ERROR, YDBVIEW_GTK_ERROR_CLOSED));
    g_clear_error(&error);
    CHECK(g_list_model_get_n_items(G_LIST_MODEL(model)) == 33);
    again = g_list_model_get_item(G_LIST_MODEL(model), 20);
    CHECK(again != NULL && ydbview_gtk_item_get_object(again) == NULL && ydbview_gtk_item_get_key(again) != NULL);
    g_clear_object(&again);
    CHECK(item != NULL && ydbview_gtk_item_get_object(item) != NULL); /* made before: keeps its values */

    /* The model goes when its last holder does: the sections model holds it. */
    g_object_unref(model);
    CHECK(g_list_model_get_n_items(G_LIST_MODEL(sections)) == 3);
    g_object_unref(sections);
    /* The section outlived its model: empty, no crash. */
    CHECK(g_list_model_get_n_items(G_LIST_MODEL(first)) == 0);
    CHECK(g_list_model_get_item(G_LIST_MODEL(first), 0) == NULL);
    g_clear_object(&first);
    g_clear_object(&item);

    /* The database closed before the model: catch-ups fail, nothing crashes. */
    m = all_groups();
    model = ydbview_gtk_list_model_new(h.db, m, &error);
    CHECK(model != NULL);
    ydbview_gtk_list_model_set_following(model, FALSE);
    history_close(&h);
    CHECK(model != NULL && !ydbview_gtk_list_model_catch_up(model, &error));
    if (error) printf("after the database closed: %s\n", error->message);
    g_clear_error(&error);
    g_clear_object(&model);
}

int main(void) {
    /* Criticals from g_return_if_fail are expected here: not fatal. */
    g_log_set_always_fatal(G_LOG_LEVEL_ERROR);
    test_nulls_and_errors();
    test_lifecycle();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
