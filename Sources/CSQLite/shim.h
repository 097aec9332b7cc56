#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one wrapper per
** setting the engine uses. */

/* Turns trigger firing on this connection off (0) or on (1). The engine's
** own connections run without the schema's triggers: they exist to count
** the writes of other SQLite clients (see Schema.swift). */
static inline int ydb_sqlite_enable_triggers(sqlite3 *db, int enable) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enable, (int *)0);
}

/* The update hook of the engine's connections: writes the row id of each
** row an INSERT, UPDATE or DELETE on ydb_rows changes into *slot. A write
** that finds its row by (collection, key) then reports which row it was,
** so one statement does what a lookup and a write by row id did
** (`UPDATE ... RETURNING` would too, but SQLite 3.40 builds a temporary
** table for every RETURNING). Triggers are off on these connections
** (above), so nothing else writes the slot during such a statement. */
static inline void ydb_sqlite_note_rowid(void *slot, int op, const char *database, const char *table,
                                         sqlite3_int64 rowid) {
    (void)op;
    (void)database;
    if (sqlite3_stricmp(table, "ydb_rows") == 0) *(sqlite3_int64 *)slot = rowid;
}

static inline void ydb_sqlite_track_rowids(sqlite3 *db, sqlite3_int64 *slot) {
    sqlite3_update_hook(db, ydb_sqlite_note_rowid, slot);
}
