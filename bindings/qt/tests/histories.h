// histories.h -- seeded random histories for the Qt model tests, through
// the C ABI (the same kinds as bindings/c/tests/test_edit_script.c): a view
// of rows "GROUP:RANK" grouped by GROUP and sorted by RANK, collection and
// key; mappings in a random configuration; random commits.
#ifndef YDBVIEW_QT_TESTS_HISTORIES_H
#define YDBVIEW_QT_TESTS_HISTORIES_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <QCoreApplication>
#include <QElapsedTimer>

#include "ydbview.h"

namespace histories {

constexpr const char *VIEW = "byGroupRank";
constexpr int COLLECTIONS = 2, KEYS = 10, VIEW_GROUPS = 5;
inline const char *const collections[COLLECTIONS] = {"c1", "c2"};
inline const char *const viewGroups[VIEW_GROUPS] = {"a", "b", "c", "d", "e"};

// Stops the test at once: these are the history's own calls, not the model's.
#define HISTORY_OK(expr)                                                                                  \
    do {                                                                                                  \
        int history_rc_ = (expr);                                                                         \
        if (history_rc_ != YDB_OK) {                                                                      \
            std::fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, history_rc_, \
                         ydb_errmsg());                                                                   \
            std::exit(1);                                                                                 \
        }                                                                                                 \
    } while (0)

struct Random {
    uint64_t state;
    explicit Random(uint64_t seed) {
        uint64_t z = seed + 0x9E3779B97F4A7C15u;  // splitmix64 once: neighbouring seeds start far apart
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
        state = (z ^ (z >> 31)) | 1u;
    }
    uint64_t next() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    }
    int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

inline int rankOf(const void *object, size_t size) {
    const char *text = static_cast<const char *>(object);
    size_t i = 0;
    int rank = 0;
    while (i < size && text[i] != ':') i++;
    for (i++; i < size && text[i] >= '0' && text[i] <= '9'; i++) rank = rank * 10 + (text[i] - '0');
    return rank;
}

inline std::string groupOf(const void *object, size_t size) {
    const char *text = static_cast<const char *>(object);
    size_t n = 0;
    while (n < size && text[n] != ':') n++;
    return std::string(text, n);
}

inline int groupRow(void *, ydb_txn *, const ydb_view_row *row, ydb_group_result *result) {
    if (row->object == nullptr) return 1;
    if (row->object_size == 0 || static_cast<const char *>(row->object)[0] == 'x') return 0;  // left out
    return ydb_group_result_set(result, groupOf(row->object, row->object_size).c_str());
}

inline int sortRows(void *, ydb_txn *, const char *, const ydb_view_row *a, const ydb_view_row *b, int *order) {
    int left = rankOf(a->object, a->object_size), right = rankOf(b->object, b->object_size);
    *order = (left > right) - (left < right);
    if (*order == 0) *order = std::strcmp(a->collection, b->collection);
    if (*order == 0) *order = std::strcmp(a->key, b->key);
    return 0;
}

// ---- mappings configurations ----

struct GroupOptions {
    int range = 0;  // 0 none, 1 fixed, 2 flexible
    int64_t length = 0, offset = 0, maxLength = 0, minLength = 0;
    int pin = 0, grow = 0, offsets = -1;  // offsets: one of the dependency sets, or -1
    bool reversed = false, dynamicSection = false;
};

struct Config {
    bool dynamic = false, descending = false, readsTransaction = false;
    int hidden = -1;  // dynamic groups: the group never shown, or -1
    std::vector<const char *> groups;  // static groups
    bool allDynamicSections = false;
    GroupOptions options[VIEW_GROUPS];
    size_t consolidateUnder = 0;
};

// Dynamic groups: every group but `hidden` -- or, reading the transaction,
// every group but the one row c1/k0 is in -- by name either way.
inline int showGroup(void *ctx, ydb_txn *txn, const char *group) {
    const Config *config = static_cast<const Config *>(ctx);
    if (config->readsTransaction) {
        void *object = nullptr;
        size_t size = 0;
        if (txn == nullptr || ydb_txn_get_object(txn, "c1", "k0", &object, &size) != YDB_OK) return 1;
        bool hide = groupOf(object, size) == group;
        ydb_free(object);
        return !hide;
    }
    return config->hidden < 0 || std::strcmp(group, viewGroups[config->hidden]) != 0;
}

inline int sortGroups(void *ctx, ydb_txn *, const char *group1, const char *group2) {
    int order = std::strcmp(group1, group2);
    return static_cast<const Config *>(ctx)->descending ? -order : order;
}

