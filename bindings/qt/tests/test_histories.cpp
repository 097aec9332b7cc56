// test_histories.cpp -- both models over seeded random histories (every
// mappings configuration: static and dynamic groups, transaction-reading
// filters, dynamic sections, fixed and flexible ranges, reverse, cell-drawing
// dependencies, auto-consolidation; a tenth of the databases with
// max_commits_behind 1 or 2, so that some catch-ups must reset), each model
// under QAbstractItemModelTester in fatal mode, with QSortFilterProxyModels
// stacked on it: one sorting by the rows' text, one filtering recursively,
// one sorting over the filtering one (each proxy under a tester too).
//
// After every signal a model sends, each proxy must equal a fresh proxy over
// the model as it answers then (a proxy re-sorts or re-filters a row only
// when told, and reads the other rows at every signal). After every
// catch-up: the model must show exactly the mappings' table with every row
// read anew at the newest snapshot, each proxy must equal a fresh proxy over
// that table, and persistent indexes held on every row must show the same
// rows (or be invalid when the row left). Then both models follow a writer
// thread through the event loop, and their proxies must end right.
//
//   test_qt_histories            300 histories (YDBVIEW_QT_HISTORIES=N for more)
//   test_qt_histories SEED       one history, printing each table
#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPersistentModelIndex>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include <unistd.h>

#include "histories.h"
#include "ydbview-qt/models.h"

using namespace histories;
using ydbview::FlatMappingsModel;
using ydbview::MappingsModel;

namespace {

int failures = 0;
bool verbose = false;
struct Counts {
    long catchUps = 0, signalsChecked = 0, resets = 0, inserts = 0, removes = 0, moves = 0, changes = 0,
         layouts = 0, rows = 0;
} counts;

#define EXPECT(cond, ...)                                            \
    do {                                                             \
        if (!(cond)) {                                               \
            if (failures++ < 5) {                                    \
                std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
                std::fprintf(stderr, __VA_ARGS__);                   \
                std::fprintf(stderr, "\n");                          \
            }                                                        \
        }                                                            \
    } while (0)

QString textOf(const QString &key, const QByteArray &object) {
    return QStringLiteral("%1/%2").arg(rankOf(object.constData(), static_cast<size_t>(object.size()))).arg(key);
}

// The rank first: a changed rank moves the row in a sorting proxy.
QVariant display(const ydbview::ShownRow &row) { return textOf(row.key, row.object); }

// ---- what a model or proxy shows: each row's text with its children's ----

struct Node {
    QString text;
    std::vector<Node> children;
    bool operator==(const Node &o) const { return text == o.text && children == o.children; }
    bool operator<(const Node &o) const {
        return text != o.text ? text < o.text
                              : std::lexicographical_compare(children.begin(), children.end(), o.children.begin(),
                                                             o.children.end());
    }
};

std::vector<Node> contents(const QAbstractItemModel *model, const QModelIndex &parent = {}) {
    std::vector<Node> shown;
    for (int row = 0; row < model->rowCount(parent); ++row) {
        QModelIndex index = model->index(row, 0, parent);
        shown.push_back({index.data().toString(), contents(model, index)});
    }
    return shown;
}

QString print(const std::vector<Node> &nodes) {
    QStringList parts;
    for (const Node &node : nodes)
        parts << (node.children.empty() ? node.text : node.text + QLatin1Char('[') + print(node.children) + QLatin1Char(']'));
    return parts.join(QLatin1Char(' '));
}

enum Stack { Sorting, Filtering, SortingFiltered };
const char *const stackNames[] = {"sorting", "filtering", "sorting over filtering"};

// A stack of proxies over `source`; every proxy made is kept in `owned`.
QSortFilterProxyModel *makeStack(Stack stack, QAbstractItemModel *source,
                                 std::vector<std::unique_ptr<QSortFilterProxyModel>> &owned) {
    if (stack == SortingFiltered) source = makeStack(Filtering, source, owned);
    owned.push_back(std::make_unique<QSortFilterProxyModel>());
    QSortFilterProxyModel *proxy = owned.back().get();
    if (stack == Filtering) {
        proxy->setRecursiveFilteringEnabled(true);  // group names never match: a section shows for its rows
        proxy->setFilterRegularExpression(QRegularExpression(QStringLiteral("^[0-4]/")));
    }
    proxy->setSourceModel(source);
    if (stack != Filtering) proxy->sort(0);
    return proxy;
}

// Whether a proxy shows what a fresh one does. Between two steps a group
// may show as two sections (inserted at its new place before it leaves the
// old one): a sorting proxy may order such ties either way.
bool agree(Stack stack, std::vector<Node> shown, std::vector<Node> fresh) {
    if (stack == Filtering) return shown == fresh;
    if (shown.size() != fresh.size()) return false;
    for (size_t i = 0; i < shown.size(); ++i)
        if (shown[i].text != fresh[i].text) return false;
    std::sort(shown.begin(), shown.end());
    std::sort(fresh.begin(), fresh.end());
    return shown == fresh;
}

// Proxies over one model, checked after every signal the model sends
// (connected after the proxies and testers, so they have handled it).
struct Watch {
    const char *name;
    QAbstractItemModel *model;
    uint64_t seed;
    std::vector<std::unique_ptr<QSortFilterProxyModel>> owned;
    std::vector<std::pair<Stack, QSortFilterProxyModel *>> proxies;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
    int resets = 0, resetsBefore = 0;
    std::vector<std::pair<QPersistentModelIndex, QString>> held;

