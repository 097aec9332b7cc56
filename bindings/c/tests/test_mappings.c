/*
** test_mappings.c -- mappings through the C ABI: getters under static and
** dynamic groups, dynamic sections, fixed and flexible ranges, reverse,
** consolidation, dependencies, successive updates, range options read back
** live and set from a struct, rows by index path, bad input, and two
** threads sharing one mappings.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "view_helpers.h"

static const char *V = "byGroup";


/* A view with groups a (5 rows: a0..a4), b (3 rows: b0..b2), no c. */
static void setup(fixture *f) {
    ydb_txn *txn;
    char key[8], object[16];
    int i;
    open_fixture(f, V, "");
    REQUIRE_OK(ydb_txn_begin_read_write(f->writer, &txn));
    for (i = 0; i < 8; i++) {
        char group = i < 5 ? 'a' : 'b';
        int n = i < 5 ? i : i - 5;
        sprintf(key, "%c%d", group, n);
        sprintf(object, "%c:%d", group, n);
        REQUIRE_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
    }
    REQUIRE_OK(ydb_txn_commit(txn));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, NULL));
}

static void teardown(fixture *f) {
    ydb_connection_close(f->reader);
    ydb_connection_close(f->writer);
    ydb_database_close(f->db);
}

static void update(fixture *f, ydb_mappings *m) {
    ydb_txn *txn;
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(f->reader, &txn));
    CHECK_OK(ydb_mappings_update(m, txn));
    ydb_txn_end(txn);
}

static size_t sections(ydb_mappings *m) {
    size_t n = 99;
    CHECK_OK(ydb_mappings_number_of_sections(m, &n));
    return n;
}

static size_t items(ydb_mappings *m, size_t section) {
    size_t n = 99;
    if (ydb_mappings_number_of_items_in_section(m, section, &n) != YDB_OK) return 99;
    return n;
}

static int group_is(ydb_mappings *m, size_t section, const char *want) {
    const char *group = NULL;
    return ydb_mappings_group_for_section(m, section, &group) == YDB_OK && strcmp(group, want) == 0;
}

static size_t index_for(ydb_mappings *m, size_t row, size_t section) {
    size_t index = 99;
    if (ydb_mappings_index_for_row_in_section(m, row, section, &index) != YDB_OK) return 99;
    return index;
}

static int collect(void *ctx, const char *name) {
    strcat((char *)ctx, name);
    strcat((char *)ctx, ";");
    return 0;
}

/* ---- static groups ---- */

