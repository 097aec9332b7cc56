// live_list.cpp -- a QML window showing a live grouped list: tasks in
// sections by status ("todo", "doing", "done"), sorted by priority then
// title, in a FlatMappingsModel that another thread changes through its own
// connection (adding, editing, moving and finishing tasks).
//
//   ydbview-qt-live-list                        runs until the window closes
//   ydbview-qt-live-list --screenshot FILE      after 12 commits, saves the window
//   ydbview-qt-live-list --commits N --quit     N commits, then quits (a test)
//
// scripts/screenshot-qt.sh runs the screenshot form under Xvfb.
#include <QCommandLineParser>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include <ydbview-qt/models.h>

namespace {

// Objects are "status|priority|title".
std::string field(const void *object, size_t size, int which) {
    std::string text(static_cast<const char *>(object), size);
    size_t start = 0;
    for (int i = 0; i < which && start != std::string::npos; ++i) {
        start = text.find('|', start);
        if (start != std::string::npos) ++start;
    }
    if (start == std::string::npos) return {};
    return text.substr(start, text.find('|', start) - start);
}

int byStatus(void *, ydb_txn *, const ydb_view_row *row, ydb_group_result *result) {
    return ydb_group_result_set(result, field(row->object, row->object_size, 0).c_str());
}

int byPriority(void *, ydb_txn *, const char *, const ydb_view_row *row, ydb_sort_key *key) {
    ydb_sort_key_append_int64(key, std::atoi(field(row->object, row->object_size, 1).c_str()), 0);
    return ydb_sort_key_append_text(key, field(row->object, row->object_size, 2).c_str(), 0);
}

const char *const titles[] = {"Water the plants", "Call Ana", "Review the pull request", "Book the train",
                              "Write the release notes", "Fix the flaky test", "Order new cables",
                              "Plan the offsite", "Reply to Jonas", "Renew the certificate", "Clean the desk",
                              "Update the roadmap", "Back up the laptop", "Pay the invoice"};
const char *const statuses[] = {"todo", "doing", "done"};

void put(ydb_connection *writer, const std::string &key, const std::string &object) {
    ydb_txn *txn = nullptr;
    if (ydb_txn_begin_read_write(writer, &txn) != YDB_OK) return;
    ydb_txn_set_object(txn, "tasks", key.c_str(), object.data(), object.size(), nullptr, 0);
    ydb_txn_commit(txn);
}

// The other thread: one change per commit, on its own connection.
void write(ydb_database *db, int commits, int pauseMs, std::atomic<bool> &stop, std::atomic<bool> &done) {
    ydb_connection *writer = nullptr;
    ydb_connection_open(db, &writer);
    std::mt19937 random(7);
    auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
    bool present[14] = {true, true, true, true, true, true, true, true};  // the first 8 rows
    for (int i = 0; (commits < 0 || i < commits) && !stop; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(pauseMs));
        int n = pick(14);
        std::string key = "t" + std::to_string(n);
        if (present[n] && pick(8) == 0) {
            ydb_txn *txn = nullptr;
            if (ydb_txn_begin_read_write(writer, &txn) != YDB_OK) continue;
            ydb_txn_remove_object(txn, "tasks", key.c_str());
            ydb_txn_commit(txn);
            present[n] = false;
        } else {
            put(writer, key, std::string(statuses[pick(3)]) + "|" + std::to_string(1 + pick(5)) + "|" + titles[n]);
            present[n] = true;
        }
    }
    ydb_connection_close(writer);
    done = true;
}

}  // namespace

int main(int argc, char **argv) {
    QGuiApplication app(argc, argv);
    QCommandLineParser options;
    options.addHelpOption();
    QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Save the window to FILE and quit."),
                                  QStringLiteral("FILE"));
    QCommandLineOption commitsOption(QStringLiteral("commits"), QStringLiteral("Commits the writer makes."),
                                     QStringLiteral("N"), QStringLiteral("-1"));
    QCommandLineOption quit(QStringLiteral("quit"), QStringLiteral("Quit once the commits are shown."));
    options.addOptions({screenshot, commitsOption, quit});
    options.process(app);
    const bool grab = options.isSet(screenshot);
    const int commits = grab ? 12 : options.value(commitsOption).toInt();

    ydb_database *db = nullptr;
    ydb_connection *seed = nullptr;
    if (ydb_database_open(nullptr, &db) != YDB_OK || ydb_connection_open(db, &seed) != YDB_OK) {
        std::fprintf(stderr, "%s\n", ydb_errmsg());
        return 1;
    }
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = byStatus;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = byPriority;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    ydb_view_register(db, "byStatus", &def, nullptr, nullptr);
    for (int i = 0; i < 8; ++i)
        put(seed, "t" + std::to_string(i),
            std::string(statuses[i % 3]) + "|" + std::to_string(1 + (i * 3) % 5) + "|" + titles[i]);
    ydb_connection_close(seed);

    int status = 0;
    {
        ydb_mappings *mappings = nullptr;
        ydb_mappings_new("byStatus", statuses, 3, &mappings);
        ydbview::FlatMappingsModel model(db, mappings);  // the model owns the mappings from here on
        model.setDisplay([](const ydbview::ShownRow &row) {
            return QString::fromStdString(field(row.object.constData(), static_cast<size_t>(row.object.size()), 2));
        });
        QQmlApplicationEngine engine;
        engine.setInitialProperties(
            {{QStringLiteral("tasks"), QVariant::fromValue(&model)}, {QStringLiteral("animate"), !grab}});
        engine.load(QUrl(QStringLiteral("qrc:/ydbview/examples/live_list.qml")));
        if (engine.rootObjects().isEmpty()) return 1;
        auto *window = qobject_cast<QQuickWindow *>(engine.rootObjects().first());

        // The window counts the commits the model has shown.
        uint64_t first = 0;
        ydb_database_snapshot(db, &first);
        QObject::connect(&model, &ydbview::FlatMappingsModel::caughtUp, window, [&] {
            uint64_t snapshot = 0;
            ydb_mappings_snapshot_of_last_update(model.mappings(), &snapshot);
            window->setProperty("commits", static_cast<int>(snapshot - first));
        });
        std::atomic<bool> stop{false}, done{false};
        std::thread writer(write, db, commits, commits >= 0 ? 60 : 700, std::ref(stop), std::ref(done));
        // A run of `commits`: once the writer is done and the model shows
        // its last commit, quit or save the window.
        QTimer poll;
        QObject::connect(&poll, &QTimer::timeout, window, [&] {
            uint64_t newest = 0, shown = 0;
            ydb_database_snapshot(db, &newest);
            ydb_mappings_snapshot_of_last_update(model.mappings(), &shown);
            if (!done || shown != newest) return;
            poll.stop();
            std::printf("caught up with %d commits: %d rows\n", static_cast<int>(shown - first), model.rowCount());
            std::fflush(stdout);
            if (grab) {
                // Once the window has rendered the last change.
                QTimer::singleShot(300, window, [&] {
                    bool saved = window->grabWindow().save(options.value(screenshot));
                    std::printf("%s %s\n", saved ? "saved" : "could not save", qPrintable(options.value(screenshot)));
                    app.exit(saved ? 0 : 1);
                });
            } else if (options.isSet(quit)) {
                app.quit();
            }
        });
        if (commits >= 0) {
            poll.start(100);
            QTimer::singleShot(20000, &app, [&] { app.exit(2); });  // never hang a test
        }
        status = app.exec();
        stop = true;
        writer.join();
    }
    ydb_database_close(db);
    return status;
}
