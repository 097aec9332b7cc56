// bench.cpp -- what a commit costs ydbview-qt's models with a view attached
// (not a test: it prints figures; Benchmarks/README.md records them).
//
// For each table size, a database of that many rows in four groups, and
// each model shown in its widget view (offscreen): FlatMappingsModel in a
// QListView with uniform item sizes, MappingsModel in a QTreeView with
// uniform row heights, every section expanded. Then commits of 1 and 1,000
// rows of each kind -- inserted at random places, updated in place, updated
// so that they move, removed -- each timed from the catch-up's start (what
// the wakeup descriptor's notifier calls) to the last signal handled by the
// view (catchUp() returning: Qt delivers the signals synchronously), and
// then the view's own deferred layout and paint (the next turn of the event
// loop). Medians of `rounds` runs.
//
//   ydbview-qt-bench [sizes=10000,100000] [rounds=5]
#include <QApplication>
#include <QElapsedTimer>
#include <QListView>
#include <QTreeView>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ydbview-qt/models.h>

namespace {

#define OK(expr)                                                                                   \
    do {                                                                                           \
        if ((expr) != YDB_OK) {                                                                    \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, ydb_errmsg());     \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

const char *const groups[] = {"a", "b", "c", "d"};

// Objects are "GROUP:RANK": grouped by GROUP, sorted by RANK then key.
int byGroup(void *, ydb_txn *, const ydb_view_row *row, ydb_group_result *result) {
    const char *text = static_cast<const char *>(row->object);
    char group[2] = {text[0], 0};
    return ydb_group_result_set(result, group);
}

int byRank(void *, ydb_txn *, const char *, const ydb_view_row *row, ydb_sort_key *key) {
    ydb_sort_key_append_int64(key, std::atoll(static_cast<const char *>(row->object) + 2), 0);
    return ydb_sort_key_append_text(key, row->key, 0);
}

std::mt19937_64 random(42);
long next = 0;  // keys of rows inserted by the benchmark

std::string object(int rank) { return std::string(1, groups[random() % 4][0]) + ":" + std::to_string(rank); }

struct Database {
    ydb_database *db = nullptr;
    ydb_connection *writer = nullptr;
    std::vector<std::string> keys;  // every row, to pick some from
};

void commit(Database &d, const char *kind, int rows) {
    ydb_txn *txn = nullptr;
    OK(ydb_txn_begin_read_write(d.writer, &txn));
    for (int i = 0; i < rows; ++i) {
        if (std::strcmp(kind, "insert") == 0) {
            d.keys.push_back("n" + std::to_string(next++));
            std::string o = object(static_cast<int>(random() % 1000000));
            OK(ydb_txn_set_object(txn, "rows", d.keys.back().c_str(), o.data(), o.size(), nullptr, 0));
            continue;
        }
        size_t at = random() % d.keys.size();
        const std::string key = d.keys[at];
        if (std::strcmp(kind, "remove") == 0) {
            d.keys[at] = d.keys.back();
            d.keys.pop_back();
            OK(ydb_txn_remove_object(txn, "rows", key.c_str()));
        } else if (std::strcmp(kind, "update") == 0) {
            OK(ydb_txn_replace_metadata(txn, "rows", key.c_str(), "m", 1));  // in place: a reload
        } else {  // "move": a new rank, and a new group a quarter of the time
            std::string o = object(static_cast<int>(random() % 1000000));
            OK(ydb_txn_replace_object(txn, "rows", key.c_str(), o.data(), o.size()));
        }
    }
    OK(ydb_txn_commit(txn));
}

Database populate(int rows) {
    Database d;
    OK(ydb_database_open(nullptr, &d.db));
    OK(ydb_connection_open(d.db, &d.writer));
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = byGroup;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = byRank;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.persistent = 0;
    OK(ydb_view_register(d.db, "v", &def, nullptr, nullptr));
    ydb_txn *txn = nullptr;
    OK(ydb_txn_begin_read_write(d.writer, &txn));
    for (int i = 0; i < rows; ++i) {
        d.keys.push_back("r" + std::to_string(i));
        std::string o = object(static_cast<int>(random() % 1000000));
        OK(ydb_txn_set_object(txn, "rows", d.keys.back().c_str(), o.data(), o.size(), nullptr, 0));
    }
    OK(ydb_txn_commit(txn));
    return d;
}

double ms(qint64 ns) { return static_cast<double>(ns) / 1e6; }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// One model in its view: every kind of commit, 1 and 1,000 rows.
template <typename Model, typename View>
void measure(Database &d, int size, int rounds, const char *label) {
    ydb_mappings *mappings = nullptr;
    OK(ydb_mappings_new("v", groups, 4, &mappings));
    Model model(d.db, mappings);
    model.setFollowCommits(false);  // caught up below, timed
    View view;
    view.resize(400, 600);
    view.setModel(&model);
    if constexpr (std::is_same_v<View, QTreeView>) {
        view.setUniformRowHeights(true);
        view.expandAll();
    } else {
        view.setUniformItemSizes(true);
    }
    view.show();
    QApplication::processEvents();
    for (const char *kind : {"insert", "update", "move", "remove"})
        for (int rows : {1, 1000}) {
            std::vector<double> signalTimes, layoutTimes;
            for (int round = 0; round < rounds; ++round) {
                commit(d, kind, rows);
                QElapsedTimer timer;
                timer.start();
                model.catchUp();  // the catch-up and every signal, handled by the view
                qint64 signalled = timer.nsecsElapsed();
                QApplication::processEvents();  // the view's deferred layout and paint
                signalTimes.push_back(ms(signalled));
                layoutTimes.push_back(ms(timer.nsecsElapsed() - signalled));
            }
            std::printf("%-7d %-22s %-6s %5d rows   %8.2f ms   + view layout/paint %8.2f ms\n", size, label, kind,
                        rows, median(signalTimes), median(layoutTimes));
            std::fflush(stdout);
        }
}

}  // namespace

int main(int argc, char **argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    std::vector<int> sizes = {10000, 100000};
    if (argc > 1) {
        sizes.clear();
        for (const QString &size : QString::fromLocal8Bit(argv[1]).split(QLatin1Char(','))) sizes.push_back(size.toInt());
    }
    int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
    std::printf("table   model in its view      commit             catch-up to last signal   then\n");
    for (int size : sizes) {
        Database d = populate(size);
        measure<ydbview::FlatMappingsModel, QListView>(d, size, rounds, "flat in QListView");
        measure<ydbview::MappingsModel, QTreeView>(d, size, rounds, "tree in QTreeView");
        ydb_connection_close(d.writer);
        ydb_database_close(d.db);
    }
    return 0;
}
