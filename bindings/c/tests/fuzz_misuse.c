/*
** fuzz_misuse.c -- random sequences of C API calls with hostile arguments:
** live handles, handles of the wrong type, closed or freed (stale) handles,
** NULL, made-up handle values, invalid UTF-8, empty and long names, odd
** sizes, out-of-range indexes, NULL out-pointers; background registrations
** running on their threads while their databases close. Built with
** AddressSanitizer and UBSan (CMakeLists.txt). Every call must return a
** documented status (0..14) and nothing may crash, leak into a sanitizer
** report or hang (an alarm fails the run). Time-bounded and seeded:
**
**   fuzz_misuse [SECONDS]   (default 3; or YDBVIEW_FUZZ_SECONDS;
**                            YDBVIEW_FUZZ_SEED picks the sequence)
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "random.h"

#define SLOTS 6
#define STALE 32


static ydb_database *databases[SLOTS];
static ydb_connection *connections[SLOTS];
static ydb_txn *transactions[SLOTS];
static ydb_mappings *mappings[SLOTS];
static ydb_changeset *changesets[SLOTS];
static ydb_notification_list *lists[SLOTS];
static ydb_registration *registrations[SLOTS];
static void *stale[STALE];
static long calls = 0, statuses[15] = {0}, undocumented = 0;

static void forget(void *handle) { stale[pick(STALE)] = handle; }

/* A handle argument: usually one of the wanted kind, sometimes anything. */
static void *any_handle(void **wanted) {
    switch (pick(10)) {
    case 0: return NULL;
    case 1: return (void *)(uintptr_t)0x1234;
    case 2: return stale[pick(STALE)];
    case 3: return (void *)databases[pick(SLOTS)];
    case 4: return (void *)connections[pick(SLOTS)];
    case 5: return (void *)transactions[pick(SLOTS)];
    case 6: return (void *)mappings[pick(SLOTS)];
    default: return wanted[pick(SLOTS)];
    }
}
#define HANDLE(type, pool) ((type *)any_handle((void **)(pool)))

static const char *any_name(void) {
    static char longer[600];
    static const char *names[] = { "c", "v", "g", "a", "", "\xff\xfe", "\xc3\x28", "e\xcc\x81", "\xc3\xa9",
                                   "k1", "nosuch", "%s%n", "'; DROP TABLE ydb_rows; --" };
    if (longer[0] == 0) { memset(longer, 'n', sizeof longer - 1); }
    if (pick(20) == 0) return NULL;
    if (pick(20) == 0) return longer;
    return names[pick(sizeof names / sizeof *names)];
}

static size_t any_index(void) {
    switch (pick(4)) {
    case 0: return (size_t)-1;
    case 1: return (size_t)1 << 40;
    default: return pick(8);
    }
}

static void record(int rc) {
    calls++;
    if (rc < 0 || rc > 14) {
        undocumented++;
        fprintf(stderr, "fuzz: undocumented status %d: %s\n", rc, ydb_errmsg());
    } else {
        statuses[rc]++;
    }
}

static int group_first_byte(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    char group[2] = { 'g', 0 };
    (void)ctx; (void)txn;
    if (row->object_size > 0 && ((const char *)row->object)[0] == 'x') return 0;
    if (row->object_size > 0 && ((const char *)row->object)[0] == 'f') return 5;  /* a failing callback */
    if (row->object_size > 0) group[0] = ((const char *)row->object)[0];
    return ydb_group_result_set(result, group);
}

static int sort_objects(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b, int *out) {
    size_t n = a->object_size < b->object_size ? a->object_size : b->object_size;
    (void)ctx; (void)txn; (void)group;
    *out = n ? memcmp(a->object, b->object, n) : 0;
    if (*out == 0) *out = (a->object_size > b->object_size) - (a->object_size < b->object_size);
    return 0;
}