inline Config randomConfig(Random &rng) {
    Config c;
    if (rng.below(3) == 0) {
        c.dynamic = true;
        c.readsTransaction = rng.below(3) == 0;
        c.hidden = rng.below(3) == 0 ? -1 : rng.below(VIEW_GROUPS);
        c.descending = rng.below(2);
    } else {
        for (int g = 0; g < VIEW_GROUPS; g++)
            if (rng.below(6) != 0) c.groups.push_back(viewGroups[g]);
        if (c.groups.empty() || rng.below(4) == 0) c.groups.push_back("f");  // a group never used
        for (size_t i = c.groups.size(); i > 1; i--)
            std::swap(c.groups[i - 1], c.groups[static_cast<size_t>(rng.below(static_cast<int>(i)))]);
    }
    int sections = rng.below(3);
    c.allDynamicSections = sections == 1;
    for (int g = 0; g < VIEW_GROUPS; g++) {
        GroupOptions &o = c.options[g];
        o.dynamicSection = sections == 2 && rng.below(2);
        int kind = rng.below(10);
        o.pin = rng.below(2) ? YDB_PIN_END : YDB_PIN_BEGINNING;
        o.length = 1 + rng.below(5);
        o.offset = rng.below(4);
        if (kind < 2) {
            o.range = 1;
        } else if (kind < 5) {
            o.range = 2;
            o.maxLength = rng.below(2) ? 0 : o.length + rng.below(4);
            o.minLength = rng.below(3);
            o.grow = rng.below(3);
            if (o.maxLength != 0 && o.minLength > o.maxLength) o.minLength = o.maxLength;
        }
        o.reversed = rng.below(4) == 0;
        if (rng.below(5) == 0) o.offsets = rng.below(4);
    }
    if (rng.below(4) == 0) c.consolidateUnder = 2 + static_cast<size_t>(rng.below(12));
    return c;
}

// Mappings for `config` (which must outlive them: dynamic groups read it).
inline ydb_mappings *makeMappings(const Config &config) {
    static const int offsetSets[4][2] = {{-1, 0}, {1, 0}, {-1, 1}, {-2, 1}};
    ydb_mappings *m = nullptr;
    if (config.dynamic)
        HISTORY_OK(
            ydb_mappings_new_dynamic(VIEW, showGroup, sortGroups, const_cast<Config *>(&config), nullptr, &m));
    else
        HISTORY_OK(ydb_mappings_new(VIEW, config.groups.data(), config.groups.size(), &m));
    if (config.allDynamicSections) HISTORY_OK(ydb_mappings_set_dynamic_section_for_all_groups(m, 1));
    for (int g = 0; g < VIEW_GROUPS; g++) {
        const GroupOptions &o = config.options[g];
        const char *group = viewGroups[g];
        if (o.dynamicSection) HISTORY_OK(ydb_mappings_set_dynamic_section(m, group, 1));
        if (o.range == 1) HISTORY_OK(ydb_mappings_set_range_fixed(m, group, o.length, o.offset, o.pin));
        if (o.range == 2)
            HISTORY_OK(ydb_mappings_set_range_flexible(m, group, o.length, o.offset, o.pin, o.maxLength, o.minLength,
                                                       o.grow));
        if (o.reversed) HISTORY_OK(ydb_mappings_set_reversed(m, group, 1));
        if (o.offsets >= 0)
            HISTORY_OK(ydb_mappings_set_cell_drawing_dependency_offsets(m, group, offsetSets[o.offsets],
                                                                        o.offsets < 2 ? 1 : 2));
    }
    if (config.consolidateUnder)
        HISTORY_OK(ydb_mappings_set_auto_consolidate_groups(m, config.consolidateUnder, "all"));
    return m;
}

// ---- writes ----

struct Writer {
    ydb_connection *connection = nullptr;
    bool present[COLLECTIONS][KEYS] = {};
};

inline void randomObject(Random &rng, char *object, size_t size) {
    if (rng.below(12) == 0)
        std::snprintf(object, size, "x:%d", rng.below(10));  // left out of the view
    else
        std::snprintf(object, size, "%s:%d", viewGroups[rng.below(VIEW_GROUPS)], rng.below(10));
}

inline bool pickKey(Writer &w, Random &rng, bool present, int *c, int *k) {
    for (int tries = 0; tries < 40; tries++) {
        *c = rng.below(COLLECTIONS);
        *k = rng.below(KEYS);
        if (w.present[*c][*k] == present) return true;
    }
    return false;
}

