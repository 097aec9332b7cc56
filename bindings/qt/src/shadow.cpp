/*
** shadow.cpp -- the follower's shadow of the table: reading it, finding
** rows in it, and the rows' values as the view is told of them.
*/
#include "follower.h"

namespace ydbview::detail {

namespace {

struct KeyRun {
    std::vector<Row *> *out;
};

int collectKey(void *ctx, const char *collection, const char *key, size_t) {
    auto *row = new Row;
    row->collection = collection;
    row->key = key;
    static_cast<KeyRun *>(ctx)->out->push_back(row);
    return 0;
}

}  // namespace

QByteArray Follower::nameOf(const char *collection, const char *key) {
    QByteArray name(collection);
    name.append('\0');
    name.append(key);
    return name;
}

QByteArray Follower::nameOf(const Row *row) { return nameOf(row->collection.constData(), row->key.constData()); }

// A row's name for a lookup, in a buffer kept for it: a 1,000-row commit
// looks up 1,000 names, each an allocation otherwise.
const QByteArray &Follower::lookupName(const char *collection, const char *key) {
    nameBuffer_.resize(0);
    nameBuffer_.append(collection);
    nameBuffer_.append('\0');
    nameBuffer_.append(key);
    return nameBuffer_;
}

void Follower::deleteRow(Row *row) {
    auto it = byName_.find(lookupName(row->collection.constData(), row->key.constData()));
    if (it != byName_.end() && it.value() == row) byName_.erase(it);
    delete row;
}

void Follower::clearShadow() {
    for (auto &section : sections_) section->rows.forEach([](Row *row) { delete row; });
    sections_.clear();
    byName_.clear();
    pendingRows_.clear();
    for (Row *row : leftRows_) delete row;
    leftRows_.clear();
}

// ---- the shadow ----

int Follower::sectionOfId(quintptr id) const {
    for (size_t s = 0; s < sections_.size(); ++s)
        if (sections_[s]->id == id) return static_cast<int>(s);
    return -1;
}

size_t Follower::totalRows() const {
    size_t total = 0;
    for (const auto &section : sections_) total += section->rows.size();
    return total;
}

Row *Follower::rowAtFlat(size_t flat, size_t *outSection) const {
    for (size_t s = 0; s < sections_.size(); ++s) {
        size_t n = sections_[s]->rows.size();
        if (flat < n) {
            *outSection = s;
            return sections_[s]->rows.at(flat);
        }
        flat -= n;
    }
    return nullptr;
}

size_t Follower::flatOf(size_t section, size_t row) const {
    for (size_t s = 0; s < section && s < sections_.size(); ++s) row += sections_[s]->rows.size();
    return row;
}

/* Reads the table the mappings show at `txn`: per section its group, and
** its rows by runs of view indexes (one enumeration a run, not a call a row). */
int Follower::readTable(ydb_txn *txn, std::vector<std::unique_ptr<Section>> *out) {
    const char *view = nullptr;
    size_t sections = 0;
    int rc = note(ydb_mappings_view(mappings_, &view));
    if (rc == YDB_OK) rc = note(ydb_mappings_number_of_sections(mappings_, &sections));
    for (size_t s = 0; rc == YDB_OK && s < sections; ++s) {
        auto section = std::make_unique<Section>();
        section->id = ++lastSectionId_;
        const char *group = nullptr;
        size_t count = 0;
        rc = note(ydb_mappings_group_for_section(mappings_, s, &group));
        if (rc == YDB_OK) rc = note(ydb_mappings_number_of_items_in_section(mappings_, s, &count));
        if (rc != YDB_OK) break;
        section->group = group;
        std::vector<Row *> rows;
        rows.reserve(count);
        KeyRun run{&rows};
        for (size_t r = 0; rc == YDB_OK && r < count;) {
            const char *runGroup = nullptr;
            size_t first = 0, length = 1;
            rc = ydb_mappings_group_and_index_for_row(mappings_, r, s, &runGroup, &first);
            if (rc != YDB_OK) break;
            int direction = 0;  // +1 ascending view indexes, -1 descending (reversed)
            for (; r + length < count; ++length) {
                const char *g = nullptr;
                size_t index = 0;
                if (ydb_mappings_group_and_index_for_row(mappings_, r + length, s, &g, &index) != YDB_OK ||
                    g != runGroup)  // borrowed from the mappings: one pointer per group
                    break;
                int d = index == first + length ? 1 : (index + length == first ? -1 : 0);
                if (d == 0 || (direction != 0 && d != direction)) break;
                direction = d;
            }
            size_t low = direction < 0 ? first + 1 - length : first;
            rc = note(ydb_view_enumerate_keys(txn, view, runGroup, low, low + length, direction < 0, collectKey, &run));
            r += length;
        }
        if (rc == YDB_OK && rows.size() != count) rc = YDB_ERROR;
        for (Row *row : rows) byName_.insert(nameOf(row), row);
        section->rows.assign(rows);
        out->push_back(std::move(section));
    }
    return rc;
}

// ---- values ----

/* Reads a row's object and metadata: at the old snapshot while the row is
** pending (spare_, during a catch-up), else at the shown one. False when it
** cannot be read now: the model was closed, or its connection fell so far
** behind that the database released the snapshot (then the model owes a
** reset, and a catch-up is queued). data() is called from painting, where
** nothing could report an error. */
bool Follower::readValue(Row *row) {
    if (row->hasValue) return true;
    if (closed_ || !valid_) return false;
    ydb_connection *connection = row->pending ? spare_ : shown_;
    ydb_txn *txn = nullptr;
    void *object = nullptr, *metadata = nullptr;
    size_t objectSize = 0, metadataSize = 0;
    int rc = note(ydb_txn_begin_read(connection, &txn));
    if (rc == YDB_OK)
        rc = note(ydb_txn_get_row(txn, row->collection.constData(), row->key.constData(), &object, &objectSize,
                             &metadata, &metadataSize));
    ydb_txn_end(txn);
    if (rc == YDB_RELOAD) {
        resetOwed_ = true;
        scheduleCatchUp();
        return false;
    }
    if (rc != YDB_OK && rc != YDB_NOTFOUND) {
        fail(rc, "reading a row");
        return false;
    }
    row->object = object ? QByteArray(static_cast<const char *>(object), static_cast<qsizetype>(objectSize))
                         : QByteArray();
    row->hasMetadata = metadata != nullptr;
    row->metadata = metadata ? QByteArray(static_cast<const char *>(metadata),
                                          static_cast<qsizetype>(metadataSize))
                             : QByteArray();
    row->hasValue = true;
    ydb_free(object);
    ydb_free(metadata);
    return true;
}

ShownRow Follower::shown(Row *row) {
    ShownRow out;
    out.collection = QString::fromUtf8(row->collection);
    out.key = QString::fromUtf8(row->key);
    out.readable = readValue(row);
    if (out.readable) {
        out.object = row->object;
        out.metadata = row->metadata;
        out.hasMetadata = row->hasMetadata;
    }
    return out;
}

QVariant Follower::display(const ShownRow &row) const {
    if (display_ && row.readable) return display_(row);
    return row.key;
}

QVariant Follower::rowData(Row *row, size_t section, int role) {
    switch (role) {
    case CollectionRole: return QString::fromUtf8(row->collection);
    case KeyRole: return QString::fromUtf8(row->key);
    case GroupRole: return QString::fromUtf8(sections_[section]->group);
    case SectionRole: return static_cast<int>(section);
    case ObjectRole:
        return readValue(row) ? QVariant(row->object) : QVariant();
    case ObjectTextRole:
        return readValue(row) ? QVariant(QString::fromUtf8(row->object)) : QVariant();
    case MetadataRole:
        return readValue(row) && row->hasMetadata ? QVariant(row->metadata) : QVariant();
    default: return QVariant();
    }
}

QHash<int, QByteArray> Follower::roleNames() {
    return {{Qt::DisplayRole, "display"}, {CollectionRole, "collection"}, {KeyRole, "key"},
            {ObjectRole, "object"},       {MetadataRole, "metadata"},     {GroupRole, "group"},
            {SectionRole, "section"},     {ObjectTextRole, "objectText"}};
}

QHash<Row *, std::pair<int, int>> Follower::placesOf(const std::vector<Row *> &held) const {
    QHash<Row *, std::pair<int, int>> places;
    size_t wanted = 0;
    for (Row *row : held)
        if (row != nullptr && !row->held) {
            row->held = true;
            ++wanted;
        }
    for (size_t s = 0; s < sections_.size() && static_cast<size_t>(places.size()) < wanted; ++s) {
        int r = 0;
        sections_[s]->rows.forEach([&](Row *row) {
            if (row->held) places.insert(row, {static_cast<int>(s), r});
            ++r;
        });
    }
    for (Row *row : held)
        if (row != nullptr) row->held = false;
    return places;
}

}  // namespace ydbview::detail
