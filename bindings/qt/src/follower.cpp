/*
** follower.cpp -- catching up and walking the edit script, for both models.
**
** What the model answers must agree with what it has announced, at every
** signal: a QSortFilterProxyModel re-sorts or re-filters a row only when
** told (dataChanged, the row's insertion) and reads the other rows' data()
** at each structural signal. So, as the Python models (docs/list-views.md):
**
** - between two steps the model answers from a shadow of the table;
** - a row's object and metadata are read when a view first asks and kept
**   while the row is shown and unchanged;
** - during a catch-up, a row the commits changed is answered as the view saw
**   it until its own step (insertion or reload): from what was read before,
**   or else read at the old snapshot through the second connection. One
**   connection stays at the snapshot the model shows, the other at or past
**   it; a catch-up moves the second forward, makes it the model's, and
**   moves the first forward once the steps are done.
*/
#include "follower.h"

#include <QMetaObject>
#include <QSet>
#include <QTimer>

#include <utility>

namespace ydbview::detail {

namespace {

// Steps Qt takes several of in one begin/end pair (or one dataChanged) when
// they touch adjacent places; a move is always a pair of its own.
bool ranged(int type) { return type != YDB_STEP_MOVE_ROW; }

// Whether `step` extends the run [first, last] (`count` steps): the script
// removes bottom-up and inserts top-down, so a run of removals goes up one
// place at a time, a run of inserts (or reloads) down one.
bool continues(const Step &first, const Step &last, size_t count, const Step &step) {
    if (step.type != first.type || !ranged(step.type)) return false;
    switch (step.type) {
    case YDB_STEP_INSERT_SECTION: return step.section == first.section + count;
    case YDB_STEP_REMOVE_SECTION: return step.section + 1 == last.section;
    default: break;
    }
    if (step.section != first.section) return false;
    switch (step.type) {
    case YDB_STEP_INSERT_ROW: return step.row == first.row + count;
    case YDB_STEP_REMOVE_ROW: return step.row + 1 == last.row;
    default: return step.row == last.row + 1;  // reloads
    }
}

// A script that moves this many rows or more goes to Qt as one layout
// change: a QSortFilterProxyModel answers every source move by sorting all
// its rows again, so two moves would cost it two full sorts.
constexpr size_t LAYOUT_CHANGE_MOVES = 2;
// How many times a reset reads the newest table before it gives up (each
// attempt fails only when more than max_commits_behind commits land while
// it reads).
constexpr int RESET_ATTEMPTS = 3;

}  // namespace

Follower::Follower(QAbstractItemModel *model, ydb_database *db, ydb_mappings *mappings)
    : model_(model), mappings_(mappings) {
    if (db == nullptr || mappings == nullptr) {
        error_ = {YDB_MISUSE, db == nullptr ? QStringLiteral("the database handle is NULL")
                                            : QStringLiteral("the mappings handle is NULL")};
        return;
    }
    valid_ = open(db);
}

Follower::~Follower() {
    close();
    clearShadow();
    ydb_mappings_free(mappings_);
}

bool Follower::open(ydb_database *db) {
    // The spare is opened first, so that its first move forward reports
    // every commit after the other one's snapshot (see advanceSpare).
    int rc = note(ydb_connection_open(db, &spare_));
    if (rc == YDB_OK) rc = note(ydb_connection_open(db, &shown_));
    if (rc == YDB_OK) rc = note(ydb_connection_begin_long_lived_read(shown_, nullptr));
    ydb_txn *txn = nullptr;
    if (rc == YDB_OK) rc = note(ydb_txn_begin_read(shown_, &txn));
    if (rc == YDB_OK) rc = note(ydb_mappings_update(mappings_, txn));
    if (rc == YDB_OK) rc = readTable(txn, &sections_);
    ydb_txn_end(txn);
    if (rc != YDB_OK) {
        setError(rc, "opening the model");  // no signal: the model is being made
        ydb_connection_close(shown_);
        ydb_connection_close(spare_);
        shown_ = spare_ = nullptr;
        return false;
    }
    advanceSpare();
    int shownFd = -1, spareFd = -1;
    ydb_connection_wakeup_fd(shown_, &shownFd);
    ydb_connection_wakeup_fd(spare_, &spareFd);
    // Children of the model: they live (and deliver) on its thread.
    shownNotifier_ = new QSocketNotifier(shownFd, QSocketNotifier::Read, model_);
    spareNotifier_ = new QSocketNotifier(spareFd, QSocketNotifier::Read, model_);
    for (QSocketNotifier *notifier : {shownNotifier_.data(), spareNotifier_.data()})
        QObject::connect(notifier, &QSocketNotifier::activated, model_, [this] { catchUp(); });
    watch();
    return true;
}

// Keeps the message of a failed call before later calls (ending a
// transaction, say) clear the thread's last error.
int Follower::note(int rc) {
    if (rc != YDB_OK && rc != YDB_RELOAD) noted_ = QString::fromUtf8(ydb_errmsg());
    return rc;
}

void Follower::setError(int status, const char *what) {
    QString message = noted_.isEmpty() ? QString::fromUtf8(ydb_errstr(status)) : noted_;
    noted_.clear();
    error_ = {status, QStringLiteral("%1: %2").arg(QLatin1String(what), message)};
}

void Follower::fail(int status, const char *what) {
    setError(status, what);
    emitError(error_.status, error_.message);
}

// Only the descriptor of the connection at the shown snapshot tells of
// commits the model has not caught up with; the spare's is never watched.
void Follower::watch() {
    bool on = follow_ && !suspended_ && !closed_;
    if (shownNotifier_) shownNotifier_->setEnabled(on);
    if (spareNotifier_) spareNotifier_->setEnabled(false);
}

void Follower::setFollow(bool follow) {
    follow_ = follow;
    watch();
}

void Follower::swapConnections() {
    std::swap(shown_, spare_);
    std::swap(shownNotifier_, spareNotifier_);
    watch();
}

void Follower::close() {
    if (closed_) return;
    closed_ = true;
    delete shownNotifier_.data();
    delete spareNotifier_.data();
    clearCommits();
    ydb_connection_close(shown_);
    ydb_connection_close(spare_);
    shown_ = spare_ = nullptr;
}

void Follower::clearCommits() {
    for (ydb_notification *n : spareCommits_) ydb_notification_free(n);
    spareCommits_.clear();
}

// ---- catching up ----

void Follower::scheduleCatchUp() {
    if (scheduled_) return;
    scheduled_ = true;
    QMetaObject::invokeMethod(model_, "catchUp", Qt::QueuedConnection);
}

void Follower::catchUp() {
    scheduled_ = false;
    if (closed_ || !valid_) return;
    if (applying_) {  // called from a slot connected to the model: after this one
        again_ = true;
        return;
    }
    applying_ = true;
    catchUpOnce();
    applying_ = false;
    if (again_ || resetOwed_) {
        again_ = false;
        scheduleCatchUp();
    }
}

void Follower::catchUpOnce() {
    if (spareBehind_) advanceSpare();
    if (resetOwed_) {
        reset();
        return;
    }
    int rc = newerCommits();
    if (rc == YDB_RELOAD) {
        reset();
        return;
    }
    if (rc != YDB_OK) {
        fail(rc, "catching up");
        reset();
        return;
    }
    if (spareCommits_.empty()) {
        // Nothing new: a read at the newest snapshot clears the descriptor,
        // should it say otherwise, so that the notifier cannot spin.
        ydb_txn *txn = nullptr;
        if (note(ydb_txn_begin_read(shown_, &txn)) == YDB_OK) ydb_txn_end(txn);
        return;
    }
    // The changeset is computed in a read at the new snapshot: dynamic
    // groups whose filter reads the transaction need one.
    ydb_notification_list *list = nullptr;
    ydb_changeset *changeset = nullptr;
    ydb_txn *txn = nullptr;
    rc = note(ydb_notification_list_new(spareCommits_.data(), spareCommits_.size(), &list));
    if (rc == YDB_OK) rc = note(ydb_txn_begin_read(spare_, &txn));
    if (rc == YDB_OK) rc = note(ydb_changeset_new_in_txn(mappings_, list, txn, &changeset));
    ydb_txn_end(txn);
    if (rc != YDB_OK) {
        ydb_notification_list_free(list);
        if (rc != YDB_RELOAD) fail(rc, "computing the changeset");
        reset();  // the mappings are unchanged: read the newest table anew
        return;
    }
    swapConnections();
    markChanged();
    ydb_notification_list_free(list);
    clearCommits();

    size_t count = 0;
    ydb_changeset_step_count(changeset, &count);
    std::vector<Step> steps(count);
    for (size_t i = 0; i < count; ++i) {
        ydb_edit_step st;
        ydb_changeset_step(changeset, i, &st);
        Step &step = steps[i];
        step.type = st.type;
        step.section = st.section;
        step.row = st.row;
        step.toSection = st.to_section;
        step.toRow = st.to_row;
        step.finalSection = st.final_section;
        step.finalRow = st.final_row;
        if (st.group) step.group = st.group;
        if (st.type == YDB_STEP_INSERT_ROW && st.key != nullptr) {
            step.arriving = new Row;
            step.arriving->collection = st.collection;
            step.arriving->key = st.key;
        }
    }
    ydb_changeset_free(changeset);
    // Arriving rows are read first: reading may fail (YDB_RELOAD), and no
    // begin/end pair or layout change may be left open then.
    rc = readArriving(steps);
    if (rc != YDB_OK) {
        for (Step &step : steps) delete step.arriving;
        if (rc != YDB_RELOAD) fail(rc, "reading the rows a changeset inserts");
        reset();
        return;
    }
    apply(steps);
    caughtUp();
}

int Follower::newerCommits() {
    if (spareLost_) return YDB_RELOAD;
    ydb_notification_list *list = nullptr;
    int rc = note(ydb_connection_begin_long_lived_read(spare_, &list));
    if (rc != YDB_OK) return rc;
    size_t count = 0;
    ydb_notification_list_count(list, &count);
    for (size_t i = 0; i < count; ++i) {
        const ydb_notification *n = nullptr;
        ydb_notification *copy = nullptr;
        if (ydb_notification_list_get(list, i, &n) == YDB_OK && ydb_notification_copy(n, &copy) == YDB_OK)
            spareCommits_.push_back(copy);
    }
    ydb_notification_list_free(list);
    return YDB_OK;
}

/* Moves the spare connection forward to the newest snapshot and keeps the
** commits it sees past the shown one (they landed during the catch-up) for
** the next; marks them lost when the database dropped them. */
void Follower::advanceSpare() {
    spareBehind_ = false;
    if (closed_) return;
    uint64_t shownSnapshot = 0;
    ydb_connection_snapshot(shown_, &shownSnapshot);
    clearCommits();
    ydb_notification_list *list = nullptr;
    int rc = note(ydb_connection_begin_long_lived_read(spare_, &list));
    if (rc != YDB_OK) {
        uint64_t spareSnapshot = 0;
        ydb_connection_snapshot(spare_, &spareSnapshot);
        spareLost_ = rc != YDB_RELOAD || spareSnapshot != shownSnapshot;
        return;
    }
    spareLost_ = false;
    size_t count = 0;
    ydb_notification_list_count(list, &count);
    for (size_t i = 0; i < count; ++i) {
        const ydb_notification *n = nullptr;
        uint64_t snapshot = 0;
        ydb_notification *copy = nullptr;
        if (ydb_notification_list_get(list, i, &n) == YDB_OK && ydb_notification_snapshot(n, &snapshot) == YDB_OK &&
            snapshot > shownSnapshot && ydb_notification_copy(n, &copy) == YDB_OK)
            spareCommits_.push_back(copy);
    }
    ydb_notification_list_free(list);
}

/* Marks the rows of the table that the commits changed: answered at the
** old snapshot until their step. */
void Follower::markChanged() {
    bool everything = false;
    QSet<QByteArray> collections;
    for (ydb_notification *n : spareCommits_) {
        int all = 0;
        ydb_notification_removed_all(n, &all);
        everything = everything || all;
        ydb_notification_enumerate_removed_collections(
            n,
            [](void *ctx, const char *name) {
                static_cast<QSet<QByteArray> *>(ctx)->insert(QByteArray(name));
                return 0;
            },
            &collections);
        ydb_notification_enumerate_changed_rows(
            n,
            [](void *ctx, const char *collection, const char *key, unsigned) {
                auto *self = static_cast<Follower *>(ctx);
                Row *row = self->byName_.value(self->lookupName(collection, key));
                if (row != nullptr && !row->pending) {
                    row->pending = true;
                    self->pendingRows_.push_back(row);
                }
                return 0;
            },
            this);
    }
    if (!everything && collections.isEmpty()) return;
    for (auto &section : sections_)
        section->rows.forEach([&](Row *row) {
            if (!row->pending && (everything || collections.contains(row->collection))) {
                row->pending = true;
                pendingRows_.push_back(row);
            }
        });
}

int Follower::readArriving(std::vector<Step> &steps) {
    ydb_txn *txn = nullptr;
    int rc = YDB_OK;
    for (Step &step : steps) {
        if (step.type != YDB_STEP_INSERT_ROW || step.arriving != nullptr) continue;
        // A row that only slid into a window: the changeset does not name
        // it; read it from the new table at its final place.
        if (txn == nullptr && (rc = note(ydb_txn_begin_read(shown_, &txn))) != YDB_OK) break;
        char *collection = nullptr, *key = nullptr;
        rc = note(ydb_view_key_at_index_path(txn, mappings_, step.finalSection, step.finalRow, &collection, &key));
        if (rc == YDB_OK) {
            step.arriving = new Row;
            step.arriving->collection = collection;
            step.arriving->key = key;
        }
        ydb_free(collection);
        ydb_free(key);
        if (rc != YDB_OK) break;
    }
    ydb_txn_end(txn);
    return rc;
}

void Follower::apply(std::vector<Step> &steps) {
    // Runs: [first, first + count) of steps of one kind at adjacent places.
    std::vector<std::pair<size_t, size_t>> runs;
    size_t moves = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].type == YDB_STEP_MOVE_ROW) ++moves;
        if (!runs.empty()) {
            auto &run = runs.back();
            if (continues(steps[run.first], steps[run.first + run.second - 1], run.second, steps[i])) {
                ++run.second;
                continue;
            }
        }
        runs.emplace_back(i, 1);
    }
    if (moves < LAYOUT_CHANGE_MOVES) {
        for (auto &run : runs) applyRun(steps, run.first, run.second, false);
        return;
    }
    layoutChange([&] {
        for (auto &run : runs)
            if (steps[run.first].type != YDB_STEP_RELOAD_ROW) applyRun(steps, run.first, run.second, true);
        announceEverything();
    });
    // Rows changed in place: views repaint them, proxies look at them again.
    for (auto &run : runs)
        if (steps[run.first].type == YDB_STEP_RELOAD_ROW) applyRun(steps, run.first, run.second, false);
}

