/*
** models.cpp -- MappingsModel (a tree) and FlatMappingsModel (a list): how
** each translates runs of edit steps into Qt's calls, and how each answers
** Qt from the shadow the follower keeps.
*/
#include "ydbview-qt/models.h"

#include "follower.h"

namespace ydbview {

namespace {

bool rowRole(int role) { return role == Qt::DisplayRole || (role >= CollectionRole && role <= ObjectTextRole); }

int toInt(size_t value) { return static_cast<int>(value); }

}  // namespace

namespace detail {

class TreeFollower : public Follower {
public:
    TreeFollower(MappingsModel *q, ydb_database *db, ydb_mappings *mappings) : Follower(q, db, mappings), q(q) {}

    QModelIndex sectionIndex(size_t s) const { return q->createIndex(toInt(s), 0, quintptr(0)); }

protected:
    void beginReset() override { q->beginResetModel(); }
    void endReset() override { q->endResetModel(); }
    void sectionsInserting(size_t s, size_t n) override { q->beginInsertRows({}, toInt(s), toInt(s + n - 1)); }
    void sectionsInserted() override { q->endInsertRows(); }
    void sectionsRemoving(size_t s, size_t n) override { q->beginRemoveRows({}, toInt(s), toInt(s + n - 1)); }
    void sectionsRemoved() override { q->endRemoveRows(); }
    void rowsInserting(size_t s, size_t r, size_t n) override {
        q->beginInsertRows(sectionIndex(s), toInt(r), toInt(r + n - 1));
    }
    void rowsInserted() override { q->endInsertRows(); }
    void rowsRemoving(size_t s, size_t r, size_t n) override {
        q->beginRemoveRows(sectionIndex(s), toInt(r), toInt(r + n - 1));
    }
    void rowsRemoved() override { q->endRemoveRows(); }
    bool rowMoving(size_t s, size_t r, size_t toS, size_t toR) override {
        // Qt's destination is a row of the table before the move: one more
        // when moving down within the same parent.
        size_t destination = toS == s && toR > r ? toR + 1 : toR;
        if (q->beginMoveRows(sectionIndex(s), toInt(r), toInt(r), sectionIndex(toS), toInt(destination)))
            return true;
        oweReset();
        return false;
    }
    void rowMoved() override { q->endMoveRows(); }
    void rowsReloaded(size_t s, size_t r, size_t n) override {
        quintptr id = sections_[s]->id;
        Q_EMIT q->dataChanged(q->createIndex(toInt(r), 0, id), q->createIndex(toInt(r + n - 1), 0, id));
    }
    void layoutChange(const std::function<void()> &apply) override {
        Q_EMIT q->layoutAboutToBeChanged();
        const QModelIndexList from = q->persistentIndexList();
        // Where each persistent index points: its section (by id) and row.
        std::vector<std::pair<quintptr, Row *>> places;
        places.reserve(static_cast<size_t>(from.size()));
        bool anyRow = false;
        for (const QModelIndex &index : from) {
            if (index.internalId() == 0) {
                size_t s = static_cast<size_t>(index.row());
                places.emplace_back(s < sections_.size() ? sections_[s]->id : 0, nullptr);
                continue;
            }
            int s = sectionOfId(index.internalId());
            Row *row = s >= 0 && static_cast<size_t>(index.row()) < sections_[static_cast<size_t>(s)]->rows.size()
                           ? sections_[static_cast<size_t>(s)]->rows.at(static_cast<size_t>(index.row()))
                           : nullptr;
            places.emplace_back(0, row);
            anyRow = anyRow || row != nullptr;
        }
        apply();
        std::vector<Row *> held;
        if (anyRow)
            for (const auto &place : places) held.push_back(place.second);
        // A row may have moved to another section.
        const QHash<Row *, std::pair<int, int>> rows = placesOf(held);
        QModelIndexList to;
        to.reserve(from.size());
        for (const auto &[sectionId, row] : places) {
            if (row == nullptr) {
                int s = sectionId != 0 ? sectionOfId(sectionId) : -1;
                to.append(s < 0 ? QModelIndex() : sectionIndex(static_cast<size_t>(s)));
                continue;
            }
            auto it = rows.constFind(row);
            to.append(it == rows.constEnd()
                          ? QModelIndex()
                          : q->createIndex(it->second, 0, sections_[static_cast<size_t>(it->first)]->id));
        }
        q->changePersistentIndexList(from, to);
        Q_EMIT q->layoutChanged();
    }
    void emitCaughtUp() override { Q_EMIT q->caughtUp(); }
    void emitError(int status, const QString &message) override { Q_EMIT q->errorOccurred(status, message); }

private:
    MappingsModel *q;
};

class FlatFollower : public Follower {
public:
    FlatFollower(FlatMappingsModel *q, ydb_database *db, ydb_mappings *mappings) : Follower(q, db, mappings), q(q) {}

protected:
    void beginReset() override { q->beginResetModel(); }
    void endReset() override { q->endResetModel(); }
    // Sections are empty when inserted or removed: only rows show.
    void sectionsInserting(size_t, size_t) override {}
    void sectionsInserted() override {}
    void sectionsRemoving(size_t, size_t) override {}
    void sectionsRemoved() override {}
    void rowsInserting(size_t s, size_t r, size_t n) override {
        size_t flat = flatOf(s, r);
        q->beginInsertRows({}, toInt(flat), toInt(flat + n - 1));
    }
    void rowsInserted() override { q->endInsertRows(); }
    void rowsRemoving(size_t s, size_t r, size_t n) override {
        size_t flat = flatOf(s, r);
        q->beginRemoveRows({}, toInt(flat), toInt(flat + n - 1));
    }
    void rowsRemoved() override { q->endRemoveRows(); }
    bool rowMoving(size_t s, size_t r, size_t toS, size_t toR) override {
        size_t source = flatOf(s, r);
        // Where it lands, counted without it: the sections before `toS`
        // are one row shorter when it came from one of them.
        size_t target = flatOf(toS, toR) - (s < toS ? 1 : 0);
        if (target == source) return false;  // between sections, keeping its place in the list
        size_t destination = target > source ? target + 1 : target;
        if (q->beginMoveRows({}, toInt(source), toInt(source), {}, toInt(destination))) return true;
        oweReset();
        return false;
    }
    void rowMoved() override { q->endMoveRows(); }
    void rowsReloaded(size_t s, size_t r, size_t n) override {
        size_t flat = flatOf(s, r);
        Q_EMIT q->dataChanged(q->index(toInt(flat)), q->index(toInt(flat + n - 1)));
    }
    void layoutChange(const std::function<void()> &apply) override {
        Q_EMIT q->layoutAboutToBeChanged();
        const QModelIndexList from = q->persistentIndexList();
        std::vector<Row *> places;
        places.reserve(static_cast<size_t>(from.size()));
        for (const QModelIndex &index : from) {
            size_t section = 0;
            places.push_back(rowAtFlat(static_cast<size_t>(index.row()), &section));
        }
        apply();
        const QHash<Row *, std::pair<int, int>> rows = placesOf(places);
        QModelIndexList to;
        to.reserve(from.size());
        for (Row *row : places) {
            auto it = row ? rows.constFind(row) : rows.constEnd();
            to.append(it == rows.constEnd() ? QModelIndex()
                                            : q->index(toInt(flatOf(static_cast<size_t>(it->first),
                                                                    static_cast<size_t>(it->second)))));
        }
        q->changePersistentIndexList(from, to);
        Q_EMIT q->layoutChanged();
    }
    void emitCaughtUp() override { Q_EMIT q->caughtUp(); }
    void emitError(int status, const QString &message) override { Q_EMIT q->errorOccurred(status, message); }

private:
    FlatMappingsModel *q;
};

}  // namespace detail

// ---- MappingsModel ----

MappingsModel::MappingsModel(ydb_database *db, ydb_mappings *mappings, QObject *parent)
    : QAbstractItemModel(parent), d(std::make_unique<detail::TreeFollower>(this, db, mappings)) {}

MappingsModel::~MappingsModel() = default;

void MappingsModel::setDisplay(DisplayFunction display) { d->setDisplay(std::move(display)); }
void MappingsModel::setFollowCommits(bool follow) { d->setFollow(follow); }
bool MappingsModel::followsCommits() const { return d->follows(); }
ydb_mappings *MappingsModel::mappings() const { return d->mappings(); }
ModelError MappingsModel::lastError() const { return d->lastError(); }
bool MappingsModel::isValid() const { return d->valid(); }
void MappingsModel::catchUp() { d->catchUp(); }
void MappingsModel::close() { d->close(); }
QVariant MappingsModel::displayData(const ShownRow &row) const { return d->display(row); }
QHash<int, QByteArray> MappingsModel::roleNames() const { return detail::Follower::roleNames(); }
int MappingsModel::columnCount(const QModelIndex &) const { return 1; }

QModelIndex MappingsModel::index(int row, int column, const QModelIndex &parent) const {
    if (column != 0 || row < 0) return {};
    if (!parent.isValid())
        return static_cast<size_t>(row) < d->sectionCount() ? createIndex(row, 0, quintptr(0)) : QModelIndex();
    if (parent.internalId() != 0 || parent.column() != 0 || static_cast<size_t>(parent.row()) >= d->sectionCount())
        return {};
    const detail::Section &section = d->section(static_cast<size_t>(parent.row()));
    return static_cast<size_t>(row) < section.rows.size() ? createIndex(row, 0, section.id) : QModelIndex();
}

QModelIndex MappingsModel::parent(const QModelIndex &child) const {
    if (!child.isValid() || child.internalId() == 0) return {};
    int s = d->sectionOfId(child.internalId());
    return s < 0 ? QModelIndex() : createIndex(s, 0, quintptr(0));
}

int MappingsModel::rowCount(const QModelIndex &parent) const {
    if (!parent.isValid()) return toInt(d->sectionCount());
    if (parent.internalId() != 0 || parent.column() != 0 || static_cast<size_t>(parent.row()) >= d->sectionCount())
        return 0;
    return toInt(d->section(static_cast<size_t>(parent.row())).rows.size());
}

bool MappingsModel::hasChildren(const QModelIndex &parent) const { return rowCount(parent) > 0; }

Qt::ItemFlags MappingsModel::flags(const QModelIndex &index) const {
    // Rows are leaves. Said so, QTreeView::expandAll() keeps no persistent
    // index per row, which Qt would move at every step above it.
    Qt::ItemFlags flags = QAbstractItemModel::flags(index);
    if (index.isValid() && index.internalId() != 0) flags |= Qt::ItemNeverHasChildren;
    return flags;
}

QVariant MappingsModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || !rowRole(role)) return {};
    if (index.internalId() == 0) {
        size_t s = static_cast<size_t>(index.row());
        if (s >= d->sectionCount()) return {};
        if (role == Qt::DisplayRole || role == GroupRole) return QString::fromUtf8(d->section(s).group);
        return role == SectionRole ? QVariant(index.row()) : QVariant();
    }
    int s = d->sectionOfId(index.internalId());
    if (s < 0 || static_cast<size_t>(index.row()) >= d->section(static_cast<size_t>(s)).rows.size()) return {};
    detail::Row *row = d->section(static_cast<size_t>(s)).rows.at(static_cast<size_t>(index.row()));
    if (role == Qt::DisplayRole) return displayData(d->shown(row));
    return d->rowData(row, static_cast<size_t>(s), role);
}

