/*
** follower.h -- what both models share (private to the library): the two
** connections, the mappings, the shadow of the table, the rows' values
** read, catching up and walking the edit script. The model classes only
** translate runs of steps into Qt's calls (TreeFollower, FlatFollower in
** models.cpp).
*/
#ifndef YDBVIEW_QT_FOLLOWER_H
#define YDBVIEW_QT_FOLLOWER_H

#include <QByteArray>
#include <QHash>
#include <QPointer>
#include <QSocketNotifier>

#include <functional>
#include <memory>
#include <vector>

#include "rowlist.h"
#include "ydbview-qt/models.h"

namespace ydbview::detail {

/* One row of the table: its name, and its object and metadata once a view
** asked for them (kept while the row is shown and unchanged). */
struct Row {
    QByteArray collection;  // UTF-8; constData() is NUL-terminated for the C API
    QByteArray key;
    QByteArray object;
    QByteArray metadata;
    bool hasValue = false;
    bool hasMetadata = false;
    // Changed by the commits of the catch-up in progress, and its step has
    // not come yet: answered as the view saw it, at the old snapshot.
    bool pending = false;
    bool held = false;  // a persistent index points at it (during a layout change)
};

struct Section {
    quintptr id = 0;  // what a tree's child index carries: numbers shift, ids do not
    QByteArray group;
    ChunkedList<Row *> rows;
};

/* An edit step, copied out of the changeset (whose strings it borrows). */
struct Step {
    int type = 0;
    size_t section = 0, row = 0, toSection = 0, toRow = 0, finalSection = 0, finalRow = 0;
    QByteArray group;
    Row *arriving = nullptr;  // an insert: the row it brings (read before any signal)
};

class Follower {
public:
    Follower(QAbstractItemModel *model, ydb_database *db, ydb_mappings *mappings);
    virtual ~Follower();
    Follower(const Follower &) = delete;
    Follower &operator=(const Follower &) = delete;

    // -- the shadow, as the view has been told of it --
    size_t sectionCount() const { return sections_.size(); }
    const Section &section(size_t s) const { return *sections_[s]; }
    int sectionOfId(quintptr id) const;
    size_t totalRows() const;
    /* The row at `flat` of all sections' rows, and its section. */
    Row *rowAtFlat(size_t flat, size_t *outSection) const;
    size_t flatOf(size_t section, size_t row) const;

    /* A row's answer for `role` (not Qt::DisplayRole, which the model asks
    ** displayData()); section is its section's number. */
    QVariant rowData(Row *row, size_t section, int role);
    ShownRow shown(Row *row);
    QVariant display(const ShownRow &row) const;

    static QHash<int, QByteArray> roleNames();

    // -- following --
    void catchUp();
    void close();
    void setFollow(bool follow);
    bool follows() const { return follow_; }
    void setDisplay(DisplayFunction display) { display_ = std::move(display); }

    ydb_mappings *mappings() const { return mappings_; }
    const ModelError &lastError() const { return error_; }
    bool valid() const { return valid_ && !closed_; }

protected:
    // The Qt calls, per model. A move reports whether it was announced
    // (the flat model does not announce one that keeps its place).
    virtual void beginReset() = 0;
    virtual void endReset() = 0;
    virtual void sectionsInserting(size_t section, size_t count) = 0;
    virtual void sectionsInserted() = 0;
    virtual void sectionsRemoving(size_t section, size_t count) = 0;
    virtual void sectionsRemoved() = 0;
    virtual void rowsInserting(size_t section, size_t row, size_t count) = 0;
    virtual void rowsInserted() = 0;
    virtual void rowsRemoving(size_t section, size_t row, size_t count) = 0;
    virtual void rowsRemoved() = 0;
    virtual bool rowMoving(size_t section, size_t row, size_t toSection, size_t toRow) = 0;
    virtual void rowMoved() = 0;
    virtual void rowsReloaded(size_t section, size_t row, size_t count) = 0;
    /* layoutAboutToBeChanged, `apply` (the steps, silently), persistent
    ** indexes moved to their rows' new places, layoutChanged. */
    virtual void layoutChange(const std::function<void()> &apply) = 0;
    /* Where the rows in `held` are once a layout change applied its steps:
    ** one pass over the table, looking only at rows marked held. */
    QHash<Row *, std::pair<int, int>> placesOf(const std::vector<Row *> &held) const;
    virtual void emitCaughtUp() = 0;
    virtual void emitError(int status, const QString &message) = 0;

    int note(int rc);
    void setError(int status, const char *what);
    void fail(int status, const char *what);
    /* Qt refused a call (a bug somewhere): the next catch-up resets. */
    void oweReset() { resetOwed_ = true; }
    QAbstractItemModel *model_;
    std::vector<std::unique_ptr<Section>> sections_;

private:
    bool open(ydb_database *db);
    int readNewestTable();
    int readTable(ydb_txn *txn, std::vector<std::unique_ptr<Section>> *out);
    int newerCommits();
    void advanceSpare();
    void reset();
    void catchUpOnce();
    void markChanged();
    int readArriving(std::vector<Step> &steps);
    void apply(std::vector<Step> &steps);
    void applyRun(std::vector<Step> &steps, size_t first, size_t count, bool silent);
    void announceEverything();
    void caughtUp();
    void clearCommits();
    void clearShadow();
    void deleteRow(Row *row);
    void scheduleCatchUp();
    const QByteArray &lookupName(const char *collection, const char *key);
    /* A row's name as byName_ keys it: "collection\0key". */
    static QByteArray nameOf(const char *collection, const char *key);
    static QByteArray nameOf(const Row *row);
    void watch();
    void swapConnections();
    bool readValue(Row *row);

    ydb_mappings *mappings_ = nullptr;
    ydb_connection *shown_ = nullptr;  // at the snapshot the model shows (or past it)
    ydb_connection *spare_ = nullptr;  // at or past it; during a catch-up, at the old one
    std::vector<ydb_notification *> spareCommits_;  // commits past shown_, seen by spare_
    bool spareLost_ = false;  // spare_ lost commits past shown_: the next catch-up resets
    QPointer<QSocketNotifier> shownNotifier_, spareNotifier_;
    QHash<QByteArray, Row *> byName_;  // "collection\0key" -> its row in the table
    std::vector<Row *> pendingRows_;   // marked pending by the catch-up in progress
    std::vector<Row *> leftRows_;      // removed during it: freed once it is done
    quintptr lastSectionId_ = 0;
    DisplayFunction display_;
    ModelError error_;
    QString noted_;  // the message of the last failed call
    QByteArray nameBuffer_;
    bool valid_ = false, closed_ = false, follow_ = true, suspended_ = false;
    bool spareBehind_ = false;  // spare_ still at the snapshot before the last catch-up
    bool applying_ = false, again_ = false, resetOwed_ = false, scheduled_ = false;
};

}  // namespace ydbview::detail

#endif
