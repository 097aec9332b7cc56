/*
** histories.h -- what the seeded random-history tests over mappings share
** (test_edit_script.c, test_filtered_views.c): rows "GROUP:RANK" in two
** collections and a view grouping them by GROUP (objects starting with "x"
** are left out) and sorting them by RANK then collection then key; random
** writes (random_write, random_commit) that keep track of which rows exist;
** mappings in a random configuration (random_mappings); the table a
** mappings object shows, read through its getters and the view
** (read_table); and a changeset's edit steps applied one at a time to the
** old table, each checked against the table as it stands and against the
** order the header documents (check_steps), which must give the new table.
**
** Random numbers come from random.h: set random_state to the seed. Define
** _POSIX_C_SOURCE before including it (remove_database_files uses unlink).
*/
#ifndef YDBVIEW_TESTS_HISTORIES_H
#define YDBVIEW_TESTS_HISTORIES_H

#include <stdarg.h>
#include <unistd.h>

#include "check.h"
#include "random.h"

#define COLLECTIONS 2
#define KEYS 10                        /* keys per collection */
#define MAX_SECTIONS 8
#define MAX_ROWS (COLLECTIONS * KEYS)  /* every row in one section at most */
#define NAME_SIZE 16
#define MAX_FAILURE_REPORTS 5

static const char *const collections[COLLECTIONS] = {"c1", "c2"};
static const char *const view_groups[] = {"a", "b", "c", "d", "e"};
#define VIEW_GROUPS 5

/* random_below(n): 0..n-1 from random.h's seeded generator (set
** random_state to the history's seed). */
static inline int random_below(int n) { return (int)pick((size_t)n); }

/* ---- the view: "GROUP:RANK" objects; "x..." objects are left out ---- */

static inline int parse_rank(const void *object, size_t size) {
    const char *text = (const char *)object;
    size_t i = 0;
    int rank = 0;
    while (i < size && text[i] != ':') i++;
    for (i++; i < size && text[i] >= '0' && text[i] <= '9'; i++) rank = rank * 10 + (text[i] - '0');
    return rank;
}

static inline int group_of_object(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    const char *text = (const char *)row->object;
    char group[NAME_SIZE];
    size_t n = 0;
    (void)ctx; (void)txn;
    if (text == NULL) return 1;
    if (row->object_size == 0 || text[0] == 'x') return 0; /* not in the view */
    while (n < row->object_size && n + 1 < sizeof group && text[n] != ':') {
        group[n] = text[n];
        n++;
    }
    group[n] = '\0';
    return ydb_group_result_set(result, group);
}

static inline int rank_then_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b,
                         int *out_order) {
    int left = parse_rank(a->object, a->object_size), right = parse_rank(b->object, b->object_size);
    int order = (left > right) - (left < right);
    (void)ctx; (void)txn;
    (void)group;
    if (order == 0) order = strcmp(a->collection, b->collection);
    if (order == 0) order = strcmp(a->key, b->key);
    *out_order = order;
    return 0;
}

/* ---- dynamic groups: every group but `hidden`, by name either way ---- */

typedef struct {
    int hidden;     /* index into view_groups, or -1 */
    int descending;
} group_choice;

static inline int show_group(void *ctx, ydb_txn *txn, const char *group) {
    (void)txn;
    const group_choice *choice = (const group_choice *)ctx;
    return choice->hidden < 0 || strcmp(group, view_groups[choice->hidden]) != 0;
}

static inline int sort_groups(void *ctx, ydb_txn *txn, const char *group1, const char *group2) {
    (void)txn;
    const group_choice *choice = (const group_choice *)ctx;
    int order = strcmp(group1, group2);
    return choice->descending ? -order : order;
}

/* ---- tables: each section's group and rows ("collection/key") ---- */

typedef struct {
    size_t sections;
    char group[MAX_SECTIONS][NAME_SIZE];
    size_t rows[MAX_SECTIONS];
    char row[MAX_SECTIONS][MAX_ROWS][NAME_SIZE];
} table;

static inline void row_name(char *out, const char *collection, const char *key) {
    snprintf(out, NAME_SIZE, "%s/%s", collection, key);
}