    Watch(const char *name, QAbstractItemModel *model, uint64_t seed) : name(name), model(model), seed(seed) {
        testers.push_back(std::make_unique<QAbstractItemModelTester>(
            model, QAbstractItemModelTester::FailureReportingMode::Fatal));
        for (Stack stack : {Sorting, Filtering, SortingFiltered}) proxies.emplace_back(stack, makeStack(stack, model, owned));
        for (auto &proxy : owned)
            testers.push_back(std::make_unique<QAbstractItemModelTester>(
                proxy.get(), QAbstractItemModelTester::FailureReportingMode::Fatal));
        auto check = [this] { checkNow(); };
        QObject::connect(model, &QAbstractItemModel::rowsInserted, model, [this, check] { ++counts.inserts; check(); });
        QObject::connect(model, &QAbstractItemModel::rowsRemoved, model, [this, check] { ++counts.removes; check(); });
        QObject::connect(model, &QAbstractItemModel::rowsMoved, model, [this, check] { ++counts.moves; check(); });
        QObject::connect(model, &QAbstractItemModel::dataChanged, model, [this, check] { ++counts.changes; check(); });
        QObject::connect(model, &QAbstractItemModel::layoutChanged, model, [this, check] { ++counts.layouts; check(); });
        QObject::connect(model, &QAbstractItemModel::modelReset, model, [this, check] {
            ++resets;
            ++counts.resets;
            check();
        });
    }

    void checkNow() {
        ++counts.signalsChecked;
        for (auto &[stack, proxy] : proxies) {
            std::vector<std::unique_ptr<QSortFilterProxyModel>> fresh;
            QSortFilterProxyModel *made = makeStack(stack, model, fresh);
            EXPECT(agree(stack, contents(proxy), contents(made)),
                   "seed %llu: a %s proxy over the %s model, after a signal: %s != a fresh proxy's %s",
                   static_cast<unsigned long long>(seed), stackNames[stack], name, qPrintable(print(contents(proxy))),
                   qPrintable(print(contents(made))));
        }
    }