static void test_static_getters(void) {
    fixture f;
    ydb_mappings *m = NULL;
    const char *groups[] = {"a", "b", "c", "a"};
    const char *group = NULL, *view = NULL;
    size_t n = 7, section = 7, row = 7, index = 7;
    uint64_t snapshot = 7, before;
    int flag = -1;
    char names[64] = "";

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 4, &m));
    CHECK_OK(ydb_mappings_view(m, &view));
    CHECK(strcmp(view, V) == 0);

    /* Before the first update: nothing, and NOTFOUND for lookups. */
    CHECK(sections(m) == 0);
    CHECK_OK(ydb_mappings_is_empty(m, &flag));
    CHECK(flag == 1);
    CHECK_RC(ydb_mappings_snapshot_of_last_update(m, &snapshot), YDB_NOTFOUND);
    CHECK(snapshot == 0);
    CHECK_RC(ydb_mappings_group_for_section(m, 0, &group), YDB_NOTFOUND);
    CHECK(group == NULL);
    CHECK_RC(ydb_mappings_number_of_items_in_group(m, "a", &n), YDB_NOTFOUND);

    update(&f, m);
    CHECK_OK(ydb_mappings_snapshot_of_last_update(m, &snapshot));
    CHECK_OK(ydb_connection_snapshot(f.reader, &before));
    CHECK(snapshot == before);
    CHECK(sections(m) == 3); /* duplicates dropped; static c shown empty */
    CHECK(items(m, 0) == 5 && items(m, 1) == 3 && items(m, 2) == 0);
    CHECK(items(m, 3) == 99);
    CHECK(group_is(m, 0, "a") && group_is(m, 2, "c"));
    CHECK_OK(ydb_mappings_section_for_group(m, "b", &section));
    CHECK(section == 1);
    CHECK_RC(ydb_mappings_section_for_group(m, "zzz", &section), YDB_NOTFOUND);
    CHECK(section == 0);
    CHECK_OK(ydb_mappings_number_of_items_in_group(m, "b", &n));
    CHECK(n == 3);
    CHECK_OK(ydb_mappings_number_of_items_in_all_groups(m, &n));
    CHECK(n == 8);
    CHECK_OK(ydb_mappings_is_empty(m, &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_mappings_group_and_index_for_row(m, 2, 1, &group, &index));
    CHECK(strcmp(group, "b") == 0 && index == 2);
    CHECK_RC(ydb_mappings_group_and_index_for_row(m, 3, 1, &group, &index), YDB_NOTFOUND);
    CHECK(group == NULL && index == 0);
    CHECK(index_for(m, 4, 0) == 4);
    CHECK_OK(ydb_mappings_index_for_row_in_group(m, 1, "b", &index));
    CHECK(index == 1);
    CHECK_OK(ydb_mappings_row_and_section_for_index(m, 2, "b", &section, &row));
    CHECK(section == 1 && row == 2);
    CHECK_RC(ydb_mappings_row_and_section_for_index(m, 3, "b", &section, &row), YDB_NOTFOUND);
    CHECK_OK(ydb_mappings_row_for_index(m, 4, "a", &row));
    CHECK(row == 4);
    CHECK_OK(ydb_mappings_enumerate_all_groups(m, collect, names));
    CHECK(strcmp(names, "a;b;c;") == 0);
    names[0] = '\0';
    CHECK_OK(ydb_mappings_enumerate_visible_groups(m, collect, names));
    CHECK(strcmp(names, "a;b;c;") == 0);
    CHECK_OK(ydb_mappings_has_dynamic_groups(m, &flag));
    CHECK(flag == 0);
    {
        size_t from_beginning, from_end, length;
        CHECK_OK(ydb_mappings_range_position(m, "a", &from_beginning, &from_end, &length));
        CHECK(from_beginning == 0 && from_end == 0 && length == 5);
        CHECK_RC(ydb_mappings_range_position(m, "zzz", &from_beginning, &from_end, &length), YDB_NOTFOUND);
    }
    CHECK_OK(ydb_mappings_nearest_index_path(m, 9, "b", &section, &row));
    CHECK(section == 1 && row == 2);
    CHECK_OK(ydb_mappings_nearest_index_path(m, 0, "c", &section, &row));
    CHECK(section == 1 && row == 2); /* c shows nothing: last row of b */

    /* Dynamic sections: c disappears; all-groups then per-group. */
    CHECK_OK(ydb_mappings_set_dynamic_section(m, "c", 1));
    CHECK(sections(m) == 2);
    CHECK_OK(ydb_mappings_is_dynamic_section(m, "c", &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_mappings_set_dynamic_section_for_all_groups(m, 0));
    CHECK(sections(m) == 3); /* forgets the per-group setting */
    CHECK_OK(ydb_mappings_set_dynamic_section_for_all_groups(m, 1));
    CHECK_OK(ydb_mappings_is_dynamic_section_for_all_groups(m, &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_mappings_set_dynamic_section(m, "c", 0));
    CHECK(sections(m) == 3);
    CHECK_OK(ydb_mappings_set_dynamic_section(m, "c", 1));
    CHECK(sections(m) == 2);

    /* Successive updates. */
    CHECK_OK(set_row(f.writer, "c", "c0", "c:0"));
    update(&f, m);
    CHECK(sections(m) == 3 && items(m, 2) == 1);
    CHECK_OK(ydb_mappings_snapshot_of_last_update(m, &snapshot));
    CHECK(snapshot == before + 1);

    /* Rows by index path. */
    {
        ydb_txn *txn;
        char *collection = NULL, *key = NULL;
        void *data = NULL;
        size_t size = 0;
        REQUIRE_OK(ydb_txn_begin_read(f.reader, &txn));
        CHECK_OK(ydb_view_key_at_index_path(txn, m, 1, 2, &collection, &key));
        CHECK(strcmp(collection, "c") == 0 && strcmp(key, "b2") == 0);
        ydb_free(collection);
        ydb_free(key);
        CHECK_RC(ydb_view_key_at_index_path(txn, m, 1, 3, &collection, &key), YDB_NOTFOUND);
        CHECK(collection == NULL && key == NULL);
        CHECK_OK(ydb_view_object_at_index_path(txn, m, 0, 1, &data, &size));
        CHECK(size == 3 && memcmp(data, "a:1", 3) == 0);
        ydb_free(data);
        CHECK_RC(ydb_view_metadata_at_index_path(txn, m, 0, 1, &data, &size), YDB_NOTFOUND);
        CHECK_OK(ydb_view_index_path_for_key(txn, m, "c", "c0", &section, &row));
        CHECK(section == 2 && row == 0);
        CHECK_RC(ydb_view_index_path_for_key(txn, m, "c", "nope", &section, &row), YDB_NOTFOUND);
        ydb_txn_end(txn);
    }

    ydb_mappings_free(m);
    ydb_mappings_free(NULL);
    CHECK_RC(ydb_mappings_number_of_sections(m, &n), YDB_MISUSE); /* freed */
    teardown(&f);
}

/* ---- ranges, reverse, consolidation, dependencies ---- */

static void test_configuration(void) {
    fixture f;
    ydb_mappings *m = NULL;
    const char *groups[] = {"a", "b"};
    ydb_range_options options = YDB_RANGE_OPTIONS_INIT;
    size_t from_beginning, from_end, length, n;
    int flag = -1, offsets[4];
    const int wanted[] = {-1, 1, 0};
    const char *name = NULL;

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 2, &m));
    update(&f, m);

    /* Fixed range from the beginning with an offset: rows 1..2 of a. */
    CHECK_OK(ydb_mappings_set_range_fixed(m, "a", 2, 1, YDB_PIN_BEGINNING));
    CHECK(items(m, 0) == 2);
    CHECK(index_for(m, 0, 0) == 1 && index_for(m, 1, 0) == 2);
    CHECK_OK(ydb_mappings_range_position(m, "a", &from_beginning, &from_end, &length));
    CHECK(from_beginning == 1 && from_end == 2 && length == 2);
    CHECK_OK(ydb_mappings_range_options(m, "a", &options));
    CHECK(options.kind == YDB_RANGE_FIXED && options.length == 2 && options.offset == 1 &&
          options.pin == YDB_PIN_BEGINNING && options.max_length == 2);

    /* From the end: rows 2..3 (offset 1 from the last). */
    CHECK_OK(ydb_mappings_set_range_fixed(m, "a", 2, 1, YDB_PIN_END));
    CHECK(index_for(m, 0, 0) == 2 && index_for(m, 1, 0) == 3);
    CHECK_OK(ydb_mappings_range_position(m, "a", &from_beginning, &from_end, &length));
    CHECK(from_beginning == 2 && from_end == 1 && length == 2);
    CHECK_OK(ydb_mappings_row_for_index(m, 3, "a", &n));
    CHECK(n == 1);
    CHECK_RC(ydb_mappings_row_for_index(m, 0, "a", &n), YDB_NOTFOUND);

    /* Flexible with max/min, read back. */
    CHECK_OK(ydb_mappings_set_range_flexible(m, "b", 2, 0, YDB_PIN_END, 3, 1, YDB_GROW_BOTH_SIDES));
    CHECK(items(m, 1) == 2);
    CHECK(index_for(m, 0, 1) == 1);
    CHECK_OK(ydb_mappings_range_options(m, "b", &options));
    CHECK(options.kind == YDB_RANGE_FLEXIBLE && options.max_length == 3 && options.min_length == 1 &&
          options.grow == YDB_GROW_BOTH_SIDES && options.pin == YDB_PIN_END);
    CHECK_OK(ydb_mappings_set_range_flexible(m, "b", 2, 0, YDB_PIN_BEGINNING, 0, 0, YDB_GROW_PIN_SIDE));
    CHECK_OK(ydb_mappings_range_options(m, "b", &options));
    CHECK(options.max_length == 0); /* no limit */
    CHECK_OK(ydb_mappings_remove_range_options(m, "b"));
    CHECK_RC(ydb_mappings_range_options(m, "b", &options), YDB_NOTFOUND);
    CHECK(options.kind == 0 && options.length == 0);
    CHECK(items(m, 1) == 3);

    /* Bad ranges change nothing. */
    CHECK_RC(ydb_mappings_set_range_fixed(m, "b", 0, 0, YDB_PIN_BEGINNING), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_fixed(m, "b", -3, 0, YDB_PIN_BEGINNING), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_fixed(m, "b", 2, -1, YDB_PIN_BEGINNING), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_fixed(m, "b", 2, 0, 7), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_flexible(m, "b", 2, 0, YDB_PIN_END, 2, 3, YDB_GROW_PIN_SIDE),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_flexible(m, "b", 2, 0, YDB_PIN_END, -1, 0, YDB_GROW_PIN_SIDE),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_flexible(m, "b", 2, 0, YDB_PIN_END, 0, -1, YDB_GROW_PIN_SIDE),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_flexible(m, "b", 2, 0, YDB_PIN_END, 0, 0, 9), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_range_options(m, "b", &options), YDB_NOTFOUND);
    CHECK_RC(ydb_mappings_range_options(m, "b", NULL), YDB_MISUSE);

    /* Reverse: b bottom-up. */
    CHECK_OK(ydb_mappings_set_reversed(m, "b", 1));
    CHECK_OK(ydb_mappings_is_reversed(m, "b", &flag));
    CHECK(flag == 1);
    CHECK(index_for(m, 0, 1) == 2 && index_for(m, 2, 1) == 0);
    CHECK_OK(ydb_mappings_set_reversed(m, "b", 0));
    CHECK(index_for(m, 0, 1) == 0);

    /* Dependencies. */
    CHECK_OK(ydb_mappings_set_cell_drawing_dependency_offsets(m, "a", wanted, 3));
    CHECK_OK(ydb_mappings_cell_drawing_dependency_offsets(m, "a", offsets, 4, &n));
    CHECK(n == 2 && offsets[0] == -1 && offsets[1] == 1);
    CHECK_OK(ydb_mappings_cell_drawing_dependency_offsets(m, "a", NULL, 0, &n));
    CHECK(n == 2);
    CHECK_OK(ydb_mappings_cell_drawing_dependency_offsets(m, "a", offsets, 1, &n));
    CHECK(n == 2 && offsets[0] == -1);
    CHECK_RC(ydb_mappings_cell_drawing_dependency_offsets(m, "a", NULL, 3, &n), YDB_MISUSE);
    CHECK_RC(ydb_mappings_set_cell_drawing_dependency_offsets(m, "a", NULL, 2), YDB_INVALID_ARGUMENT);
    CHECK_OK(ydb_mappings_set_cell_drawing_dependency_offsets(m, "a", NULL, 0));
    CHECK_OK(ydb_mappings_cell_drawing_dependency_offsets(m, "a", offsets, 4, &n));
    CHECK(n == 0);

    /* Consolidation: 2 + 3 rows < 10 -> one section named "all". */
    CHECK_RC(ydb_mappings_consolidated_group_name(m, &name), YDB_NOTFOUND);
    CHECK_OK(ydb_mappings_set_auto_consolidate_groups(m, 10, "all"));
    CHECK_OK(ydb_mappings_is_using_consolidated_group(m, &flag));
    CHECK(flag == 1);
    CHECK(sections(m) == 1 && items(m, 0) == 5);
    CHECK(group_is(m, 0, "all"));
    CHECK_OK(ydb_mappings_auto_consolidate_groups_threshold(m, &n));
    CHECK(n == 10);
    CHECK_OK(ydb_mappings_consolidated_group_name(m, &name));
    CHECK(strcmp(name, "all") == 0);
    {
        const char *group;
        size_t index;
        CHECK_OK(ydb_mappings_group_and_index_for_row(m, 2, 0, &group, &index));
        CHECK(strcmp(group, "b") == 0 && index == 0);
    }
    CHECK_OK(ydb_mappings_set_auto_consolidate_groups(m, 0, "all"));
    CHECK(sections(m) == 2);
    CHECK_RC(ydb_mappings_set_auto_consolidate_groups(m, 3, NULL), YDB_INVALID_ARGUMENT);

    ydb_mappings_free(m);
    teardown(&f);
}