static void step(void) {
    size_t slot = pick(SLOTS);
    char *text = NULL, *other = NULL;
    void *data = NULL;
    size_t size = 0, count = 0;
    int rc = 0;
    switch (pick(26)) {
    case 0:
        if (databases[slot] == NULL) rc = ydb_database_open(pick(8) ? NULL : "", &databases[slot]);
        break;
    case 1:
        /* A live database may close here: its slot then holds a stale handle. */
        rc = ydb_database_close(HANDLE(ydb_database, databases));
        break;
    case 2:
        if (connections[slot] == NULL) rc = ydb_connection_open(HANDLE(ydb_database, databases), &connections[slot]);
        break;
    case 3:
        if (connections[slot] != NULL) {
            rc = ydb_connection_close(connections[slot]);
            forget(connections[slot]);
            connections[slot] = NULL;
        }
        break;
    case 4:
        if (transactions[slot] == NULL)
            rc = pick(2) ? ydb_txn_begin_read(HANDLE(ydb_connection, connections), &transactions[slot])
                         : ydb_txn_begin_read_write(HANDLE(ydb_connection, connections), &transactions[slot]);
        break;
    case 5:
        if (transactions[slot] != NULL) {
            rc = pick(2) ? ydb_txn_commit(transactions[slot]) : ydb_txn_end(transactions[slot]);
            if (rc != YDB_OK) ydb_txn_end(transactions[slot]);
            forget(transactions[slot]);
            transactions[slot] = NULL;
        }
        break;
    case 6: {
        const char *object = pick(10) ? (pick(3) ? "gobject" : pick(2) ? "xhidden" : "fails") : NULL;
        /* NULL comes with size 0 or 7 (7 is misuse); an object always with its
        ** own length: a longer one would make the library read past this
        ** program's literal ("fails" is 5 bytes), which no C API can detect. */
        rc = ydb_txn_set_object(HANDLE(ydb_txn, transactions), any_name(), any_name(),
                                object, object ? strlen(object) : pick(2) ? (size_t)7 : 0,
                                pick(2) ? "meta" : NULL, pick(2) ? 4 : 0);
        break;
    }
    case 7:
        if (pick(4) == 0) {   /* the hinted read, with any hint */
            void *metadata = NULL;
            size_t metadata_size = 0;
            rc = ydb_txn_get_row_hinted(HANDLE(ydb_txn, transactions), any_name(), any_name(),
                                        (int64_t)pick(8) - 2, pick(10) ? &data : NULL, pick(10) ? &size : NULL,
                                        pick(2) ? &metadata : NULL, pick(2) ? &metadata_size : NULL);
            if (rc == YDB_OK) {
                ydb_free(data);
                ydb_free(metadata);
            }
            break;
        }
        rc = ydb_txn_get_object(HANDLE(ydb_txn, transactions), any_name(), any_name(),
                                pick(10) ? &data : NULL, pick(10) ? &size : NULL);
        if (rc == YDB_OK) ydb_free(data);
        break;
    case 8:
        if (pick(8) == 0) {   /* ydb_free refuses any handle, live, stale or made up */
            void *handle = any_handle((void **)transactions);
            ydb_free(handle);
            rc = handle == NULL ? YDB_OK : ydb_errcode();
            if (handle != NULL && rc != YDB_MISUSE) undocumented++;
            break;
        }
        rc = ydb_txn_remove_object(HANDLE(ydb_txn, transactions), any_name(), any_name());
        break;
    case 9:
        rc = ydb_txn_count(HANDLE(ydb_txn, transactions), any_name(), pick(10) ? &count : NULL);
        break;
    case 10: {
        ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
        def.grouping = pick(10) ? group_first_byte : NULL;
        def.grouping_flavour = YDB_FLAVOUR_OBJECT;
        def.sorting = pick(10) ? sort_objects : NULL;
        def.sorting_flavour = (int)pick(5);
        def.version_tag = pick(2) ? "1" : any_name();
        def.persistent = (int)pick(2);
        rc = ydb_view_register(HANDLE(ydb_database, databases), any_name(), pick(10) ? &def : NULL, NULL, NULL);
        break;
    }
    case 11:
        rc = ydb_view_unregister(HANDLE(ydb_database, databases), any_name());
        break;
    case 12:
        rc = ydb_view_count_in_group(HANDLE(ydb_txn, transactions), any_name(), any_name(), pick(10) ? &count : NULL);
        break;
    case 13:
        rc = ydb_view_key_at(HANDLE(ydb_txn, transactions), any_name(), any_name(), any_index(),
                             pick(10) ? &text : NULL, pick(10) ? &other : NULL);
        if (rc == YDB_OK) { ydb_free(text); ydb_free(other); }
        break;
    case 14:
        rc = ydb_view_object_at(HANDLE(ydb_txn, transactions), any_name(), any_name(), any_index(),
                                pick(10) ? &data : NULL, pick(10) ? &size : NULL);
        if (rc == YDB_OK) ydb_free(data);
        break;
    case 15:
        if (mappings[slot] == NULL) {
            const char *groups[3] = { "g", any_name(), "a" };
            rc = ydb_mappings_new(any_name(), pick(10) ? groups : NULL, pick(4), &mappings[slot]);
        }
        break;
    case 16:
        if (mappings[slot] != NULL) {
            ydb_mappings_free(mappings[slot]);
            forget(mappings[slot]);
            mappings[slot] = NULL;
        } else {
            ydb_mappings_free(HANDLE(ydb_mappings, mappings));   /* wrong types must be left alone */
        }
        break;
    case 17:
        rc = ydb_mappings_update(HANDLE(ydb_mappings, mappings), HANDLE(ydb_txn, transactions));
        break;
    case 18:
        rc = ydb_mappings_set_range_fixed(HANDLE(ydb_mappings, mappings), any_name(), (int64_t)any_index() - 2,
                                          (int64_t)pick(5) - 1, (int)pick(4));
        break;
    case 19:
        rc = ydb_mappings_number_of_items_in_section(HANDLE(ydb_mappings, mappings), any_index(),
                                                     pick(10) ? &count : NULL);
        break;
    case 20:
        if (lists[slot] == NULL)
            rc = ydb_connection_begin_long_lived_read(HANDLE(ydb_connection, connections), &lists[slot]);
        break;
    case 21:
        if (changesets[slot] == NULL)
            rc = ydb_changeset_new(HANDLE(ydb_mappings, mappings), (ydb_notification_list *)any_handle((void **)lists),
                                   &changesets[slot]);
        else {
            rc = ydb_changeset_row_change_count(changesets[slot], &count);
            ydb_changeset_free(changesets[slot]);
            forget(changesets[slot]);
            changesets[slot] = NULL;
        }
        break;
    case 22:
        if (lists[slot] != NULL) {
            ydb_notification_list_free(lists[slot]);
            forget(lists[slot]);
            lists[slot] = NULL;
        } else {
            ydb_notification_list_free((ydb_notification_list *)any_handle((void **)transactions));
        }
        break;
    case 23:
        if (registrations[slot] == NULL) {
            ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
            def.grouping = pick(10) ? group_first_byte : NULL;
            def.grouping_flavour = YDB_FLAVOUR_OBJECT;
            def.sorting = sort_objects;
            def.persistent = (int)pick(2);
            rc = ydb_view_register_async(HANDLE(ydb_database, databases), any_name(), pick(10) ? &def : NULL,
                                         NULL, NULL, NULL, NULL, NULL, pick(10) ? &registrations[slot] : NULL);
        }
        break;
    case 24: {
        ydb_registration *registration = (ydb_registration *)any_handle((void **)registrations);
        int flag = 0;
        switch (pick(4)) {
        case 0: rc = ydb_registration_cancel(registration); break;
        /* Never without a limit: this thread may hold the write lock it waits for. */
        case 1: rc = ydb_registration_wait(registration, (int64_t)pick(3) * 5, pick(10) ? &flag : NULL); break;
        case 2: rc = ydb_registration_result(registration, pick(10) ? &flag : NULL); break;
        default:
            if (registrations[slot] != NULL) {
                rc = ydb_registration_free(registrations[slot]);
                forget(registrations[slot]);
                registrations[slot] = NULL;
            } else {
                rc = ydb_registration_free(registration);   /* wrong types must be left alone */
            }
        }
        break;
    }
    default:
        ydb_changeset_free((ydb_changeset *)any_handle((void **)changesets));
        break;
    }
    record(rc);
}