// ---- FlatMappingsModel ----

FlatMappingsModel::FlatMappingsModel(ydb_database *db, ydb_mappings *mappings, QObject *parent)
    : QAbstractListModel(parent), d(std::make_unique<detail::FlatFollower>(this, db, mappings)) {}

FlatMappingsModel::~FlatMappingsModel() = default;

void FlatMappingsModel::setDisplay(DisplayFunction display) { d->setDisplay(std::move(display)); }
void FlatMappingsModel::setFollowCommits(bool follow) { d->setFollow(follow); }
bool FlatMappingsModel::followsCommits() const { return d->follows(); }
ydb_mappings *FlatMappingsModel::mappings() const { return d->mappings(); }
ModelError FlatMappingsModel::lastError() const { return d->lastError(); }
bool FlatMappingsModel::isValid() const { return d->valid(); }
void FlatMappingsModel::catchUp() { d->catchUp(); }
void FlatMappingsModel::close() { d->close(); }
QVariant FlatMappingsModel::displayData(const ShownRow &row) const { return d->display(row); }
QHash<int, QByteArray> FlatMappingsModel::roleNames() const { return detail::Follower::roleNames(); }

int FlatMappingsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : toInt(d->totalRows());
}

QVariant FlatMappingsModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() < 0 || !rowRole(role)) return {};
    size_t section = 0;
    detail::Row *row = d->rowAtFlat(static_cast<size_t>(index.row()), &section);
    if (row == nullptr) return {};
    if (role == Qt::DisplayRole) return displayData(d->shown(row));
    return d->rowData(row, section, role);
}

}  // namespace ydbview