inline void randomCommit(Writer &w, Random &rng) {
    ydb_txn *txn = nullptr;
    HISTORY_OK(ydb_txn_begin_read_write(w.connection, &txn));
    for (int n = 1 + rng.below(5); n > 0; n--) {
        char key[8], object[16];
        int choice = rng.below(100), c = 0, k = 0;
        if (choice < 30 || !pickKey(w, rng, true, &c, &k)) {
            if (!pickKey(w, rng, false, &c, &k)) pickKey(w, rng, true, &c, &k);
            std::snprintf(key, sizeof key, "k%d", k);
            randomObject(rng, object, sizeof object);
            bool metadata = rng.below(3) == 0;
            HISTORY_OK(ydb_txn_set_object(txn, collections[c], key, object, std::strlen(object),
                                          metadata ? "m" : nullptr, metadata ? 1 : 0));
            w.present[c][k] = true;
            continue;
        }
        std::snprintf(key, sizeof key, "k%d", k);
        if (choice < 60) {
            randomObject(rng, object, sizeof object);
            if (rng.below(4) == 0)
                HISTORY_OK(ydb_txn_set_object(txn, collections[c], key, object, std::strlen(object), "n", 1));
            else
                HISTORY_OK(ydb_txn_replace_object(txn, collections[c], key, object, std::strlen(object)));
        } else if (choice < 75) {
            switch (rng.below(4)) {
            case 0: HISTORY_OK(ydb_txn_touch_object(txn, collections[c], key)); break;
            case 1: HISTORY_OK(ydb_txn_touch_metadata(txn, collections[c], key)); break;
            case 2: HISTORY_OK(ydb_txn_touch_row(txn, collections[c], key)); break;
            default: HISTORY_OK(ydb_txn_replace_metadata(txn, collections[c], key, "z", 1)); break;
            }
        } else if (choice < 97) {
            HISTORY_OK(ydb_txn_remove_object(txn, collections[c], key));
            w.present[c][k] = false;
        } else {
            HISTORY_OK(ydb_txn_remove_all_objects(txn, collections[c]));
            std::memset(w.present[c], 0, sizeof w.present[c]);
        }
    }
    HISTORY_OK(ydb_txn_commit(txn));
}

inline void registerView(ydb_database *db, bool persistent) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = groupRow;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sortRows;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    def.persistent = persistent;
    HISTORY_OK(ydb_view_register(db, VIEW, &def, nullptr, nullptr));
}

// ---- the table the mappings show, read anew ----

struct Shown {
    std::string collection, key, object;
    bool operator==(const Shown &o) const { return collection == o.collection && key == o.key && object == o.object; }
};
struct TableSection {
    std::string group;
    std::vector<Shown> rows;
    bool operator==(const TableSection &o) const { return group == o.group && rows == o.rows; }
};
using Table = std::vector<TableSection>;

// Through the mappings' getters and the view, in a read on `reader` (which
// must be at the mappings' snapshot), each row's object read there too.
inline Table readTable(ydb_connection *reader, ydb_mappings *m) {
    Table table;
    ydb_txn *txn = nullptr;
    size_t sections = 0;
    HISTORY_OK(ydb_txn_begin_read(reader, &txn));
    HISTORY_OK(ydb_mappings_number_of_sections(m, &sections));
    for (size_t s = 0; s < sections; s++) {
        const char *group = nullptr;
        size_t count = 0;
        HISTORY_OK(ydb_mappings_group_for_section(m, s, &group));
        HISTORY_OK(ydb_mappings_number_of_items_in_section(m, s, &count));
        TableSection section{group, {}};
        for (size_t r = 0; r < count; r++) {
            char *collection = nullptr, *key = nullptr;
            void *object = nullptr;
            size_t size = 0;
            HISTORY_OK(ydb_view_key_at_index_path(txn, m, s, r, &collection, &key));
            HISTORY_OK(ydb_txn_get_object(txn, collection, key, &object, &size));
            section.rows.push_back({collection, key, std::string(static_cast<char *>(object), size)});
            ydb_free(collection);
            ydb_free(key);
            ydb_free(object);
        }
        table.push_back(section);
    }
    ydb_txn_end(txn);
    return table;
}

// The edge and QML tests' helpers: one commit of `object` under key `key`
// (collection c1), and the event loop run until `done` or 5 s.
inline void put(ydb_connection *writer, const char *key, const char *object) {
    ydb_txn *txn = nullptr;
    HISTORY_OK(ydb_txn_begin_read_write(writer, &txn));
    HISTORY_OK(ydb_txn_set_object(txn, "c1", key, object, std::strlen(object), nullptr, 0));
    HISTORY_OK(ydb_txn_commit(txn));
}

template <typename F>
bool spinUntil(F done) {
    QElapsedTimer timer;
    timer.start();
    while (!done() && timer.elapsed() < 5000) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    return done();
}

}  // namespace histories

#endif