/* Reads the table the mappings over `view` show now: per section its group
** (getter) and rows (getter for the view group and index, then the view). */
static inline int read_table(ydb_connection *reader, ydb_mappings *m, const char *view, table *out) {
    ydb_txn *txn = NULL;
    size_t sections = 0;
    int ok = 1;
    memset(out, 0, sizeof *out);
    if (ydb_txn_begin_read(reader, &txn) != YDB_OK) return 0;
    if (ydb_mappings_number_of_sections(m, &sections) != YDB_OK || sections > MAX_SECTIONS) ok = 0;
    for (size_t s = 0; ok && s < sections; s++) {
        const char *group = NULL;
        size_t count = 0;
        if (ydb_mappings_group_for_section(m, s, &group) != YDB_OK || group == NULL ||
            strlen(group) >= NAME_SIZE ||
            ydb_mappings_number_of_items_in_section(m, s, &count) != YDB_OK || count > MAX_ROWS) {
            ok = 0;
            break;
        }
        strcpy(out->group[s], group);
        out->rows[s] = count;
        out->sections = s + 1;
        for (size_t r = 0; ok && r < count; r++) {
            const char *view_group = NULL;
            size_t index = 0;
            char *collection = NULL, *key = NULL;
            if (ydb_mappings_group_and_index_for_row(m, r, s, &view_group, &index) != YDB_OK ||
                ydb_view_key_at(txn, view, view_group, index, &collection, &key) != YDB_OK)
                ok = 0;
            else
                row_name(out->row[s][r], collection, key);
            ydb_free(collection);
            ydb_free(key);
        }
    }
    if (!ok) fprintf(stderr, "  reading the table failed: %s\n", ydb_errmsg());
    ydb_txn_end(txn);
    return ok;
}

static inline int same_table(const table *a, const table *b) {
    if (a->sections != b->sections) return 0;
    for (size_t s = 0; s < a->sections; s++) {
        if (strcmp(a->group[s], b->group[s]) != 0 || a->rows[s] != b->rows[s]) return 0;
        for (size_t r = 0; r < a->rows[s]; r++)
            if (strcmp(a->row[s][r], b->row[s][r]) != 0) return 0;
    }
    return 1;
}

static inline void print_table(const char *label, const table *t) {
    fprintf(stderr, "    %-4s", label);
    for (size_t s = 0; s < t->sections; s++) {
        fprintf(stderr, " %s[", t->group[s]);
        for (size_t r = 0; r < t->rows[s]; r++) fprintf(stderr, "%s%s", r ? " " : "", t->row[s][r]);
        fprintf(stderr, "]");
    }
    fprintf(stderr, "\n");
}

static inline int in_table(const table *t, const char *name) {
    for (size_t s = 0; s < t->sections; s++)
        for (size_t r = 0; r < t->rows[s]; r++)
            if (strcmp(t->row[s][r], name) == 0) return 1;
    return 0;
}

static inline const char *at(const table *t, size_t section, size_t row) {
    if (section >= t->sections || row >= t->rows[section]) return NULL;
    return t->row[section][row];
}

static inline void remove_at(table *t, size_t s, size_t r) {
    memmove(t->row[s][r], t->row[s][r + 1], (t->rows[s] - r - 1) * NAME_SIZE);
    t->rows[s]--;
}

static inline void insert_at(table *t, size_t s, size_t r, const char *name) {
    memmove(t->row[s][r + 1], t->row[s][r], (t->rows[s] - r) * NAME_SIZE);
    snprintf(t->row[s][r], NAME_SIZE, "%s", name);
    t->rows[s]++;
}

/* ---- totals: what the histories exercised, for a test to print and to
** check that it is not vacuous ---- */

/* Steps checked by check_steps, by type; row steps without a key. */
static size_t step_totals[7];
static size_t unnamed_steps;
/* Configurations random_mappings made. */
static size_t with_dynamic_groups, with_static_groups, with_dynamic_sections, with_fixed, with_flexible,
    with_pin_end, with_reversed, with_offsets, with_consolidation;

static const char *const step_names[7] = {"?", "remove section", "insert section", "remove row",
                                          "insert row", "move row", "reload row"};

