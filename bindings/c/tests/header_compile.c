/*
** header_compile.c / .cpp -- include/ydbview.h must compile cleanly as C99 (and,
** through header_compile.cpp, as C++) with -Wall -Wextra -Werror -pedantic.
** Compiled only, never run.
*/
#include "ydbview.h"
#include "ydbview.h" /* include guard */

int header_compile_check(void);

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
    (void)&ydb_notification_list_count;
    (void)&ydb_notification_list_get;
    (void)&ydb_notification_list_has_change;
    (void)&ydb_notification_list_has_change_in_collection;
    return YDB_OK + YDB_ERROR + YDB_MISUSE + YDB_INVALID_ARGUMENT +
           YDB_NOTFOUND + YDB_CLOSED + YDB_BUSY + YDB_SQLITE +
           YDB_CALLBACK_FAILED + YDB_MISMATCH + YDB_CORRUPT +
           (YDB_ROW_OBJECT_CHANGED | YDB_ROW_METADATA_CHANGED |
            YDB_ROW_OBJECT_TOUCHED | YDB_ROW_METADATA_TOUCHED |
            YDB_ROW_REMOVED) +
           YDBVIEW_VERSION_NUMBER + (int)YDBVIEW_VERSION[0];
}