    void holdEveryRow() {
        resetsBefore = resets;
        held.clear();
        std::vector<QModelIndex> parents;
        if (qobject_cast<QAbstractListModel *>(model))
            parents.push_back(QModelIndex());
        else
            for (int s = 0; s < model->rowCount(); ++s) parents.push_back(model->index(s, 0));
        for (const QModelIndex &parent : parents)
            for (int r = 0; r < model->rowCount(parent); ++r) {
                QModelIndex index = model->index(r, 0, parent);
                held.emplace_back(QPersistentModelIndex(index),
                                  index.data(ydbview::CollectionRole).toString() + QLatin1Char('/') +
                                      index.data(ydbview::KeyRole).toString());
            }
    }

    void checkHeldRows(const Table &table) {
        if (resets != resetsBefore) return;  // a reset invalidates every index
        QSet<QString> shown;
        for (const TableSection &section : table)
            for (const Shown &row : section.rows)
                shown.insert(QString::fromStdString(row.collection + "/" + row.key));
        for (auto &[index, name] : held) {
            if (shown.contains(name)) {
                QString now = index.data(ydbview::CollectionRole).toString() + QLatin1Char('/') +
                              index.data(ydbview::KeyRole).toString();
                EXPECT(index.isValid() && now == name, "seed %llu: a persistent index of %s on the %s model shows %s",
                       static_cast<unsigned long long>(seed), qPrintable(name), this->name, qPrintable(now));
            } else {
                EXPECT(!index.isValid(), "seed %llu: %s left the %s model, its persistent index did not",
                       static_cast<unsigned long long>(seed), qPrintable(name), this->name);
            }
        }
    }