/* The phase of the documented order a step belongs to. */
static inline int phase_of(int type) {
    switch (type) {
    case YDB_STEP_REMOVE_ROW: return 1;
    case YDB_STEP_INSERT_SECTION: return 2;
    case YDB_STEP_INSERT_ROW:
    case YDB_STEP_MOVE_ROW: return 3;
    case YDB_STEP_REMOVE_SECTION: return 4;
    case YDB_STEP_RELOAD_ROW: return 5;
    default: return 0;
    }
}

/* (a, b) compared with (c, d). */
static inline int compare_paths(size_t a, size_t b, size_t c, size_t d) {
    if (a != c) return a < c ? -1 : 1;
    return (b > d) - (b < d);
}

static inline const char *ix(size_t value, char *buffer) {
    if (value == YDB_NO_INDEX) return "-";
    snprintf(buffer, 24, "%zu", value);
    return buffer;
}

static inline void print_step(size_t i, const ydb_edit_step *st) {
    char b[8][24];
    fprintf(stderr,
            "    step %zu: %s (type %d) at [%s,%s] to [%s,%s] original [%s,%s] final [%s,%s] group %s row %s/%s "
            "rowid %lld changes %u\n",
            i, st->type >= 1 && st->type <= 6 ? step_names[st->type] : "?", st->type, ix(st->section, b[0]),
            ix(st->row, b[1]), ix(st->to_section, b[2]), ix(st->to_row, b[3]), ix(st->original_section, b[4]),
            ix(st->original_row, b[5]), ix(st->final_section, b[6]), ix(st->final_row, b[7]),
            st->group ? st->group : "-", st->collection ? st->collection : "-", st->key ? st->key : "-",
            (long long)st->rowid, st->changes);
}