/* ---- range options read back live, and set from a struct ---- */

/* Moves the reader forward and computes (and drops) the changeset. */
static void follow(fixture *f, ydb_mappings *m) {
    ydb_notification_list *skipped = NULL;
    ydb_changeset *cs = NULL;
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, &skipped));
    CHECK_OK(ydb_changeset_new(m, skipped, &cs));
    ydb_changeset_free(cs);
    ydb_notification_list_free(skipped);
}

static int position_is(ydb_mappings *m, const char *group, size_t begin, size_t end, size_t length) {
    size_t b = 99, e = 99, l = 99;
    if (ydb_mappings_range_position(m, group, &b, &e, &l) != YDB_OK) return 0;
    return b == begin && e == end && l == length;
}

static ydb_range_options range_of(ydb_mappings *m, const char *group) {
    ydb_range_options o;
    memset(&o, 0x5a, sizeof o);
    o.struct_size = sizeof o;
    CHECK_OK(ydb_mappings_range_options(m, group, &o));
    return o;
}

static size_t shown(ydb_mappings *m, const char *group) {
    size_t n = 99;
    CHECK_OK(ydb_mappings_number_of_items_in_group(m, group, &n));
    return n;
}

static void test_live_range_options(void) {
    fixture f;
    ydb_mappings *m = NULL;
    const char *groups[] = {"a", "b"};
    ydb_range_options o, saved;
    char key[8], object[8];
    int i;

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 2, &m));
    CHECK_OK(ydb_mappings_set_range_flexible(m, "a", 2, 0, YDB_PIN_END, 0, 0, YDB_GROW_PIN_SIDE));
    CHECK_OK(ydb_mappings_set_range_flexible(m, "b", 1, 1, YDB_PIN_BEGINNING, 0, 0, YDB_GROW_PIN_SIDE));
    o = range_of(m, "a"); /* before the first update: as set */
    CHECK(o.length == 2 && o.offset == 0);
    update(&f, m);

    /* a grows at its pinned end; a row before b pushes it away from its pin. */
    REQUIRE_OK(set_row(f.writer, "c", "a5", "a:5"));
    REQUIRE_OK(set_row(f.writer, "c", "a6", "a:6"));
    REQUIRE_OK(set_row(f.writer, "c", "b/", "b:/"));
    follow(&f, m);
    o = range_of(m, "a");
    CHECK(o.kind == YDB_RANGE_FLEXIBLE && o.length == 4 && o.offset == 0 && o.pin == YDB_PIN_END);
    CHECK(position_is(m, "a", 3, 0, 4));
    o = range_of(m, "b");
    CHECK(o.length == 1 && o.offset == 2 && o.pin == YDB_PIN_BEGINNING);
    CHECK(position_is(m, "b", 2, 1, 1));

    /* Set back unchanged, the window stays; then a new length and offset. */
    o = range_of(m, "a");
    CHECK_OK(ydb_mappings_set_range_options(m, "a", &o));
    CHECK(position_is(m, "a", 3, 0, 4));
    CHECK_OK(ydb_range_options_set_length(&o, 3));
    o.offset = 2;
    CHECK_OK(ydb_mappings_set_range_options(m, "a", &o));
    CHECK(position_is(m, "a", 2, 2, 3));

    /* max_length lowered after creation: the next changeset trims to it. */
    o.offset = 0;
    o.max_length = 4;
    CHECK_OK(ydb_mappings_set_range_options(m, "a", &o));
    CHECK(position_is(m, "a", 4, 0, 3));
    REQUIRE_OK(set_row(f.writer, "c", "a7", "a:7"));
    REQUIRE_OK(set_row(f.writer, "c", "a8", "a:8"));
    follow(&f, m);
    o = range_of(m, "a");
    CHECK(o.length == 4 && o.max_length == 4);
    CHECK(position_is(m, "a", 5, 0, 4));

    /* grow changed after creation: a row at the edge away from the pin joins. */
    o.max_length = 0;
    o.grow = YDB_GROW_NON_PIN_SIDE;
    CHECK_OK(ydb_mappings_set_range_options(m, "a", &o));
    REQUIRE_OK(set_row(f.writer, "c", "a45", "a:45")); /* between a:4 and a:5: the window's first row */
    follow(&f, m);
    o = range_of(m, "a");
    CHECK(o.length == 5 && o.grow == YDB_GROW_NON_PIN_SIDE && o.max_length == 0);
    CHECK(position_is(m, "a", 5, 0, 5));

    /* min_length raised after creation: rows deleted from the window are replaced. */
    o.min_length = 5;
    CHECK_OK(ydb_mappings_set_range_options(m, "a", &o));
    REQUIRE_OK(remove_row(f.writer, "c", "a6"));
    REQUIRE_OK(remove_row(f.writer, "c", "a7"));
    follow(&f, m);
    o = range_of(m, "a");
    CHECK(o.length == 5 && o.min_length == 5);
    CHECK(position_is(m, "a", 3, 0, 5));

    /* A reversed group: pin and offset in display order. */
    CHECK_OK(ydb_mappings_set_reversed(m, "b", 1));
    CHECK_OK(ydb_mappings_set_range_flexible(m, "b", 1, 1, YDB_PIN_BEGINNING, 0, 0, YDB_GROW_PIN_SIDE));
    REQUIRE_OK(set_row(f.writer, "c", "b9", "b:9")); /* above the window on screen */
    follow(&f, m);
    o = range_of(m, "b");
    CHECK(o.pin == YDB_PIN_BEGINNING && o.offset == 2 && o.length == 1);
    CHECK(position_is(m, "b", 2, 2, 1));
    CHECK_OK(ydb_mappings_set_reversed(m, "b", 0));

    /* A fixed range reads back its clipped length; max_length is its length as set. */
    CHECK_OK(ydb_mappings_set_range_fixed(m, "b", 10, 0, YDB_PIN_BEGINNING));
    o = range_of(m, "b");
    CHECK(o.kind == YDB_RANGE_FIXED && o.length == 5 && o.max_length == 10 && o.offset == 0);
    CHECK(o.min_length == 0 && o.grow == YDB_GROW_PIN_SIDE && o.pin == YDB_PIN_BEGINNING);
    CHECK_OK(ydb_mappings_set_range_options(m, "b", &o));
    for (i = 3; i < 9; i++) {
        sprintf(key, "b%d", i);
        sprintf(object, "b:%d", i);
        REQUIRE_OK(set_row(f.writer, "c", key, object));
    }
    follow(&f, m);
    CHECK(shown(m, "b") == 10);
    o = range_of(m, "b");
    CHECK(o.length == 10 && o.max_length == 10);

    /* Bad structs change nothing. */
    saved = o;
    o.length = 11; /* above its length as set */
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o = saved;
    o.min_length = 1;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o = saved;
    o.grow = YDB_GROW_BOTH_SIDES;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o = saved;
    o.kind = 7;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o = saved;
    o.offset = -1;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o = saved;
    o.pin = 5;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o = saved;
    o.max_length = -2;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_range_options(m, "b", NULL), YDB_INVALID_ARGUMENT);
    o = saved;
    o.kind = YDB_RANGE_FLEXIBLE;
    o.max_length = 0;
    o.length = -1;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    o.length = 3;
    o.max_length = 2;
    o.min_length = 3;
    CHECK_RC(ydb_mappings_set_range_options(m, "b", &o), YDB_INVALID_ARGUMENT);
    CHECK(shown(m, "b") == 10);
    o = range_of(m, "b");
    CHECK(o.kind == YDB_RANGE_FIXED && o.max_length == 10);

    /* A flexible range may be set with length 0: an empty window at its offset. */
    o.kind = YDB_RANGE_FLEXIBLE;
    o.max_length = 0;
    o.length = 0;
    o.offset = 4;
    CHECK_OK(ydb_mappings_set_range_options(m, "b", &o));
    CHECK(shown(m, "b") == 0);
    CHECK(position_is(m, "b", 4, 7, 0));

    /* ydb_range_options_set_length: a fixed range's length as set changes too. */
    o = saved;
    CHECK_RC(ydb_range_options_set_length(&o, 0), YDB_INVALID_ARGUMENT);
    CHECK(o.length == 10 && o.max_length == 10);
    CHECK_OK(ydb_range_options_set_length(&o, 2));
    CHECK(o.length == 2 && o.max_length == 2);
    CHECK_OK(ydb_mappings_set_range_options(m, "b", &o));
    CHECK(shown(m, "b") == 2);
    o.kind = YDB_RANGE_FLEXIBLE;
    o.max_length = 0;
    CHECK_OK(ydb_range_options_set_length(&o, 0));
    CHECK(o.length == 0 && o.max_length == 0);
    CHECK_RC(ydb_range_options_set_length(&o, -1), YDB_INVALID_ARGUMENT);
    o.kind = 0;
    CHECK_RC(ydb_range_options_set_length(&o, 3), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_range_options_set_length(NULL, 3), YDB_INVALID_ARGUMENT);

    ydb_mappings_free(m);
    teardown(&f);
}