    // Each proxy against a fresh one over the table read anew.
    void checkAgainst(const Table &table, bool tree) {
        QStandardItemModel plain;
        for (const TableSection &section : table) {
            QStandardItem *parent = tree ? new QStandardItem(QString::fromStdString(section.group)) : plain.invisibleRootItem();
            for (const Shown &row : section.rows)
                parent->appendRow(new QStandardItem(
                    textOf(QString::fromStdString(row.key), QByteArray::fromStdString(row.object))));
            if (tree) plain.appendRow(parent);
        }
        for (auto &[stack, proxy] : proxies) {
            std::vector<std::unique_ptr<QSortFilterProxyModel>> fresh;
            QSortFilterProxyModel *made = makeStack(stack, &plain, fresh);
            EXPECT(agree(stack, contents(proxy), contents(made)),
                   "seed %llu: a %s proxy over the %s model, after the catch-up: %s != over the table %s",
                   static_cast<unsigned long long>(seed), stackNames[stack], name, qPrintable(print(contents(proxy))),
                   qPrintable(print(contents(made))));
        }
    }
};

// The model's rows against the table: names, objects, texts.
void checkRow(uint64_t seed, const char *name, const QModelIndex &index, const Shown &want, const std::string &group) {
    QString key = QString::fromStdString(want.key);
    EXPECT(index.data(ydbview::CollectionRole).toString() == QString::fromStdString(want.collection) &&
               index.data(ydbview::KeyRole).toString() == key &&
               index.data(ydbview::ObjectRole).toByteArray() == QByteArray::fromStdString(want.object) &&
               index.data().toString() == textOf(key, QByteArray::fromStdString(want.object)) &&
               index.data(ydbview::GroupRole).toString() == QString::fromStdString(group),
           "seed %llu: the %s model shows %s/%s = %s (%s) where the table has %s/%s = %s",
           static_cast<unsigned long long>(seed), name, qPrintable(index.data(ydbview::CollectionRole).toString()),
           qPrintable(index.data(ydbview::KeyRole).toString()),
           index.data(ydbview::ObjectRole).toByteArray().constData(), qPrintable(index.data().toString()),
           want.collection.c_str(), want.key.c_str(), want.object.c_str());
}

void checkTree(uint64_t seed, MappingsModel &tree, const Table &table) {
    EXPECT(tree.rowCount() == static_cast<int>(table.size()), "seed %llu: the tree has %d sections, the table %zu",
           static_cast<unsigned long long>(seed), tree.rowCount(), table.size());
    for (size_t s = 0; s < table.size() && static_cast<int>(s) < tree.rowCount(); ++s) {
        QModelIndex section = tree.index(static_cast<int>(s), 0);
        EXPECT(section.data().toString() == QString::fromStdString(table[s].group), "seed %llu: section %zu shows %s",
               static_cast<unsigned long long>(seed), s, qPrintable(section.data().toString()));
        EXPECT(tree.rowCount(section) == static_cast<int>(table[s].rows.size()),
               "seed %llu: section %zu has %d rows, the table %zu", static_cast<unsigned long long>(seed), s,
               tree.rowCount(section), table[s].rows.size());
        for (size_t r = 0; r < table[s].rows.size() && static_cast<int>(r) < tree.rowCount(section); ++r) {
            checkRow(seed, "tree", tree.index(static_cast<int>(r), 0, section), table[s].rows[r], table[s].group);
            ++counts.rows;
        }
    }
}

void checkFlat(uint64_t seed, FlatMappingsModel &flat, const Table &table) {
    int flatRow = 0;
    for (const TableSection &section : table)
        for (const Shown &row : section.rows) {
            if (flatRow < flat.rowCount()) checkRow(seed, "flat", flat.index(flatRow), row, section.group);
            ++flatRow;
            ++counts.rows;
        }
    EXPECT(flat.rowCount() == flatRow, "seed %llu: the flat model has %d rows, the table %d",
           static_cast<unsigned long long>(seed), flat.rowCount(), flatRow);
}

void printTable(const char *label, const Table &table) {
    std::fprintf(stderr, "  %s:", label);
    for (const TableSection &section : table) {
        std::fprintf(stderr, " %s[", section.group.c_str());
        for (const Shown &row : section.rows)
            std::fprintf(stderr, " %s/%s=%s", row.collection.c_str(), row.key.c_str(), row.object.c_str());
        std::fprintf(stderr, " ]");
    }
    std::fprintf(stderr, "\n");
}

struct Coverage {
    int dynamicGroups = 0, transactionFilters = 0, staticGroups = 0, dynamicSections = 0, fixed = 0, flexible = 0,
        pinnedAtEnd = 0, reversed = 0, dependencies = 0, consolidating = 0, lagging = 0;
} coverage;

void count(const Config &config, bool lagging) {
    coverage.dynamicGroups += config.dynamic;
    coverage.transactionFilters += config.readsTransaction;
    coverage.staticGroups += !config.dynamic;
    coverage.consolidating += config.consolidateUnder != 0;
    coverage.lagging += lagging;
    bool sections = config.allDynamicSections, fixed = false, flexible = false, end = false, reversed = false,
         offsets = false;
    for (const GroupOptions &o : config.options) {
        sections = sections || o.dynamicSection;
        fixed = fixed || o.range == 1;
        flexible = flexible || o.range == 2;
        end = end || (o.range != 0 && o.pin == YDB_PIN_END);
        reversed = reversed || o.reversed;
        offsets = offsets || o.offsets >= 0;
    }
    coverage.dynamicSections += sections;
    coverage.fixed += fixed;
    coverage.flexible += flexible;
    coverage.pinnedAtEnd += end;
    coverage.reversed += reversed;
    coverage.dependencies += offsets;
}

void replay(uint64_t seed) {
    Random rng(seed);
    ydb_database *db = nullptr;
    Writer writer;
    ydb_connection *reader = nullptr;
    HISTORY_OK(ydb_database_open(nullptr, &db));
    bool lagging = rng.below(10) == 0;
    if (lagging) HISTORY_OK(ydb_database_set_max_commits_behind(db, static_cast<uint64_t>(1 + rng.below(2))));
    HISTORY_OK(ydb_connection_open(db, &writer.connection));
    HISTORY_OK(ydb_connection_open(db, &reader));
    registerView(db, rng.below(2));
    for (int i = rng.below(6); i > 0; --i) randomCommit(writer, rng);
    Config config = randomConfig(rng);
    count(config, lagging);
    {
        MappingsModel tree(db, makeMappings(config));
        FlatMappingsModel flat(db, makeMappings(config));
        auto error = [seed](int status, const QString &message) {
            EXPECT(false, "seed %llu: error %d: %s", static_cast<unsigned long long>(seed), status, qPrintable(message));
        };
        QObject::connect(&tree, &MappingsModel::errorOccurred, &tree, error);
        QObject::connect(&flat, &FlatMappingsModel::errorOccurred, &flat, error);
        tree.setFollowCommits(false);  // caught up here, one model after the other
        flat.setFollowCommits(false);
        tree.setDisplay(display);
        flat.setDisplay(display);
        EXPECT(tree.isValid() && flat.isValid(), "seed %llu: %s", static_cast<unsigned long long>(seed),
               qPrintable(tree.lastError().message + flat.lastError().message));
        Watch watches[] = {{"tree", &tree, seed}, {"flat", &flat, seed}};
        for (int round = 0, rounds = 1 + rng.below(5); round < rounds; ++round) {
            for (int commits = 1 + rng.below(3); commits > 0; --commits) randomCommit(writer, rng);
            for (Watch &watch : watches) watch.holdEveryRow();
            tree.catchUp();
            flat.catchUp();
            Table table = readTable(reader, tree.mappings());
            EXPECT(readTable(reader, flat.mappings()) == table, "seed %llu: the two mappings differ",
                   static_cast<unsigned long long>(seed));
            if (verbose) printTable("table", table);
            checkTree(seed, tree, table);
            checkFlat(seed, flat, table);
            for (Watch &watch : watches) {
                watch.checkAgainst(table, &watch == &watches[0]);
                watch.checkHeldRows(table);
            }
            EXPECT(tree.lastError().status == YDB_OK && flat.lastError().status == YDB_OK, "seed %llu: %s%s",
                   static_cast<unsigned long long>(seed), qPrintable(tree.lastError().message),
                   qPrintable(flat.lastError().message));
            ++counts.catchUps;
        }
    }
    ydb_connection_close(reader);
    ydb_connection_close(writer.connection);
    ydb_database_close(db);
}

// Both models follow a thread that commits as fast as it can, through the
// event loop, while sorting proxies over them are read: commits land during
// catch-ups, and with max_commits_behind 3 (every other seed) catch-ups
// reset too. Once the writer is done and the models caught up, the proxies
// must agree with the table read anew.
void followABusyWriter(uint64_t seed) {
    Random rng(seed);
    ydb_database *db = nullptr;
    ydb_connection *reader = nullptr;
    HISTORY_OK(ydb_database_open(nullptr, &db));
    if (seed % 2) HISTORY_OK(ydb_database_set_max_commits_behind(db, 3));
    HISTORY_OK(ydb_connection_open(db, &reader));
    registerView(db, false);
    Config grouped = randomConfig(rng), dynamic;
    dynamic.dynamic = dynamic.readsTransaction = true;
    MappingsModel tree(db, makeMappings(grouped));
    FlatMappingsModel flat(db, makeMappings(dynamic));
    tree.setDisplay(display);
    flat.setDisplay(display);
    Watch watches[] = {{"tree", &tree, seed}, {"flat", &flat, seed}};
    std::atomic<bool> done{false};
    std::thread thread([&] {
        Writer writer;
        Random writes(seed * 7 + 1);
        HISTORY_OK(ydb_connection_open(db, &writer.connection));
        for (int i = 0; i < 150; ++i) randomCommit(writer, writes);
        ydb_connection_close(writer.connection);
        done = true;
    });
    QElapsedTimer timer;
    timer.start();
    auto behind = [&](QAbstractItemModel *, ydb_mappings *m) {
        uint64_t newest = 0, shown = 0;
        ydb_database_snapshot(db, &newest);
        ydb_mappings_snapshot_of_last_update(m, &shown);
        return shown != newest;
    };
    while (!done || behind(&tree, tree.mappings()) || behind(&flat, flat.mappings())) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        for (Watch &watch : watches) contents(watch.proxies[0].second);
        if (timer.elapsed() > 20000) {
            EXPECT(false, "busy writer %llu: the models did not catch up in 20 s", static_cast<unsigned long long>(seed));
            break;
        }
    }
    thread.join();
    Table table = readTable(reader, tree.mappings()), flatTable = readTable(reader, flat.mappings());
    checkTree(seed, tree, table);
    checkFlat(seed, flat, flatTable);
    watches[0].checkAgainst(table, true);
    watches[1].checkAgainst(flatTable, false);
    ydb_connection_close(reader);
    tree.close();
    flat.close();
    ydb_database_close(db);
}

}  // namespace