/* Checks one step against the table `work` as it stands, and applies it.
** `previous` is the step before it (type 0 for the first). Returns NULL or
** why the step is wrong. */
static inline const char *apply_step(const ydb_edit_step *st, const ydb_edit_step *previous, table *work,
                              const table *old_table, const table *new_table) {
    size_t s = st->section, r = st->row;
    char name[NAME_SIZE] = "";
    const char *there;
    int row_step = st->type >= YDB_STEP_REMOVE_ROW && st->type <= YDB_STEP_RELOAD_ROW;

    /* Every field: in its domain, or "not there" when the step has none. */
    if (st->type < YDB_STEP_REMOVE_SECTION || st->type > YDB_STEP_RELOAD_ROW) return "unknown step type";
    if ((st->changes & ~(unsigned)(YDB_CHANGED_OBJECT | YDB_CHANGED_METADATA | YDB_CHANGED_DEPENDENCY)) != 0)
        return "changes flags outside YDB_CHANGED_*";
    /* An insert is object + metadata (and dependency when a dependency marked
    ** the row); a removal carries what changed in the row, never nothing. */
    if (st->type == YDB_STEP_INSERT_ROW &&
        (st->changes & ~(unsigned)YDB_CHANGED_DEPENDENCY) != (YDB_CHANGED_OBJECT | YDB_CHANGED_METADATA))
        return "an insert whose changes are not object + metadata";
    if (st->type == YDB_STEP_REMOVE_ROW && st->changes == 0)
        return "a removal without changes";
    if ((st->collection == NULL) != (st->key == NULL)) return "a collection without a key or the reverse";
    if (st->type != YDB_STEP_MOVE_ROW && (st->to_section != YDB_NO_INDEX || st->to_row != YDB_NO_INDEX))
        return "a destination on a step that is not a move";
    if (row_step) {
        if (st->group != NULL) return "a group on a row step";
        if (st->row == YDB_NO_INDEX) return "a row step without a row";
        if (st->rowid <= 0) return "a row step without a row id";
        if (st->collection != NULL) row_name(name, st->collection, st->key);
        if ((st->type == YDB_STEP_REMOVE_ROW || st->type == YDB_STEP_MOVE_ROW) !=
            (st->original_section != YDB_NO_INDEX && st->original_row != YDB_NO_INDEX))
            return "an original position only removals and moves have";
        if ((st->type != YDB_STEP_REMOVE_ROW) !=
            (st->final_section != YDB_NO_INDEX && st->final_row != YDB_NO_INDEX))
            return "a final position only inserts, moves and reloads have";
    } else {
        if (st->group == NULL) return "a section step without a group";
        if (st->row != YDB_NO_INDEX) return "a section step with a row";
        if (st->collection != NULL) return "a section step with a row's key";
        if (st->rowid != 0) return "a section step with a row id";
    }

    /* The order: phases in sequence, each in its documented direction. */
    if (previous->type != 0) {
        int phase = phase_of(st->type), before = phase_of(previous->type);
        if (phase < before) return "out of the documented phase order";
        if (phase == before) {
            int order = 0;
            switch (phase) {
            case 1: /* removals bottom-up by original position */
                order = -compare_paths(st->original_section, st->original_row, previous->original_section,
                                       previous->original_row);
                break;
            case 2: order = compare_paths(st->section, 0, previous->section, 0); break;
            case 3:
            case 5: /* ascending final position */
                order = compare_paths(st->final_section, st->final_row, previous->final_section,
                                      previous->final_row);
                break;
            case 4: order = -compare_paths(st->section, 0, previous->section, 0); break;
            default: break;
            }
            if (order <= 0) return "out of order within its phase";
        }
    }

    switch (st->type) {
    case YDB_STEP_REMOVE_SECTION:
        if (s >= work->sections) return "removes a section that is not there";
        if (strcmp(st->group, work->group[s]) != 0) return "removes a section showing another group";
        if (work->rows[s] != 0) return "removes a section that still has rows";
        memmove(&work->group[s], &work->group[s + 1], (work->sections - s - 1) * sizeof work->group[0]);
        memmove(&work->rows[s], &work->rows[s + 1], (work->sections - s - 1) * sizeof work->rows[0]);
        memmove(&work->row[s], &work->row[s + 1], (work->sections - s - 1) * sizeof work->row[0]);
        work->sections--;
        return NULL;

    case YDB_STEP_INSERT_SECTION:
        if (s > work->sections) return "inserts a section past the end";
        if (work->sections == MAX_SECTIONS || strlen(st->group) >= NAME_SIZE) return "too many sections";
        memmove(&work->group[s + 1], &work->group[s], (work->sections - s) * sizeof work->group[0]);
        memmove(&work->rows[s + 1], &work->rows[s], (work->sections - s) * sizeof work->rows[0]);
        memmove(&work->row[s + 1], &work->row[s], (work->sections - s) * sizeof work->row[0]);
        strcpy(work->group[s], st->group);
        work->rows[s] = 0;
        work->sections++;
        return NULL;

    case YDB_STEP_REMOVE_ROW:
        if ((there = at(work, s, r)) == NULL) return "removes a row that is not there";
        if (name[0] && strcmp(name, there) != 0) return "removes another row than the one it names";
        if (s != st->original_section || r != st->original_row) return "a removal away from its original position";
        if (at(old_table, s, r) == NULL || strcmp(at(old_table, s, r), there) != 0)
            return "removes a row that was not at its original position";
        remove_at(work, s, r);
        return NULL;

    case YDB_STEP_INSERT_ROW:
    case YDB_STEP_MOVE_ROW: {
        const char *final_row = at(new_table, st->final_section, st->final_row);
        if (final_row == NULL) return "a final position outside the new table";
        if (name[0] && strcmp(name, final_row) != 0) return "the new table shows another row at its final position";
        if (st->type == YDB_STEP_INSERT_ROW) {
            snprintf(name, sizeof name, "%s", final_row);
            if (in_table(work, name)) return "inserts a row that is already shown";
        } else {
            if ((there = at(work, s, r)) == NULL) return "moves a row that is not there";
            if (name[0] && strcmp(name, there) != 0) return "moves another row than the one it names";
            if (at(old_table, st->original_section, st->original_row) == NULL ||
                strcmp(at(old_table, st->original_section, st->original_row), there) != 0)
                return "moves a row that was not at its original position";
            snprintf(name, sizeof name, "%s", there);
            remove_at(work, s, r);
            if (st->to_section == s && st->to_row == r) {
                insert_at(work, s, r, name);
                return "a move that leaves the row where it is";
            }
            s = st->to_section;
            r = st->to_row;
        }
        if (s >= work->sections || r > work->rows[s]) {
            if (st->type == YDB_STEP_MOVE_ROW) insert_at(work, st->section, st->row, name);
            return "a destination outside the table";
        }
        if (strcmp(work->group[s], new_table->group[st->final_section]) != 0)
            return "goes to a section showing another group than its final one";
        /* Right after the row that precedes it in the new table. */
        if (st->final_row == 0 ? r != 0
                               : (r == 0 || strcmp(work->row[s][r - 1],
                                                   new_table->row[st->final_section][st->final_row - 1]) != 0))
            return "not placed right after the row that precedes it in the new table";
        insert_at(work, s, r, name);
        return NULL;
    }

    case YDB_STEP_RELOAD_ROW:
        if ((there = at(work, s, r)) == NULL) return "reloads a row that is not there";
        if (name[0] && strcmp(name, there) != 0) return "reloads another row than the one it names";
        if (st->final_section != s || st->final_row != r) return "reloads away from its final position";
        if (at(new_table, s, r) == NULL || strcmp(at(new_table, s, r), there) != 0)
            return "reloads a row the new table does not show there";
        return NULL;

    default:
        return "unknown step type";
    }
}

