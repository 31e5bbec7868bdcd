// The partition index reader. See index_reader.hh.
#include "index/index_reader.hh"

#include <algorithm>
#include <stdexcept>

namespace reef::index {

size_t index_summary::points_not_after(const dht::decorated_key& k) const noexcept {
    // make_index_summary, the one maker of summaries, gives every point its token.
    auto t = k.get_token();
    size_t n = std::lower_bound(tokens.begin(), tokens.end(), t) - tokens.begin();
    while (n < points.size() && tokens[n] == t && points[n].key <= k) {
        ++n;
    }
    return n;
}

future<index_page_cache::entry_ptr> index_reader::page(size_t i) {
    uint64_t begin = _summary.points[i].index_position;
    uint64_t end = i + 1 < _summary.points.size() ? _summary.points[i + 1].index_position : _summary.index_file_size;
    if (end < begin) {
        return make_exception_future<index_page_cache::entry_ptr>(std::make_exception_ptr(std::runtime_error(
            "index_reader: summary entry " + std::to_string(i) + " points at Index.db " + std::to_string(begin) +
            ", past the next page's start " + std::to_string(end))));
    }
    auto loader = [this, begin, end]() -> future<partition_index_page> {
        // Past cached_file: the page keeps its bytes itself, and caching them twice (Index.db's pages and the parsed
        // page) would halve the pages the budget holds.
        auto f = _caches.file().underlying_file();
        auto buf = co_await f.dma_read(begin, end - begin);
        if (buf.size() != end - begin) {
            throw std::runtime_error("index_reader: Index.db is shorter than the summary says (page at " +
                                     std::to_string(begin) + ")");
        }
        co_return (*_parse)(std::string_view(buf.get(), buf.size()), begin);
    };
    // Not a coroutine: a cached page comes back ready, with no frame made for it.
    try {
        return _caches.index().get_or_load(i, std::move(loader));
    } catch (...) {
        return make_exception_future<index_page_cache::entry_ptr>(std::current_exception());
    }
}

future<std::optional<entry_ref>> index_reader::first_entry_not(std::function<bool(const dht::decorated_key&)> skip) {
    auto& pts = _summary.points;
    if (pts.empty()) {
        co_return std::nullopt;
    }
    // The last page whose first key is skipped holds the answer, or the next page starts with it.
    size_t skipped = std::partition_point(pts.begin(), pts.end(), [&](const summary_point& p) { return skip(p.key); }) -
                     pts.begin();
    size_t i = skipped == 0 ? 0 : skipped - 1;
    for (; i < pts.size(); ++i) {
        auto pg = co_await page(i);
        size_t at = entry_partition_point(*pg, skip);
        if (at != pg->size()) {
            co_return entry_ref{std::move(pg), at};
        }
    }
    co_return std::nullopt;
}

future<std::optional<entry_ref>> index_reader::first_entry_not_before(const dht::decorated_key& k) {
    auto& pts = _summary.points;
    // The last page whose first key is not after k holds k's entry if any, or the first entry after k is the next
    // page's first.
    size_t not_after = _summary.points_not_after(k);
    for (size_t i = not_after == 0 ? 0 : not_after - 1; i < pts.size(); ++i) {
        auto pg = co_await page(i);
        size_t at = entry_lower_bound(*pg, k);
        if (at != pg->size()) {
            co_return entry_ref{std::move(pg), at};
        }
    }
    co_return std::nullopt;
}

future<uint64_t> index_reader::first_not(std::function<bool(const dht::decorated_key&)> skip) {
    auto e = co_await first_entry_not(std::move(skip));
    co_return e ? e->data_position() : _summary.data_length;
}

future<std::optional<entry_ref>> index_reader::find(const dht::decorated_key& k) {
    auto e = co_await first_entry_not_before(k);
    if (e && !e->is(k)) {
        e.reset();
    }
    co_return e;
}

future<std::optional<entry_ref>> index_reader::first_entry(const dht::partition_range& pr) {
    std::function<bool(const dht::decorated_key&)> before = [&](const dht::decorated_key& k) { return pr.before(k); };
    auto e = co_await first_entry_not(std::move(before));
    co_return e;
}

future<uint64_t> index_reader::next_position(const entry_ref& e) {
    if (e.index + 1 < e.page->size()) {
        co_return e.page->data_position(e.index + 1);
    }
    for (size_t i = size_t(e.page.key()) + 1; i < _summary.points.size(); ++i) {
        auto pg = co_await page(i);
        if (!pg->empty()) {
            co_return pg->data_position(0);
        }
    }
    co_return _summary.data_length;
}

future<std::vector<std::optional<located_entry>>> index_reader::find_all(std::span<const dht::decorated_key> keys) {
    std::vector<std::optional<located_entry>> out(keys.size());
    std::vector<size_t> at;  // the entries of one page's keys
    at.reserve(keys.size());
    auto& pts = _summary.points;
    size_t k = 0;
    while (k < keys.size() && !pts.empty()) {
        // The page that would hold keys[k]: the last one whose first key is not after it (or the first page).
        size_t not_after = _summary.points_not_after(keys[k]);
        size_t i = not_after == 0 ? 0 : not_after - 1;
        // The keys before the next page's first key are this page's too.
        size_t end = k + 1;
        while (end < keys.size() && (i + 1 == pts.size() || keys[end] < pts[i + 1].key)) {
            ++end;
        }
        auto pg = co_await page(i);
        // The page's keys found together (their entries' bytes are mostly cold in the CPU's cache).
        find_entries(*pg, keys.subspan(k, end - k), at);
        for (size_t j = k; j < end; ++j) {
            size_t e = at[j - k];
            if (e == pg->size()) {
                continue;
            }
            entry_ref ref{pg, e};
            uint64_t stop = 0;
            if (e + 1 < pg->size()) {
                stop = pg->data_position(e + 1);
            } else {
                stop = co_await next_position(ref);
            }
            uint64_t start = pg->data_position(e);
            out[j] = located_entry{std::move(ref), data_range{start, std::max(start, stop)}};
        }
        k = end;
    }
    co_return out;
}

future<uint64_t> index_reader::lower_bound(const dht::ring_position& p) {
    std::function<bool(const dht::decorated_key&)> skip = [&](const dht::decorated_key& k) { return p.compare(k) > 0; };
    auto pos = co_await first_not(std::move(skip));
    co_return pos;
}

future<data_range> index_reader::range(const dht::partition_range& pr) {
    if (!(pr.is_singular() && pr.start()->inclusive && pr.end()->inclusive)) {
        return ranged(pr);
    }
    // One key (a single-partition read): its entry, compared in place, and where the next partition starts.
    auto& k = *pr.start()->position.key();
    if (_summary.points.empty()) {
        return make_ready_future<data_range>(data_range{_summary.data_length, _summary.data_length});
    }
    // The last page whose first key is not after k holds k's entry if any, or the first entry after k is the next
    // page's first.
    size_t not_after = _summary.points_not_after(k);
    size_t i = not_after == 0 ? 0 : not_after - 1;
    auto first = page(i);
    if (first.available()) {
        // Not a coroutine while the page is cached and holds the entry after k's too: no frame made.
        try {
            auto pg = first.await_resume();
            size_t at = entry_lower_bound(*pg, k);
            if (at != pg->size()) {
                uint64_t start = pg->data_position(at);
                if (pg->compare(at, k) != 0) {
                    return make_ready_future<data_range>(data_range{start, start});
                }
                if (at + 1 < pg->size()) {
                    return make_ready_future<data_range>(data_range{start, std::max(start, pg->data_position(at + 1))});
                }
            }
            first = make_ready_future<index_page_cache::entry_ptr>(std::move(pg));
        } catch (...) {
            return make_exception_future<data_range>(std::current_exception());
        }
    }
    return singular_range(k, i, std::move(first));
}

future<data_range> index_reader::singular_range(const dht::decorated_key& k, size_t i,
                                                future<index_page_cache::entry_ptr> first) {
    auto pg = co_await std::move(first);
    for (;;) {
        size_t at = entry_lower_bound(*pg, k);
        if (at != pg->size()) {
            entry_ref e{std::move(pg), at};
            uint64_t start = e.data_position();
            if (!e.is(k)) {
                co_return data_range{start, start};
            }
            uint64_t end = co_await next_position(e);
            co_return data_range{start, std::max(start, end)};
        }
        if (++i == _summary.points.size()) {
            co_return data_range{_summary.data_length, _summary.data_length};
        }
        pg = co_await page(i);
    }
}

future<data_range> index_reader::ranged(const dht::partition_range& pr) {
    std::function<bool(const dht::decorated_key&)> before = [&](const dht::decorated_key& k) { return pr.before(k); };
    std::function<bool(const dht::decorated_key&)> not_after = [&](const dht::decorated_key& k) { return !pr.after(k); };
    // An unbounded side needs no lookup (the first partition starts Data.db, the last one ends it): a full scan
    // reads no index page, as ScyllaDB's perf_fast_forward expects of its small-partition scan.
    uint64_t start = 0;
    if (pr.start()) {
        start = co_await first_not(std::move(before));
    }
    uint64_t end = _summary.data_length;
    if (pr.end()) {
        end = co_await first_not(std::move(not_after));
    }
    co_return data_range{start, std::max(start, end)};
}

} // namespace reef::index