/* rowForIndex:inGroup: is the table row; the window's own row is separate. */
static void test_row_for_index(void) {
    fixture f;
    ydb_mappings *m = NULL;
    const char *groups[] = {"a", "b"};
    size_t row = 99, section = 99;

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 2, &m));
    CHECK_OK(ydb_mappings_set_auto_consolidate_groups(m, 100, "all"));
    CHECK_OK(ydb_mappings_set_range_fixed(m, "b", 2, 1, YDB_PIN_BEGINNING));
    update(&f, m);

    /* Consolidated: b shows its indexes 1 and 2 after a's five rows. */
    CHECK_OK(ydb_mappings_row_for_index(m, 2, "b", &row));
    CHECK(row == 6);
    CHECK_OK(ydb_mappings_row_and_section_for_index(m, 2, "b", &section, &row));
    CHECK(section == 0 && row == 6);
    CHECK_OK(ydb_mappings_window_row_for_index(m, 2, "b", &row));
    CHECK(row == 1);
    CHECK_OK(ydb_mappings_row_for_index(m, 4, "a", &row));
    CHECK(row == 4);
    CHECK_RC(ydb_mappings_row_for_index(m, 0, "b", &row), YDB_NOTFOUND); /* outside the range */
    CHECK(row == 0);
    CHECK_RC(ydb_mappings_window_row_for_index(m, 0, "b", &row), YDB_NOTFOUND);
    CHECK_RC(ydb_mappings_row_for_index(m, 0, "all", &row), YDB_NOTFOUND);

    /* Not consolidated: the table row is the window's row. */
    CHECK_OK(ydb_mappings_set_auto_consolidate_groups(m, 0, "all"));
    CHECK_OK(ydb_mappings_row_for_index(m, 2, "b", &row));
    CHECK(row == 1);
    CHECK_OK(ydb_mappings_window_row_for_index(m, 2, "b", &row));
    CHECK(row == 1);

    ydb_mappings_free(m);
    teardown(&f);
}