/* Applies one run to the shadow, between the model's begin and end calls
** (none when `silent`: inside a layout change). */
void Follower::applyRun(std::vector<Step> &steps, size_t firstIndex, size_t count, bool silent) {
    const Step &head = steps[firstIndex];
    const Step &tail = steps[firstIndex + count - 1];
    // Where the run starts: removals come bottom-up, the rest top-down.
    bool upwards = head.type == YDB_STEP_REMOVE_ROW || head.type == YDB_STEP_REMOVE_SECTION;
    const Step &first = upwards ? tail : head;
    size_t s = first.section;
    switch (head.type) {
    case YDB_STEP_INSERT_SECTION: {
        if (!silent) sectionsInserting(s, count);
        for (size_t i = 0; i < count; ++i) {
            auto section = std::make_unique<Section>();
            section->id = ++lastSectionId_;
            section->group = steps[firstIndex + i].group;
            sections_.insert(sections_.begin() + static_cast<std::ptrdiff_t>(s + i), std::move(section));
        }
        if (!silent) sectionsInserted();
        break;
    }
    case YDB_STEP_REMOVE_SECTION:
        if (!silent) sectionsRemoving(s, count);
        // Empty by now (the script removed or moved their rows).
        sections_.erase(sections_.begin() + static_cast<std::ptrdiff_t>(s),
                        sections_.begin() + static_cast<std::ptrdiff_t>(s + count));
        if (!silent) sectionsRemoved();
        break;
    case YDB_STEP_MOVE_ROW: {
        bool announced = !silent && rowMoving(s, head.row, head.toSection, head.toRow);
        Row *row = sections_[s]->rows.take(head.row);
        sections_[head.toSection]->rows.insert(head.toRow, row);
        if (announced) rowMoved();
        break;
    }
    case YDB_STEP_INSERT_ROW: {
        if (!silent) rowsInserting(s, first.row, count);
        for (size_t i = 0; i < count; ++i) {
            Row *row = steps[firstIndex + i].arriving;
            steps[firstIndex + i].arriving = nullptr;
            sections_[s]->rows.insert(first.row + i, row);
            byName_.insert(nameOf(row), row);
        }
        if (!silent) rowsInserted();
        break;
    }
    case YDB_STEP_REMOVE_ROW:
        if (!silent) rowsRemoving(s, first.row, count);
        for (size_t i = 0; i < count; ++i) {
            Row *row = sections_[s]->rows.take(first.row);
            auto it = byName_.find(lookupName(row->collection.constData(), row->key.constData()));
            if (it != byName_.end() && it.value() == row) byName_.erase(it);
            leftRows_.push_back(row);  // pendingRows_ may still point at it
        }
        if (!silent) rowsRemoved();
        break;
    case YDB_STEP_RELOAD_ROW:
        // From now on the rows answer at the new snapshot: read anew what
        // the commits changed (a reload for a dependency keeps its values).
        for (size_t i = 0; i < count; ++i) {
            Row *row = sections_[s]->rows.at(first.row + i);
            if (row->pending) {
                row->pending = false;
                row->hasValue = false;
            }
        }
        if (!silent) rowsReloaded(s, first.row, count);
        break;
    default: break;
    }
}

