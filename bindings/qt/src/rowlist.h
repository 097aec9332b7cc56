/*
** rowlist.h -- one section's rows as the model shows them: a list of
** pointers in chunks, so that a commit costs in proportion to its change.
**
** A plain vector costs a memmove of the rows below at every insertion,
** removal and move: 1,000 rows changed in a section of 100,000 moved about
** 400 MB. Here an edit moves at most one chunk (CHUNK_MAX pointers) and
** shifts the chunks' start offsets (one integer per chunk), and a lookup is
** a binary search over those offsets, or O(1) when it falls in the chunk
** of the previous lookup (views and proxies mostly read rows in order).
*/
#ifndef YDBVIEW_QT_ROWLIST_H
#define YDBVIEW_QT_ROWLIST_H

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ydbview::detail {

template <typename T>
class ChunkedList {
public:
    static constexpr size_t CHUNK_MAX = 1024;  // split when a chunk grows past it

    size_t size() const { return count_; }

    T at(size_t i) const {
        size_t c = find(i);
        return chunks_[c][i - starts_[c]];
    }

    void insert(size_t i, T value) {
        if (chunks_.empty()) {
            chunks_.emplace_back();
            chunks_.back().reserve(CHUNK_MAX);
            starts_.push_back(0);
        }
        // Position `count_` (the end) belongs to the last chunk.
        size_t c = i == count_ ? chunks_.size() - 1 : find(i);
        std::vector<T> &chunk = chunks_[c];
        chunk.insert(chunk.begin() + static_cast<std::ptrdiff_t>(i - starts_[c]), value);
        ++count_;
        for (size_t k = c + 1; k < starts_.size(); ++k) ++starts_[k];
        if (chunk.size() > CHUNK_MAX) split(c);
    }

    T take(size_t i) {
        size_t c = find(i);
        std::vector<T> &chunk = chunks_[c];
        auto at = chunk.begin() + static_cast<std::ptrdiff_t>(i - starts_[c]);
        T value = *at;
        chunk.erase(at);
        --count_;
        for (size_t k = c + 1; k < starts_.size(); ++k) --starts_[k];
        if (chunk.empty()) {
            chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(c));
            starts_.erase(starts_.begin() + static_cast<std::ptrdiff_t>(c));
            last_ = 0;
        }
        return value;
    }

    /* Replaces everything with `values` (a reset, the first read). */
    void assign(const std::vector<T> &values) {
        clear();
        for (size_t i = 0; i < values.size(); i += CHUNK_MAX / 2) {
            size_t end = std::min(values.size(), i + CHUNK_MAX / 2);
            starts_.push_back(i);
            chunks_.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(i),
                                 values.begin() + static_cast<std::ptrdiff_t>(end));
        }
        count_ = values.size();
    }

    void clear() {
        chunks_.clear();
        starts_.clear();
        count_ = 0;
        last_ = 0;
    }

    template <typename F>
    void forEach(F &&f) const {
        for (const std::vector<T> &chunk : chunks_)
            for (const T &value : chunk) f(value);
    }

private:
    size_t find(size_t i) const {
        if (last_ < chunks_.size() && i >= starts_[last_] && i < starts_[last_] + chunks_[last_].size())
            return last_;
        auto it = std::upper_bound(starts_.begin(), starts_.end(), i);
        last_ = static_cast<size_t>(it - starts_.begin()) - 1;
        return last_;
    }

    void split(size_t c) {
        std::vector<T> &chunk = chunks_[c];
        size_t half = chunk.size() / 2;
        std::vector<T> tail(chunk.begin() + static_cast<std::ptrdiff_t>(half), chunk.end());
        tail.reserve(CHUNK_MAX);
        chunk.resize(half);
        size_t start = starts_[c] + half;
        chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(c) + 1, std::move(tail));
        starts_.insert(starts_.begin() + static_cast<std::ptrdiff_t>(c) + 1, start);
    }

    std::vector<std::vector<T>> chunks_;
    std::vector<size_t> starts_;  // starts_[c]: the position of chunk c's first value
    size_t count_ = 0;
    mutable size_t last_ = 0;  // the chunk of the last lookup
};

}  // namespace ydbview::detail

#endif