/* ---- dynamic groups ---- */

typedef struct {
    int destroyed;
    int filter_calls;
    ydb_mappings *self;      /* when set, the filter calls back into it */
    int reentry_status;
} dynamic_ctx;

static void dynamic_destroy(void *ctx) { ((dynamic_ctx *)ctx)->destroyed++; }

static int not_c(void *ctx, ydb_txn *txn, const char *group) {
    (void)txn;
    dynamic_ctx *d = (dynamic_ctx *)ctx;
    d->filter_calls++;
    if (d->self != NULL) {
        size_t n;
        d->reentry_status = ydb_mappings_number_of_sections(d->self, &n);
    }
    return strcmp(group, "c") != 0;
}

static int descending(void *ctx, ydb_txn *txn, const char *a, const char *b) {
    (void)ctx; (void)txn;
    return -strcmp(a, b);
}

static void test_dynamic_groups(void) {
    fixture f;
    ydb_mappings *m = NULL;
    dynamic_ctx d = {0, 0, NULL, 0}, failed = {0, 0, NULL, 0};
    char names[64] = "";
    int flag = 0;

    setup(&f);
    CHECK_OK(set_row(f.writer, "c", "c0", "c:0"));
    CHECK_OK(set_row(f.writer, "c", "d0", "d:0"));
    CHECK_OK(ydb_mappings_new_dynamic(V, not_c, descending, &d, dynamic_destroy, &m));
    CHECK_OK(ydb_mappings_has_dynamic_groups(m, &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_mappings_enumerate_all_groups(m, collect, names));
    CHECK(strcmp(names, "") == 0); /* none before the first update */
    update(&f, m);
    CHECK(d.filter_calls >= 4);
    CHECK_OK(ydb_mappings_enumerate_all_groups(m, collect, names));
    CHECK(strcmp(names, "d;b;a;") == 0);
    CHECK(sections(m) == 3 && group_is(m, 0, "d") && items(m, 2) == 5);

    /* A new group appears at the next update. */
    CHECK_OK(set_row(f.writer, "c", "e0", "e:0"));
    update(&f, m);
    CHECK(sections(m) == 4 && group_is(m, 0, "e"));

    /* The filter calling back into its own mappings is refused. */
    d.self = m;
    update(&f, m);
    CHECK(d.reentry_status == YDB_MISUSE);
    d.self = NULL;

    CHECK(d.destroyed == 0);
    ydb_mappings_free(m);
    CHECK(d.destroyed == 1);

    /* Creation failures run the destructor once. */
    CHECK_RC(ydb_mappings_new_dynamic(V, NULL, descending, &failed, dynamic_destroy, &m),
             YDB_INVALID_ARGUMENT);
    CHECK(failed.destroyed == 1 && m == NULL);
    CHECK_RC(ydb_mappings_new_dynamic(V, not_c, descending, &failed, dynamic_destroy, NULL), YDB_MISUSE);
    CHECK(failed.destroyed == 2);
    teardown(&f);
}

/* ---- bad input ---- */

static void test_bad_input(void) {
    fixture f;
    ydb_mappings *m = NULL;
    const char *groups[] = {"a"};
    const char *bad_groups[] = {"a", NULL};
    size_t n;

    setup(&f);
    CHECK_RC(ydb_mappings_new(NULL, groups, 1, &m), YDB_INVALID_ARGUMENT);
    CHECK(m == NULL);
    CHECK_RC(ydb_mappings_new(V, NULL, 1, &m), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_new(V, bad_groups, 2, &m), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_new(V, groups, 1, NULL), YDB_MISUSE);
    CHECK_OK(ydb_mappings_new(V, NULL, 0, &m)); /* no groups: valid, empty */
    update(&f, m);
    CHECK(sections(m) == 0);
    ydb_mappings_free(m);

    CHECK_OK(ydb_mappings_new("no such view", groups, 1, &m));
    {
        /* An unknown view is an error naming it (a typo is not an empty
        ** table), unless the mappings allow it: then it reads as empty. */
        ydb_txn *txn;
        int allows = -1;
        uint64_t snapshot = 0;
        REQUIRE_OK(ydb_txn_begin_read(f.reader, &txn));
        CHECK_RC(ydb_mappings_update(m, txn), YDB_NOTFOUND);
        CHECK(strstr(ydb_errmsg(), "'no such view'") != NULL);
        CHECK_RC(ydb_mappings_snapshot_of_last_update(m, &snapshot), YDB_NOTFOUND);   /* left as it was */
        CHECK_OK(ydb_mappings_allows_unregistered_view(m, &allows));
        CHECK(allows == 0);
        CHECK_OK(ydb_mappings_set_allows_unregistered_view(m, 1));
        CHECK_OK(ydb_mappings_allows_unregistered_view(m, &allows));
        CHECK(allows == 1);
        CHECK_OK(ydb_mappings_update(m, txn));
        ydb_txn_end(txn);
    }
    CHECK(sections(m) == 1 && items(m, 0) == 0);
    CHECK_RC(ydb_mappings_number_of_sections(NULL, &n), YDB_MISUSE);
    CHECK_RC(ydb_mappings_number_of_sections(m, NULL), YDB_MISUSE);
    CHECK_RC(ydb_mappings_update(m, NULL), YDB_MISUSE);
    CHECK_RC(ydb_mappings_update((ydb_mappings *)f.db, NULL), YDB_MISUSE);
    CHECK_RC(ydb_mappings_number_of_items_in_section(m, (size_t)-1, &n), YDB_NOTFOUND);
    CHECK_RC(ydb_mappings_set_reversed(m, NULL, 1), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_mappings_set_dynamic_section(m, "\xc3\x28", 1), YDB_INVALID_ARGUMENT);
    ydb_mappings_free(m);
    ydb_mappings_free(m); /* stale: refused, not a crash */
    CHECK(ydb_errcode() == YDB_MISUSE);
    teardown(&f);
}

/* ---- two threads on one mappings ---- */

typedef struct {
    ydb_mappings *m;
    int errors;
} thread_arg;

static void *hammer(void *p) {
    thread_arg *arg = (thread_arg *)p;
    int i;
    for (i = 0; i < 2000; i++) {
        size_t n, index;
        const char *group;
        if (ydb_mappings_number_of_sections(arg->m, &n) != YDB_OK) arg->errors++;
        (void)ydb_mappings_group_and_index_for_row(arg->m, (size_t)(i % 4), 0, &group, &index);
        if (i % 2) {
            if (ydb_mappings_set_range_fixed(arg->m, "a", 1 + i % 5, i % 3, i % 2) != YDB_OK) arg->errors++;
        } else if (ydb_mappings_set_reversed(arg->m, "a", i % 4 == 0) != YDB_OK) {
            arg->errors++;
        }
    }
    return NULL;
}

static void test_threads(void) {
    fixture f;
    ydb_mappings *m = NULL;
    const char *groups[] = {"a", "b"};
    pthread_t threads[2];
    thread_arg args[2];
    int i;

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 2, &m));
    update(&f, m);
    for (i = 0; i < 2; i++) {
        args[i].m = m;
        args[i].errors = 0;
        CHECK(pthread_create(&threads[i], NULL, hammer, &args[i]) == 0);
    }
    for (i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
        CHECK(args[i].errors == 0);
    }
    CHECK(sections(m) == 2);
    ydb_mappings_free(m);
    teardown(&f);
}

