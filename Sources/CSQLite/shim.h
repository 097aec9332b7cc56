#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one wrapper per
** setting the engine uses. */

/* Turns trigger firing on this connection off (0) or on (1). The engine's
** own connections run without the schema's triggers: they exist to count
** the writes of other SQLite clients (see Schema.swift). */
static inline int ydb_sqlite_enable_triggers(sqlite3 *db, int enable) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enable, (int *)0);
}