/* Applies every step of `cs` to a copy of `old_table`; the result must be
** `new_table`. Returns 1, or 0 after printing what went wrong. */
static inline int check_steps(ydb_changeset *cs, const table *old_table, const table *new_table, uint64_t seed,
                       int round, int verbose, int *reports) {
    table work = *old_table;
    ydb_edit_step step, previous;
    size_t count = 0;
    const char *why = NULL;
    size_t failed_at = 0;
    int ok = 1;

    CHECK_OK(ydb_changeset_step_count(cs, &count));
    memset(&previous, 0, sizeof previous);
    for (size_t i = 0; i < count && why == NULL; i++) {
        memset(&step, 0xAB, sizeof step);
        if (ydb_changeset_step(cs, i, &step) != YDB_OK) {
            why = "ydb_changeset_step failed";
            failed_at = i;
            break;
        }
        if (step.type >= 1 && step.type <= 6) step_totals[step.type]++;
        if (step.type >= YDB_STEP_REMOVE_ROW && step.key == NULL) unnamed_steps++;
        why = apply_step(&step, &previous, &work, old_table, new_table);
        failed_at = i;
        previous = step;
    }
    if (why == NULL && !same_table(&work, new_table)) {
        why = "the steps do not rebuild the new table";
        failed_at = count;
    }

    /* One past the end: an invalid argument, and the step cleared. */
    memset(&step, 0xAB, sizeof step);
    CHECK_RC(ydb_changeset_step(cs, count, &step), YDB_INVALID_ARGUMENT);
    CHECK(step.type == 0 && step.changes == 0 && step.section == YDB_NO_INDEX && step.row == YDB_NO_INDEX &&
          step.to_section == YDB_NO_INDEX && step.to_row == YDB_NO_INDEX &&
          step.original_section == YDB_NO_INDEX && step.original_row == YDB_NO_INDEX &&
          step.final_section == YDB_NO_INDEX && step.final_row == YDB_NO_INDEX && step.group == NULL &&
          step.collection == NULL && step.key == NULL && step.rowid == 0);

    if (why != NULL) ok = 0;
    if ((!ok && (*reports)++ < MAX_FAILURE_REPORTS) || verbose) {
        if (!ok) fprintf(stderr, "seed %llu, round %d: step %zu: %s\n", (unsigned long long)seed, round, failed_at, why);
        print_table("old", old_table);
        print_table("new", new_table);
        for (size_t i = 0; i < count; i++) {
            memset(&step, 0, sizeof step);
            ydb_changeset_step(cs, i, &step);
            print_step(i, &step);
        }
        if (!ok) print_table("got", &work);
    }
    return ok;
}

/* ---- random mappings ---- */

/* A history's description, built piece by piece (say). */
typedef struct {
    char description[512];
    size_t length;
} text;

static inline void say(text *t, const char *format, ...) {
    va_list args;
    int n;
    if (t->length >= sizeof t->description) return;
    va_start(args, format);
    n = vsnprintf(t->description + t->length, sizeof t->description - t->length, format, args);
    va_end(args);
    if (n > 0) t->length += (size_t)n;
}

