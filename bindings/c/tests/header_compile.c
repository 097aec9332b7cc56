/*
** header_compile.c / .cpp -- include/ydbview.h must compile cleanly as C99 (and,
** through header_compile.cpp, as C++) with -Wall -Wextra -Werror -pedantic.
** Compiled only, never run.
*/
#include "ydbview.h"
#include "ydbview.h" /* include guard */

int header_compile_check(void);

/* The definition initializer and the row struct compile as C and C++. */
static int header_definition_check(void) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    ydb_view_row row = {NULL, NULL, NULL, 0, NULL, 0};
    ydb_range_options range = YDB_RANGE_OPTIONS_INIT;
    ydb_fts_index_definition fts = YDB_FTS_INDEX_DEFINITION_INIT;
    ydb_filter_definition filter = YDB_FILTER_DEFINITION_INIT;
    return def.persistent + (int)row.object_size + range.kind + (int)YDB_VIEW_DEFINITION_MIN_SIZE +
           fts.extract_flavour + (int)YDB_FTS_INDEX_DEFINITION_MIN_SIZE + filter.persistent;
}

/* Referencing every function makes the compiler check each declaration. */
int header_compile_check(void) {
    (void)&ydb_libversion;
    (void)&ydb_libversion_number;
    (void)&ydb_errcode;
    (void)&ydb_errmsg;
    (void)&ydb_errstr;
    (void)&ydb_free;
    (void)&ydb_database_open;
    (void)&ydb_database_close;
    (void)&ydb_database_path;
    (void)&ydb_database_snapshot;
    (void)&ydb_database_add_commit_observer;
    (void)&ydb_database_remove_commit_observer;
    (void)&ydb_connection_open;
    (void)&ydb_connection_close;
    (void)&ydb_connection_snapshot;
    (void)&ydb_connection_begin_long_lived_read;
    (void)&ydb_connection_end_long_lived_read;
    (void)&ydb_connection_is_in_long_lived_read;
    (void)&ydb_txn_begin_read;
    (void)&ydb_txn_begin_read_write;
    (void)&ydb_txn_commit;
    (void)&ydb_txn_rollback;
    (void)&ydb_txn_end;
    (void)&ydb_txn_snapshot;
    (void)&ydb_txn_is_read_write;
    (void)&ydb_txn_get_object;
    (void)&ydb_txn_get_metadata;
    (void)&ydb_txn_get_row;
    (void)&ydb_txn_get_row_hinted;
    (void)&ydb_txn_exists;
    (void)&ydb_txn_count;
    (void)&ydb_txn_count_all;
    (void)&ydb_txn_enumerate_collections;
    (void)&ydb_txn_enumerate_keys;
    (void)&ydb_txn_enumerate_rows;
    (void)&ydb_txn_set_object;
    (void)&ydb_txn_replace_object;
    (void)&ydb_txn_replace_metadata;
    (void)&ydb_txn_touch_object;
    (void)&ydb_txn_touch_metadata;
    (void)&ydb_txn_touch_row;
    (void)&ydb_txn_remove_object;
    (void)&ydb_txn_remove_objects;
    (void)&ydb_txn_remove_all_objects;
    (void)&ydb_txn_remove_all_objects_in_all_collections;
    (void)&ydb_notification_copy;
    (void)&ydb_notification_free;
    (void)&ydb_notification_snapshot;
    (void)&ydb_notification_removed_all;
    (void)&ydb_notification_has_change;
    (void)&ydb_notification_has_change_in_collection;
    (void)&ydb_notification_changed_row_count;
    (void)&ydb_notification_enumerate_changed_rows;
    (void)&ydb_notification_enumerate_removed_collections;
    (void)&ydb_notification_list_free;
    (void)&ydb_notification_list_new;
    (void)&ydb_notification_list_count;
    (void)&ydb_notification_list_get;
    (void)&ydb_notification_list_has_change;
    (void)&ydb_notification_list_has_change_in_collection;
    (void)&ydb_group_result_set;
    (void)&ydb_view_definition_init;
    (void)&ydb_view_register;
    (void)&ydb_view_unregister;
    (void)&ydb_view_enumerate_registered;
    (void)&ydb_view_set_definition;
    (void)&ydb_filtered_view_register;
    (void)&ydb_view_set_filter;
    (void)&ydb_txn_touch_rows;
    (void)&ydb_txn_touch_group;
    (void)&ydb_view_is_registered;
    (void)&ydb_view_version_tag;
    (void)&ydb_view_group_count;
    (void)&ydb_view_enumerate_groups;
    (void)&ydb_view_has_group;
    (void)&ydb_view_count_in_group;
    (void)&ydb_view_count_all;
    (void)&ydb_view_is_empty;
    (void)&ydb_view_key_at;
    (void)&ydb_view_first_key;
    (void)&ydb_view_last_key;
    (void)&ydb_view_object_at;
    (void)&ydb_view_metadata_at;
    (void)&ydb_view_row_at;
    (void)&ydb_view_position;
    (void)&ydb_view_enumerate_keys;
    (void)&ydb_view_enumerate_rows;
    (void)&ydb_view_find;
    (void)&ydb_view_has_changes;
    (void)&ydb_view_has_changes_in_group;
    (void)&ydb_mappings_new;
    (void)&ydb_mappings_new_dynamic;
    (void)&ydb_mappings_free;
    (void)&ydb_mappings_view;
    (void)&ydb_mappings_has_dynamic_groups;
    (void)&ydb_mappings_enumerate_all_groups;
    (void)&ydb_mappings_enumerate_visible_groups;
    (void)&ydb_mappings_set_dynamic_section;
    (void)&ydb_mappings_is_dynamic_section;
    (void)&ydb_mappings_set_dynamic_section_for_all_groups;
    (void)&ydb_mappings_is_dynamic_section_for_all_groups;
    (void)&ydb_mappings_set_range_fixed;
    (void)&ydb_mappings_set_range_flexible;
    (void)&ydb_mappings_range_options;
    (void)&ydb_mappings_set_range_options;
    (void)&ydb_range_options_set_length;
    (void)&ydb_mappings_remove_range_options;
    (void)&ydb_mappings_set_reversed;
    (void)&ydb_mappings_is_reversed;
    (void)&ydb_mappings_set_cell_drawing_dependency_offsets;
    (void)&ydb_mappings_cell_drawing_dependency_offsets;
    (void)&ydb_mappings_set_auto_consolidate_groups;
    (void)&ydb_mappings_auto_consolidate_groups_threshold;
    (void)&ydb_mappings_consolidated_group_name;
    (void)&ydb_mappings_update;
    (void)&ydb_mappings_snapshot_of_last_update;
    (void)&ydb_mappings_number_of_sections;
    (void)&ydb_mappings_number_of_items_in_section;
    (void)&ydb_mappings_number_of_items_in_group;
    (void)&ydb_mappings_number_of_items_in_all_groups;
    (void)&ydb_mappings_is_empty;
    (void)&ydb_mappings_is_using_consolidated_group;
    (void)&ydb_mappings_group_for_section;
    (void)&ydb_mappings_section_for_group;
    (void)&ydb_mappings_group_and_index_for_row;
    (void)&ydb_mappings_index_for_row_in_section;
    (void)&ydb_mappings_index_for_row_in_group;
    (void)&ydb_mappings_row_and_section_for_index;
    (void)&ydb_mappings_row_for_index;
    (void)&ydb_mappings_window_row_for_index;
    (void)&ydb_mappings_range_position;
    (void)&ydb_mappings_nearest_index_path;
    (void)&ydb_mappings_has_changes;
    (void)&ydb_view_key_at_index_path;
    (void)&ydb_view_object_at_index_path;
    (void)&ydb_view_metadata_at_index_path;
    (void)&ydb_view_index_path_for_key;
    (void)&ydb_changeset_new;
    (void)&ydb_changeset_free;
    (void)&ydb_changeset_is_empty;
    (void)&ydb_changeset_section_change_count;
    (void)&ydb_changeset_section_change;
    (void)&ydb_changeset_row_change_count;
    (void)&ydb_changeset_row_type;
    (void)&ydb_changeset_row_index_path;
    (void)&ydb_changeset_row_new_index_path;
    (void)&ydb_changeset_row_original_position;
    (void)&ydb_changeset_row_final_position;
    (void)&ydb_changeset_row_original_group;
    (void)&ydb_changeset_row_final_group;
    (void)&ydb_changeset_row_changes;
    (void)&ydb_changeset_row_collection;
    (void)&ydb_changeset_row_key;
    (void)&ydb_changeset_row;
    (void)&ydb_fts_columns_set;
    (void)&ydb_fts_index_definition_init;
    (void)&ydb_fts_index_register;
    (void)&ydb_fts_index_unregister;
    (void)&ydb_fts_index_enumerate_registered;
    (void)&ydb_txn_search;
    (void)&ydb_txn_search_snippet;
    (void)&ydb_search_view_register;
    (void)&ydb_search_view_register_by_rank;
    (void)&ydb_search_view_set_query;
    (void)&ydb_search_view_query;
    (void)&ydb_search_view_search;
    return YDB_OK + YDB_ERROR + YDB_MISUSE + YDB_INVALID_ARGUMENT +
           YDB_NOTFOUND + YDB_CLOSED + YDB_BUSY + YDB_SQLITE +
           YDB_CALLBACK_FAILED + YDB_MISMATCH + YDB_CORRUPT +
           (YDB_ROW_OBJECT_CHANGED | YDB_ROW_METADATA_CHANGED |
            YDB_ROW_OBJECT_TOUCHED | YDB_ROW_METADATA_TOUCHED |
            YDB_ROW_REMOVED) +
           YDBVIEW_VERSION_NUMBER + (int)YDBVIEW_VERSION[0] +
           YDB_FLAVOUR_KEY + YDB_FLAVOUR_OBJECT + YDB_FLAVOUR_METADATA +
           YDB_FLAVOUR_ROW +
           (int)(YDB_INVOKE_OBJECT_MODIFIED | YDB_INVOKE_METADATA_MODIFIED |
                 YDB_INVOKE_OBJECT_TOUCHED | YDB_INVOKE_METADATA_TOUCHED |
                 YDB_INVOKE_ANY | YDB_INVOKE_DEFAULT) +
           (YDB_INDEX_END == 0) + YDB_RANGE_FIXED + YDB_RANGE_FLEXIBLE +
           YDB_PIN_BEGINNING + YDB_PIN_END + YDB_GROW_PIN_SIDE +
           YDB_GROW_NON_PIN_SIDE + YDB_GROW_BOTH_SIDES + YDB_SECTION_INSERT +
           YDB_SECTION_DELETE + YDB_CHANGE_INSERT + YDB_CHANGE_DELETE +
           YDB_CHANGE_MOVE + YDB_CHANGE_UPDATE +
           (YDB_CHANGED_OBJECT | YDB_CHANGED_METADATA |
            YDB_CHANGED_DEPENDENCY) +
           header_definition_check();
}
