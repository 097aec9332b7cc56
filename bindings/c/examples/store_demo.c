/*
** store_demo.c -- a tour of the ydbview store from C: write and read rows,
** watch commits with an observer, and let a long-lived read transaction
** stay on its snapshot and then catch up.
**
**   cc store_demo.c $(pkg-config --cflags --libs ydbview) -o store_demo
**   ./store_demo [database-file]      (no argument: a temporary database)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ydbview.h"

/* Stops the demo with the library's message when a call fails. */
#define TRY(call)                                                          \
    do {                                                                   \
        int rc_ = (call);                                                  \
        if (rc_ != YDB_OK) {                                               \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, ydb_errmsg(),   \
                    ydb_errstr(rc_));                                      \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

static int print_change(void *ctx, const char *collection, const char *key,
                        unsigned int flags) {
    (void)ctx;
    printf("    %s/%s:%s%s%s%s%s\n", collection, key,
           flags & YDB_ROW_OBJECT_CHANGED ? " object" : "",
           flags & YDB_ROW_METADATA_CHANGED ? " metadata" : "",
           flags & YDB_ROW_OBJECT_TOUCHED ? " object-touched" : "",
           flags & YDB_ROW_METADATA_TOUCHED ? " metadata-touched" : "",
           flags & YDB_ROW_REMOVED ? " removed" : "");
    return 0;
}

static void print_notification(const ydb_notification *notification) {
    uint64_t snapshot = 0;
    TRY(ydb_notification_snapshot(notification, &snapshot));
    printf("  commit -> snapshot %llu\n", (unsigned long long)snapshot);
    TRY(ydb_notification_enumerate_changed_rows(notification, print_change,
                                                NULL));
}

static void on_commit(void *ctx, const ydb_notification *notification) {
    (void)ctx;
    printf("observer:\n");
    print_notification(notification);
}

static void set_book(ydb_txn *txn, const char *key, const char *title,
                     const char *genre) {
    TRY(ydb_txn_set_object(txn, "books", key, title, strlen(title), genre,
                           strlen(genre)));
}

static int print_row(void *ctx, const char *key, const void *object,
                     size_t object_size, const void *metadata,
                     size_t metadata_size) {
    (void)ctx;
    printf("  %-4s %-28.*s [%.*s]\n", key, (int)object_size,
           (const char *)object, (int)metadata_size,
           metadata ? (const char *)metadata : "");
    return 0;
}

static void list_books(ydb_connection *conn, const char *label) {
    ydb_txn *txn = NULL;
    uint64_t snapshot = 0;
    size_t count = 0;
    TRY(ydb_txn_begin_read(conn, &txn));
    TRY(ydb_txn_snapshot(txn, &snapshot));
    TRY(ydb_txn_count(txn, "books", &count));
    printf("%s (snapshot %llu, %zu books):\n", label,
           (unsigned long long)snapshot, count);
    TRY(ydb_txn_enumerate_rows(txn, "books", print_row, NULL));
    TRY(ydb_txn_end(txn));
}

int main(int argc, char **argv) {
    ydb_database *db = NULL;
    ydb_connection *writer = NULL, *ui = NULL;
    ydb_txn *txn = NULL;
    ydb_notification_list *skipped = NULL;
    uint64_t token = 0;
    size_t count = 0, i;
    const char *path = NULL;

    printf("ydbview %s\n", ydb_libversion());
    TRY(ydb_database_open(argc > 1 ? argv[1] : NULL, &db));
    TRY(ydb_database_path(db, &path));
    printf("database: %s\n", path);
    TRY(ydb_connection_open(db, &writer));
    TRY(ydb_connection_open(db, &ui));
    TRY(ydb_database_add_commit_observer(db, on_commit, NULL, NULL, &token));

    /* 1. Write and read rows. */
    TRY(ydb_txn_begin_read_write(writer, &txn));
    set_book(txn, "b1", "Dune", "sci-fi");
    set_book(txn, "b2", "The Hobbit", "fantasy");
    set_book(txn, "b3", "Dracula", "horror");
    TRY(ydb_txn_commit(txn));
    list_books(writer, "after the first commit");

    /* 2. The UI connection freezes on this snapshot. */
    TRY(ydb_connection_begin_long_lived_read(ui, NULL));

    /* 3. Two more commits while the UI is frozen. */
    TRY(ydb_txn_begin_read_write(writer, &txn));
    set_book(txn, "b4", "Neuromancer", "sci-fi");
    TRY(ydb_txn_replace_object(txn, "books", "b1", "Dune Messiah", 12));
    TRY(ydb_txn_commit(txn));
    TRY(ydb_txn_begin_read_write(writer, &txn));
    TRY(ydb_txn_remove_object(txn, "books", "b3"));
    TRY(ydb_txn_touch_metadata(txn, "books", "b2"));
    TRY(ydb_txn_commit(txn));

    list_books(ui, "the frozen UI still sees");

    /* 4. The UI catches up and learns exactly what it skipped. */
    TRY(ydb_connection_begin_long_lived_read(ui, &skipped));
    TRY(ydb_notification_list_count(skipped, &count));
    printf("the UI catches up over %zu commits:\n", count);
    for (i = 0; i < count; i++) {
        const ydb_notification *notification = NULL;
        TRY(ydb_notification_list_get(skipped, i, &notification));
        print_notification(notification);
    }
    {
        int changed = 0;
        TRY(ydb_notification_list_has_change(skipped, "books", "b3", &changed));
        printf("did b3 change? %s\n", changed ? "yes" : "no");
    }
    ydb_notification_list_free(skipped);
    list_books(ui, "the UI now sees");

    TRY(ydb_database_remove_commit_observer(db, token));
    TRY(ydb_connection_close(ui));
    TRY(ydb_connection_close(writer));
    TRY(ydb_database_close(db));
    return 0;
}