/* Ends everything still open, in a safe order; stale handles stay stale. */
static void finish(void) {
    for (size_t i = 0; i < SLOTS; i++) {
        if (changesets[i]) ydb_changeset_free(changesets[i]);
        if (lists[i]) ydb_notification_list_free(lists[i]);
        if (mappings[i]) ydb_mappings_free(mappings[i]);
        if (transactions[i]) ydb_txn_end(transactions[i]);
        if (registrations[i]) ydb_registration_free(registrations[i]);
    }
    for (size_t i = 0; i < SLOTS; i++) if (connections[i]) ydb_connection_close(connections[i]);
    for (size_t i = 0; i < SLOTS; i++) if (databases[i]) ydb_database_close(databases[i]);
    memset(changesets, 0, sizeof changesets);
    memset(lists, 0, sizeof lists);
    memset(mappings, 0, sizeof mappings);
    memset(transactions, 0, sizeof transactions);
    memset(registrations, 0, sizeof registrations);
    memset(connections, 0, sizeof connections);
    memset(databases, 0, sizeof databases);
}

int main(int argc, char **argv) {
    const char *env_seconds = getenv("YDBVIEW_FUZZ_SECONDS"), *env_seed = getenv("YDBVIEW_FUZZ_SEED");
    int seconds = argc > 1 ? atoi(argv[1]) : env_seconds ? atoi(env_seconds) : 3;
    time_t end;
    if (seconds < 1) seconds = 3;
    random_state = env_seed ? strtoull(env_seed, NULL, 10) : (uint64_t)time(NULL);
    printf("fuzz_misuse: seed %llu (YDBVIEW_FUZZ_SEED), %d s\n", (unsigned long long)random_state, seconds);
    alarm((unsigned)seconds + 60);   /* a hang fails instead of stalling CI */
    end = time(NULL) + seconds;
    while (time(NULL) < end) {
        for (int i = 0; i < 200; i++) step();
        if (pick(50) == 0) finish();   /* start over now and then: opens and closes get exercised */
    }
    finish();
    printf("fuzz_misuse: %ld calls; statuses:", calls);
    for (int code = 0; code <= 14; code++) if (statuses[code]) printf(" %s=%ld", ydb_errstr(code), statuses[code]);
    printf("\n");
    CHECK(undocumented == 0);
    CHECK(calls > 1000);
    CHECK(statuses[YDB_OK] > 0 && statuses[YDB_MISUSE] > 0);
    return check_summary();
}