/* A layout change announces every row at once. */
void Follower::announceEverything() {
    for (Row *row : pendingRows_)
        if (row->pending) {
            row->pending = false;
            row->hasValue = false;
        }
}

void Follower::caughtUp() {
    announceEverything();  // changed rows that had no step change silently
    pendingRows_.clear();
    for (Row *row : leftRows_) delete row;
    leftRows_.clear();
    // The other connection moves forward on the next turn of the event
    // loop, once the view has painted (moving it may copy the write-ahead
    // log back into the database: milliseconds no frame should wait for).
    // A catch-up that comes first moves it itself.
    spareBehind_ = true;
    QTimer::singleShot(0, model_, [this] {
        if (spareBehind_) advanceSpare();
    });
    if (suspended_) {
        suspended_ = false;
        watch();
    }
    emitCaughtUp();
}

/* Reads the table anew at the newest snapshot, between beginResetModel and
** endResetModel: the commits in between are gone. */
void Follower::reset() {
    beginReset();
    resetOwed_ = false;
    clearShadow();
    int rc = YDB_RELOAD;
    for (int attempt = 0; attempt < RESET_ATTEMPTS && rc == YDB_RELOAD; ++attempt) {
        clearShadow();
        rc = readNewestTable();
    }
    if (rc != YDB_OK) {
        // Shown empty; the next catch-up resets again. A failure other
        // than a lost snapshot (a closed database, an unregistered view)
        // would wake the notifier forever: it stops until catchUp().
        clearShadow();
        spareLost_ = true;
        setError(rc, "reading the table anew");
        suspended_ = true;
        watch();
    }
    endReset();
    if (rc == YDB_OK)
        caughtUp();
    else
        emitError(error_.status, error_.message);
}

int Follower::readNewestTable() {
    // The spare first: it must end at or past the other one.
    for (ydb_connection *connection : {spare_, shown_}) {
        int rc = note(ydb_connection_begin_long_lived_read(connection, nullptr));
        if (rc != YDB_OK && rc != YDB_RELOAD) return rc;  // RELOAD: at the newest all the same
    }
    ydb_txn *txn = nullptr;
    int rc = note(ydb_txn_begin_read(shown_, &txn));
    if (rc == YDB_OK) rc = note(ydb_mappings_update(mappings_, txn));
    if (rc == YDB_OK) rc = readTable(txn, &sections_);
    ydb_txn_end(txn);
    return rc;
}

}  // namespace ydbview::detail
