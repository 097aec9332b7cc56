// test_edges.cpp -- the models' edges: null handles and a misspelt view give
// an empty model with a clear error (never a crash); following commits
// through the event loop (QSocketNotifier), from another thread too; a model
// that fell too far behind resets, and answers what it cannot read without
// failing meanwhile; close(); a closed database; roles and display hooks.
#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>

#include <thread>

#include "histories.h"
#include "ydbview-qt/models.h"

using namespace histories;
using ydbview::FlatMappingsModel;
using ydbview::MappingsModel;

namespace {

int passed = 0, failed = 0;

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (cond) {                                                               \
            ++passed;                                                             \
        } else {                                                                  \
            ++failed;                                                             \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                         \
    } while (0)

const char *const allGroups[] = {"a", "b", "c", "d", "e"};

ydb_mappings *mappingsOf(const char *view = VIEW) {
    ydb_mappings *m = nullptr;
    HISTORY_OK(ydb_mappings_new(view, allGroups, 5, &m));
    return m;
}

// Runs the event loop for a while: enough for a notifier to fire.
void spinFor(int ms) {
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
}

QStringList keys(const QAbstractItemModel &flat) {
    QStringList out;
    for (int r = 0; r < flat.rowCount(); ++r) out << flat.index(r, 0).data(ydbview::KeyRole).toString();
    return out;
}

void nullHandles(ydb_database *db) {
    MappingsModel noDatabase(nullptr, mappingsOf());  // the mappings are freed all the same
    FlatMappingsModel noMappings(db, nullptr);
    CHECK(!noDatabase.isValid() && noDatabase.lastError().status == YDB_MISUSE);
    CHECK(noDatabase.lastError().message.contains(QStringLiteral("database")));
    CHECK(!noMappings.isValid() && noMappings.lastError().message.contains(QStringLiteral("mappings")));
    noDatabase.catchUp();
    noMappings.catchUp();
    noDatabase.close();
    CHECK(noDatabase.rowCount() == 0 && noMappings.rowCount() == 0 && noMappings.mappings() == nullptr);
    CHECK(!noDatabase.index(0, 0).isValid() && !noMappings.index(0, 0).data().isValid());
    QAbstractItemModelTester tester(&noDatabase, QAbstractItemModelTester::FailureReportingMode::Fatal);

    MappingsModel misspelt(db, mappingsOf("byGroupRnak"));
    CHECK(!misspelt.isValid() && misspelt.lastError().status == YDB_NOTFOUND);
    CHECK(misspelt.lastError().message.contains(QStringLiteral("byGroupRnak")));
}

void followsThroughTheEventLoop(ydb_database *db, ydb_connection *writer) {
    FlatMappingsModel flat(db, mappingsOf());
    MappingsModel tree(db, mappingsOf());
    QAbstractItemModelTester t1(&flat, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester t2(&tree, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy resets(&flat, &QAbstractItemModel::modelReset);
    int before = flat.rowCount();
    put(writer, "k1", "a:1");
    CHECK(spinUntil([&] { return flat.rowCount() == before + 1 && tree.rowCount() > 0; }));
    // Another thread's commits, on its own connection.
    std::thread thread([db] {
        ydb_connection *other = nullptr;
        HISTORY_OK(ydb_connection_open(db, &other));
        for (int i = 0; i < 20; ++i) put(other, ("t" + std::to_string(i)).c_str(), "b:5");
        ydb_connection_close(other);
    });
    thread.join();
    CHECK(spinUntil([&] { return flat.rowCount() == before + 21; }));
    CHECK(resets.count() == 0);  // commits are followed step by step, never by a reset
    // setFollowCommits(false): the descriptor is no longer watched.
    flat.setFollowCommits(false);
    put(writer, "k2", "a:2");
    spinFor(200);
    CHECK(flat.rowCount() == before + 21);
    flat.catchUp();
    CHECK(flat.rowCount() == before + 22);
}

void lagging(ydb_database *db, ydb_connection *writer) {
    HISTORY_OK(ydb_database_set_max_commits_behind(db, 1));
    FlatMappingsModel flat(db, mappingsOf());
    flat.setDisplay([](const ydbview::ShownRow &row) { return QString::fromUtf8(row.object); });
    QSignalSpy resets(&flat, &QAbstractItemModel::modelReset);
    QSignalSpy errors(&flat, &FlatMappingsModel::errorOccurred);
    put(writer, "late", "c:0");
    put(writer, "later", "c:1");
    put(writer, "latest", "c:2");
    // Released: rows not read yet answer their key, and no object, until
    // the catch-up (queued) resets the model.
    QModelIndex first = flat.index(0, 0);
    CHECK(first.data(ydbview::KeyRole).isValid());
    CHECK(!first.data(ydbview::ObjectRole).isValid());
    CHECK(first.data().toString() == first.data(ydbview::KeyRole).toString());
    QAbstractItemModelTester tester(&flat, QAbstractItemModelTester::FailureReportingMode::Fatal);
    CHECK(spinUntil([&] { return resets.count() > 0 && keys(flat).contains(QStringLiteral("latest")); }));
    CHECK(flat.index(0, 0).data(ydbview::ObjectRole).isValid());
    CHECK(errors.count() == 0);
    HISTORY_OK(ydb_database_set_max_commits_behind(db, 1000));
}

class Upper : public FlatMappingsModel {
public:
    using FlatMappingsModel::FlatMappingsModel;

protected:
    QVariant displayData(const ydbview::ShownRow &row) const override { return row.key.toUpper(); }
};

void rolesAndDisplay(ydb_database *db, ydb_connection *writer) {
    put(writer, "meta", "d:9");
    FlatMappingsModel flat(db, mappingsOf());
    const QHash<int, QByteArray> names = flat.roleNames();
    for (const char *name : {"display", "key", "collection", "object", "objectText", "metadata", "group", "section"})
        CHECK(names.values().contains(QByteArray(name)));
    int row = static_cast<int>(keys(flat).indexOf(QStringLiteral("meta")));
    QModelIndex index = flat.index(row, 0);
    CHECK(index.data().toString() == QStringLiteral("meta"));  // the key by default
    CHECK(index.data(ydbview::ObjectTextRole).toString() == QStringLiteral("d:9"));
    CHECK(index.data(ydbview::GroupRole).toString() == QStringLiteral("d"));
    CHECK(!index.data(ydbview::MetadataRole).isValid());  // no metadata
    CHECK(index.data(ydbview::CollectionRole).toString() == QStringLiteral("c1"));
    Upper upper(db, mappingsOf());
    CHECK(upper.index(row, 0).data().toString() == QStringLiteral("META"));
    MappingsModel tree(db, mappingsOf());
    QModelIndex section = tree.index(3, 0);
    CHECK(section.data().toString() == QStringLiteral("d") && section.data(ydbview::SectionRole).toInt() == 3);
    CHECK(tree.index(0, 0, section).data(ydbview::SectionRole).toInt() == 3);
    CHECK(tree.flags(tree.index(0, 0, section)) & Qt::ItemNeverHasChildren);
}

void closing(ydb_database *db, ydb_connection *writer) {
    MappingsModel tree(db, mappingsOf());
    int sections = tree.rowCount();
    tree.close();
    CHECK(!tree.isValid());
    put(writer, "after", "e:1");
    tree.catchUp();
    spinFor(200);
    CHECK(tree.rowCount() == sections);  // keeps what it showed
    CHECK(tree.index(0, 0, tree.index(0, 0)).data(ydbview::KeyRole).isValid());
}

void databaseClosedUnderTheModel() {
    ydb_database *db = nullptr;
    ydb_connection *writer = nullptr;
    HISTORY_OK(ydb_database_open(nullptr, &db));
    HISTORY_OK(ydb_connection_open(db, &writer));
    registerView(db, false);
    put(writer, "x1", "a:1");
    auto *flat = new FlatMappingsModel(db, mappingsOf());
    QSignalSpy errors(flat, &FlatMappingsModel::errorOccurred);
    ydb_connection_close(writer);
    ydb_database_close(db);  // misuse: the model outlives its database
    flat->catchUp();
    CHECK(errors.count() > 0 && flat->lastError().status == YDB_CLOSED);
    spinFor(200);
    CHECK(flat->rowCount() == 0);  // reset to nothing it could read; no crash
    delete flat;
}

}  // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    ydb_database *db = nullptr;
    ydb_connection *writer = nullptr;
    HISTORY_OK(ydb_database_open(nullptr, &db));
    HISTORY_OK(ydb_connection_open(db, &writer));
    registerView(db, false);
    nullHandles(db);
    followsThroughTheEventLoop(db, writer);
    lagging(db, writer);
    rolesAndDisplay(db, writer);
    closing(db, writer);
    ydb_connection_close(writer);
    ydb_database_close(db);
    databaseClosedUnderTheModel();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
