/*
** ydbview-qt/models.h -- Qt 6 item models over a ydbview mappings.
**
**   MappingsModel      a tree: each section is a top-level item (its group),
**                      the section's rows are its children; one column.
**   FlatMappingsModel  every section's rows as one list (QAbstractListModel).
**
** Both follow the database on the Qt event loop of the thread they live in:
** a QSocketNotifier watches the wakeup descriptor of the model's connection
** (ydb_connection_wakeup_fd), and when commits land the model catches up,
** computes the changeset and applies its edit script with the matching
** beginInsertRows / beginRemoveRows / beginMoveRows ... end calls (adjacent
** steps of one kind as one range), dataChanged for reloaded rows, one layout
** change for a script that moves two rows or more, and a reset only when
** the commits in between are gone (ydb_database_set_max_commits_behind).
** Until a row's own step, the model answers that row as the view last saw
** it, so a QSortFilterProxyModel stacked on top stays right.
**
** Ownership: the model takes `mappings` (it frees it with ydb_mappings_free
** when destroyed, also when construction failed) and borrows `db`, which
** must outlive it: destroy models before ydb_database_close. It opens two
** connections of its own and closes them in close() or its destructor.
**
** Errors: nothing throws. A failure sets lastError() and emits
** errorOccurred(status, message); the model then shows a consistent table
** (the one it had, or the newest one after a reset). Null handles give an
** empty model whose lastError() says which was null.
**
** docs/qt.md has the whole story: building, QML, threads, costs.
*/
#ifndef YDBVIEW_QT_MODELS_H
#define YDBVIEW_QT_MODELS_H

#include <QAbstractItemModel>
#include <QAbstractListModel>
#include <QByteArray>
#include <QString>
#include <QVariant>

#include <functional>
#include <memory>

#include "ydbview.h"

#if defined(YDBVIEW_QT_BUILDING)
#define YDBVIEW_QT_EXPORT Q_DECL_EXPORT
#else
#define YDBVIEW_QT_EXPORT Q_DECL_IMPORT
#endif

namespace ydbview {

namespace detail {
class Follower;
class TreeFollower;
class FlatFollower;
}  // namespace detail

/* Item data roles beyond Qt::DisplayRole; roleNames() gives QML the names
** in quotes. */
enum Roles {
    CollectionRole = Qt::UserRole + 1,  /* "collection": QString */
    KeyRole,                            /* "key": QString */
    ObjectRole,                         /* "object": QByteArray (QML: ArrayBuffer) */
    MetadataRole,                       /* "metadata": QByteArray, or an invalid
                                           QVariant when the row has none */
    GroupRole,                          /* "group": the group its section shows */
    SectionRole,                        /* "section": its section's number */
    ObjectTextRole                      /* "objectText": the object as UTF-8 text */
};

/* A row as a display function (or displayData()) receives it: as the view
** is told of it. */
struct ShownRow {
    QString collection;
    QString key;
    QByteArray object;
    QByteArray metadata;
    bool hasMetadata = false;
    bool readable = true;  /* false: its values could not be read (see docs/qt.md) */
};

using DisplayFunction = std::function<QVariant(const ShownRow &row)>;

/* The last failure of a model: a YDB_* status and the library's message. */
struct ModelError {
    int status = YDB_OK;
    QString message;
};

/*
** What both models share, exposed the same way on each (the classes below
** repeat these members because a QObject class cannot take them from a
** common template). Documented here once:
**
**   catchUp()        moves to the newest snapshot and applies the changeset
**                    now (tests; models that do not follow commits).
**   close()          stops following and closes the model's connections;
**                    the model keeps its rows (values read before, keys).
**   setFollowCommits(false)  stops watching the descriptor (catchUp() still
**                    works); true watches it again.
**   setDisplay(f)    what Qt::DisplayRole answers for a row (default: key).
**   mappings()       the mappings (borrowed, at the model's snapshot; do
**                    not change them or free them).
**   lastError()      the last failure (status YDB_OK when none).
**   isValid()        false when construction failed or after close().
**   caughtUp()       emitted after each catch-up that changed the model.
**   errorOccurred(status, message)  emitted on every failure.
*/

class YDBVIEW_QT_EXPORT MappingsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    MappingsModel(ydb_database *db, ydb_mappings *mappings, QObject *parent = nullptr);
    ~MappingsModel() override;

    void setDisplay(DisplayFunction display);
    void setFollowCommits(bool follow);
    bool followsCommits() const;
    ydb_mappings *mappings() const;
    ModelError lastError() const;
    bool isValid() const;

    QModelIndex index(int row, int column, const QModelIndex &parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    bool hasChildren(const QModelIndex &parent = QModelIndex()) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

public Q_SLOTS:
    void catchUp();
    void close();

Q_SIGNALS:
    void caughtUp();
    void errorOccurred(int status, const QString &message);

protected:
    /* Qt::DisplayRole of a row: the display function's answer, or the key.
    ** Override it instead of setting a display function if you like. */
    virtual QVariant displayData(const ShownRow &row) const;

private:
    friend class detail::Follower;
    friend class detail::TreeFollower;
    std::unique_ptr<detail::TreeFollower> d;
};

class YDBVIEW_QT_EXPORT FlatMappingsModel : public QAbstractListModel {
    Q_OBJECT
public:
    FlatMappingsModel(ydb_database *db, ydb_mappings *mappings, QObject *parent = nullptr);
    ~FlatMappingsModel() override;

    void setDisplay(DisplayFunction display);
    void setFollowCommits(bool follow);
    bool followsCommits() const;
    ydb_mappings *mappings() const;
    ModelError lastError() const;
    bool isValid() const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

public Q_SLOTS:
    void catchUp();
    void close();

Q_SIGNALS:
    void caughtUp();
    void errorOccurred(int status, const QString &message);

protected:
    virtual QVariant displayData(const ShownRow &row) const;

private:
    friend class detail::Follower;
    friend class detail::FlatFollower;
    std::unique_ptr<detail::FlatFollower> d;
};

}  // namespace ydbview

#endif