/* ---- ydb_range_options.struct_size: 0 or less than the first version's
** is refused by every function taking one; an output is left untouched ---- */
static void test_range_options_struct_size(void) {
    ydb_mappings *m = NULL;
    const char *groups[] = {"a"};
    ydb_range_options o = YDB_RANGE_OPTIONS_INIT, back = YDB_RANGE_OPTIONS_INIT;

    CHECK(o.struct_size == sizeof o);
    REQUIRE_OK(ydb_mappings_new(V, groups, 1, &m));
    CHECK_OK(ydb_mappings_set_range_fixed(m, "a", 3, 1, YDB_PIN_BEGINNING));
    memset(&o, 0, sizeof o);
    o.kind = 77;
    CHECK_RC(ydb_mappings_range_options(m, "a", &o), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "ydb_range_options.struct_size is 0: initialise it with "
                               "YDB_RANGE_OPTIONS_INIT") != NULL);
    CHECK(o.kind == 77);
    o.struct_size = sizeof o - sizeof(int64_t);
    CHECK_RC(ydb_mappings_range_options(m, "a", &o), YDB_INVALID_ARGUMENT);
    CHECK(o.kind == 77);
    o.struct_size = sizeof o;
    CHECK_OK(ydb_mappings_range_options(m, "a", &o));
    CHECK(o.struct_size == sizeof o && o.kind == YDB_RANGE_FIXED && o.length == 3 && o.offset == 1);

    o.struct_size = 0;
    CHECK_RC(ydb_range_options_set_length(&o, 2), YDB_INVALID_ARGUMENT);
    CHECK(o.length == 3);
    CHECK_RC(ydb_mappings_set_range_options(m, "a", &o), YDB_INVALID_ARGUMENT);
    o.struct_size = sizeof o;
    CHECK_OK(ydb_range_options_set_length(&o, 2));
    CHECK(o.struct_size == sizeof o && o.length == 2 && o.max_length == 2);
    CHECK_OK(ydb_mappings_set_range_options(m, "a", &o));
    CHECK_OK(ydb_mappings_range_options(m, "a", &back));
    CHECK(back.kind == YDB_RANGE_FIXED && back.max_length == 2 && back.offset == 1);
    ydb_mappings_free(m);
}

int main(void) {
    test_static_getters();
    test_configuration();
    test_live_range_options();
    test_range_options_struct_size();
    test_row_for_index();
    test_dynamic_groups();
    test_bad_input();
    test_threads();
    return check_summary();
}