/* New mappings over `view` in a random configuration, described in
** `config`; `choice` (kept as long as the mappings) drives dynamic groups. */
static inline ydb_mappings *random_mappings(const char *view, group_choice *choice, text *config) {
    ydb_mappings *m = NULL;
    int configured_something = 0;
    if (random_below(3) == 0) {
        choice->hidden = random_below(3) == 0 ? -1 : random_below(VIEW_GROUPS);
        choice->descending = random_below(2);
        REQUIRE_OK(ydb_mappings_new_dynamic(view, show_group, sort_groups, choice, NULL, &m));
        with_dynamic_groups++;
        say(config, "dynamic groups (hiding %s, %s)", choice->hidden < 0 ? "none" : view_groups[choice->hidden],
            choice->descending ? "descending" : "ascending");
    } else {
        /* A shuffled subset of the groups, sometimes with one never used. */
        const char *groups[VIEW_GROUPS + 1];
        size_t count = 0;
        for (int g = 0; g < VIEW_GROUPS; g++)
            if (random_below(6) != 0) groups[count++] = view_groups[g];
        if (count == 0 || random_below(4) == 0) groups[count++] = "f";
        for (size_t i = count; i > 1; i--) {
            size_t j = (size_t)random_below((int)i);
            const char *swap = groups[i - 1];
            groups[i - 1] = groups[j];
            groups[j] = swap;
        }
        REQUIRE_OK(ydb_mappings_new(view, (const char *const *)groups, count, &m));
        with_static_groups++;
        say(config, "static groups [");
        for (size_t i = 0; i < count; i++) say(config, "%s%s", i ? " " : "", groups[i]);
        say(config, "]");
    }
    switch (random_below(3)) {
    case 0: break;
    case 1:
        CHECK_OK(ydb_mappings_set_dynamic_section_for_all_groups(m, 1));
        with_dynamic_sections++;
        say(config, ", dynamic sections");
        break;
    default:
        for (int g = 0; g < VIEW_GROUPS; g++)
            if (random_below(2)) {
                CHECK_OK(ydb_mappings_set_dynamic_section(m, view_groups[g], 1));
                say(config, ", dynamic section %s", view_groups[g]);
                configured_something = 1;
            }
        if (configured_something) with_dynamic_sections++;
        break;
    }
    configured_something = 0;
    for (int g = 0; g < VIEW_GROUPS; g++) {
        const char *group = view_groups[g];
        int kind = random_below(10), pin = random_below(2) ? YDB_PIN_END : YDB_PIN_BEGINNING;
        int64_t length = 1 + random_below(5), offset = random_below(4);
        if (kind < 2) {
            CHECK_OK(ydb_mappings_set_range_fixed(m, group, length, offset, pin));
            say(config, ", %s fixed %lld+%lld from %s", group, (long long)offset, (long long)length,
                pin ? "end" : "beginning");
            with_fixed++;
        } else if (kind < 5) {
            int64_t max_length = random_below(2) ? 0 : length + random_below(4);
            int64_t min_length = random_below(3);
            int grow = random_below(3);
            if (max_length != 0 && min_length > max_length) min_length = max_length;
            CHECK_OK(ydb_mappings_set_range_flexible(m, group, length, offset, pin, max_length, min_length, grow));
            say(config, ", %s flexible %lld+%lld from %s max %lld min %lld grow %d", group, (long long)offset,
                (long long)length, pin ? "end" : "beginning", (long long)max_length, (long long)min_length, grow);
            with_flexible++;
        }
        if (kind < 5 && pin == YDB_PIN_END) with_pin_end++;
        if (random_below(4) == 0) {
            CHECK_OK(ydb_mappings_set_reversed(m, group, 1));
            say(config, ", %s reversed", group);
            with_reversed++;
        }
        if (random_below(5) == 0) {
            static const int offset_sets[4][2] = {{-1, 0}, {1, 0}, {-1, 1}, {-2, 1}};
            int which = random_below(4);
            size_t n = which < 2 ? 1 : 2;
            CHECK_OK(ydb_mappings_set_cell_drawing_dependency_offsets(m, group, offset_sets[which], n));
            if (n > 1)
                say(config, ", %s offsets %d,%d", group, offset_sets[which][0], offset_sets[which][1]);
            else
                say(config, ", %s offset %d", group, offset_sets[which][0]);
            configured_something = 1;
        }
    }
    if (configured_something) with_offsets++;
    if (random_below(4) == 0) {
        size_t threshold = 2 + (size_t)random_below(12);
        CHECK_OK(ydb_mappings_set_auto_consolidate_groups(m, threshold, "all"));
        say(config, ", consolidate under %zu", threshold);
        with_consolidation++;
    }
    return m;
}

