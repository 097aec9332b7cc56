// test_qml.cpp -- the README's QML snippet (examples/snippet.qml) loads in a
// window (offscreen), its ListView shows as many rows as the model, each
// delegate reading `key` and `objectText`, and it follows a commit.
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QQuickItem>
#include <QQuickView>

#include "histories.h"
#include "ydbview-qt/models.h"

using namespace histories;

namespace {

int failed = 0;
#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            ++failed;                                                                         \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                     \
    } while (0)

QStringList texts(QQuickItem *list, int count) {
    QStringList out;
    for (int i = 0; i < count; ++i) {
        QQuickItem *item = nullptr;
        QMetaObject::invokeMethod(list, "itemAtIndex", Q_RETURN_ARG(QQuickItem *, item), Q_ARG(int, i));
        out << (item ? item->property("text").toString() : QStringLiteral("(none)"));
    }
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    QGuiApplication app(argc, argv);
    ydb_database *db = nullptr;
    ydb_connection *writer = nullptr;
    HISTORY_OK(ydb_database_open(nullptr, &db));
    HISTORY_OK(ydb_connection_open(db, &writer));
    registerView(db, false);
    put(writer, "k1", "a:1");
    put(writer, "k2", "b:2");
    put(writer, "k3", "a:3");
    const char *groups[] = {"a", "b"};
    ydb_mappings *mappings = nullptr;
    HISTORY_OK(ydb_mappings_new(VIEW, groups, 2, &mappings));
    {
        ydbview::FlatMappingsModel model(db, mappings);
        QQuickView view;
        view.setInitialProperties({{QStringLiteral("rows"), QVariant::fromValue(&model)}});
        view.setSource(QUrl(QStringLiteral("qrc:/ydbview/examples/snippet.qml")));
        CHECK(view.status() == QQuickView::Ready);
        for (const QQmlError &error : view.errors()) std::fprintf(stderr, "%s\n", qPrintable(error.toString()));
        view.show();
        QQuickItem *list = view.rootObject();
        CHECK(list != nullptr);
        if (list != nullptr) {
            CHECK(spinUntil([&] { return list->property("count").toInt() == model.rowCount(); }));
            CHECK(model.rowCount() == 3);
            CHECK(texts(list, 3) == (QStringList{QStringLiteral("k1: a:1"), QStringLiteral("k3: a:3"),
                                                 QStringLiteral("k2: b:2")}));
            put(writer, "k4", "a:2");  // the model follows; so does the ListView
            CHECK(spinUntil([&] { return list->property("count").toInt() == 4; }));
            CHECK(spinUntil([&] { return texts(list, 4).value(1) == QStringLiteral("k4: a:2"); }));
            std::printf("ListView shows %s\n", qPrintable(texts(list, 4).join(QStringLiteral(", "))));
        }
    }
    ydb_connection_close(writer);
    ydb_database_close(db);
    std::printf("%s\n", failed ? "failed" : "ok");
    return failed != 0;
}