int main(int argc, char **argv) {
    // Hundreds of throwaway databases: their fsyncs, not the models, would
    // take most of the time on a disk. Temporary databases go to memory
    // where there is a place for it (and TMPDIR was not chosen).
    if (!qEnvironmentVariableIsSet("TMPDIR") && access("/dev/shm", W_OK) == 0) setenv("TMPDIR", "/dev/shm", 1);
    QCoreApplication app(argc, argv);
    QElapsedTimer timer;
    timer.start();
    if (argc > 1) {
        verbose = true;
        replay(std::strtoull(argv[1], nullptr, 0));
        std::printf("%d failed\n", failures);
        return failures != 0;
    }
    int histories = qEnvironmentVariableIsSet("YDBVIEW_QT_HISTORIES") ? qEnvironmentVariableIntValue("YDBVIEW_QT_HISTORIES") : 300;
    for (int h = 0; h < histories; ++h) replay(0x51C0FFEEu + static_cast<uint64_t>(h));
    qint64 histories_ms = timer.elapsed();
    for (uint64_t seed = 1; seed <= 4; ++seed) followABusyWriter(seed);
    std::printf("%d histories, %ld catch-ups (%ld resets), %ld rows checked; proxies checked at %ld signals "
                "(%ld inserts, %ld removals, %ld moves, %ld dataChanged, %ld layout changes); 4 busy writers "
                "followed; %.1f s (histories %.1f s)\n",
                histories, counts.catchUps, counts.resets, counts.rows, counts.signalsChecked, counts.inserts,
                counts.removes, counts.moves, counts.changes, counts.layouts, static_cast<double>(timer.elapsed()) / 1000,
                static_cast<double>(histories_ms) / 1000);
    std::printf("configurations: %d static, %d dynamic groups (%d reading the transaction), %d dynamic sections, "
                "%d fixed ranges, %d flexible, %d pinned at the end, %d reversed, %d dependencies, "
                "%d consolidating, %d lagging\n",
                coverage.staticGroups, coverage.dynamicGroups, coverage.transactionFilters, coverage.dynamicSections,
                coverage.fixed, coverage.flexible, coverage.pinnedAtEnd, coverage.reversed, coverage.dependencies,
                coverage.consolidating, coverage.lagging);
    // Not vacuous: every signal and every configuration happened.
    bool covered = counts.resets && counts.inserts && counts.removes && counts.moves && counts.changes &&
                   counts.layouts && coverage.staticGroups && coverage.dynamicGroups && coverage.transactionFilters &&
                   coverage.dynamicSections && coverage.fixed && coverage.flexible && coverage.pinnedAtEnd &&
                   coverage.reversed && coverage.dependencies && coverage.consolidating && coverage.lagging;
    if (!covered && histories >= 100) {
        std::printf("not every kind of signal or configuration was covered\n");
        ++failures;
    }
    std::printf("%d failed\n", failures);
    return failures != 0;
}
