/* Writes a row to a temporary database and reads it back: enough to show
   that the header and the library of ydbview::ydbview were both found. */
#include <stdio.h>
#include <string.h>
#include <ydbview.h>

int main(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    void *data;
    size_t size;
    int ok;

    if (ydb_database_open(NULL, &db) != YDB_OK) {   /* NULL: a temporary database */
        fprintf(stderr, "open: %s\n", ydb_errmsg());
        return 1;
    }
    if (ydb_connection_open(db, &conn) != YDB_OK ||
        ydb_txn_begin_read_write(conn, &txn) != YDB_OK ||
        ydb_txn_set_object(txn, "books", "b1", "Dune", 4, NULL, 0) != YDB_OK ||
        ydb_txn_commit(txn) != YDB_OK ||
        ydb_txn_begin_read(conn, &txn) != YDB_OK ||
        ydb_txn_get_object(txn, "books", "b1", &data, &size) != YDB_OK) {
        fprintf(stderr, "write and read: %s\n", ydb_errmsg());
        return 1;
    }
    ok = size == 4 && memcmp(data, "Dune", 4) == 0;
    printf("read back: %.*s\n", (int)size, (const char *)data);
    ydb_free(data);
    ydb_txn_end(txn);
    ydb_connection_close(conn);
    ydb_database_close(db);
    return ok ? 0 : 1;
}