/* ---- random writes ---- */

/* The writer's idea of which rows exist, to choose sensible operations. */
static int present[COLLECTIONS][KEYS];

static inline void random_object(char *object, size_t size) {
    if (random_below(12) == 0)
        snprintf(object, size, "x:%d", random_below(10)); /* left out of the view */
    else
        snprintf(object, size, "%s:%d", view_groups[random_below(VIEW_GROUPS)], random_below(10));
}

static inline int pick_key(int want_present, int *out_c, int *out_k) {
    for (int tries = 0; tries < 40; tries++) {
        int c = random_below(COLLECTIONS), k = random_below(KEYS);
        if (present[c][k] == want_present) {
            *out_c = c;
            *out_k = k;
            return 1;
        }
    }
    return 0;
}

/* One random write in `txn`: mostly inserts, updates and removals, some
** touches and metadata changes, now and then a whole collection emptied. */
static inline void random_write(ydb_txn *txn) {
    char key[8], object[16];
    int choice = random_below(100), c = 0, k = 0;
    if (choice < 30 || !pick_key(1, &c, &k)) {
        /* insert a new row (or, with every key taken, replace one) */
        if (!pick_key(0, &c, &k)) pick_key(1, &c, &k);
        snprintf(key, sizeof key, "k%d", k);
        random_object(object, sizeof object);
        if (random_below(3) == 0)
            CHECK_OK(ydb_txn_set_object(txn, collections[c], key, object, strlen(object), "m", 1));
        else
            CHECK_OK(ydb_txn_set_object(txn, collections[c], key, object, strlen(object), NULL, 0));
        present[c][k] = 1;
        return;
    }
    snprintf(key, sizeof key, "k%d", k);
    if (choice < 60) {
        /* update: another group, another rank, or both */
        if (random_below(2))
            random_object(object, sizeof object);
        else
            snprintf(object, sizeof object, "%s:%d", view_groups[random_below(VIEW_GROUPS)],
                     random_below(10));
        if (random_below(4) == 0)
            CHECK_OK(ydb_txn_set_object(txn, collections[c], key, object, strlen(object), "n", 1));
        else
            CHECK_OK(ydb_txn_replace_object(txn, collections[c], key, object, strlen(object)));
    } else if (choice < 75) {
        switch (random_below(4)) {
        case 0: CHECK_OK(ydb_txn_touch_object(txn, collections[c], key)); break;
        case 1: CHECK_OK(ydb_txn_touch_metadata(txn, collections[c], key)); break;
        case 2: CHECK_OK(ydb_txn_touch_row(txn, collections[c], key)); break;
        default: CHECK_OK(ydb_txn_replace_metadata(txn, collections[c], key, "z", 1)); break;
        }
    } else if (choice < 97) {
        CHECK_OK(ydb_txn_remove_object(txn, collections[c], key));
        present[c][k] = 0;
    } else {
        CHECK_OK(ydb_txn_remove_all_objects(txn, collections[c]));
        memset(present[c], 0, sizeof present[c]);
    }
}

/* A commit of 1 to 5 random writes. */
static inline void random_commit(ydb_connection *writer) {
    ydb_txn *txn = NULL;
    REQUIRE_OK(ydb_txn_begin_read_write(writer, &txn));
    for (int n = 1 + random_below(5); n > 0; n--) random_write(txn);
    REQUIRE_OK(ydb_txn_commit(txn));
}

/* ---- odds and ends ---- */

static inline int is_consolidated(ydb_mappings *m) {
    int flag = 0;
    CHECK_OK(ydb_mappings_is_using_consolidated_group(m, &flag));
    return flag;
}

/* Removes a database file and the files SQLite keeps next to it. */
static inline void remove_database_files(const char *file) {
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char path[256];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", file, suffixes[i]);
        unlink(path);
    }
}

#endif
