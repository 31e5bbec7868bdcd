// A page of live rows per shard, merged; a page of given keys, read in batches. See query_page.hh.
//
// A shard cannot know how the others' partitions interleave with its own, so a range page reads in rounds
// (read_range_rounds): each shard first reads its share of the page; a shard that stopped early has all its rows
// before its last key, so the rows up to the least such position (over the shards that may hold more) are
// complete; while they do not fill the page, the shard that stopped there reads on. The merge keeps the first
// row_limit rows in ring order, all within the complete part.
#include "db/query_page.hh"


#include "db/database_helpers.hh"
#include "reader/compacting_reader.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "runtime/with_closeable.hh"

#include <algorithm>
#include <iterator>

namespace reef {

uint64_t counted_rows(const mutation& m, bool static_only_is_row, bool resumed_partition) {
    auto n = m.partition().rows().size();
    if (n == 0 && static_only_is_row && !resumed_partition && !m.partition().static_row().empty()) {
        return 1;
    }
    return n;
}

namespace {

bool resumes(const page_request& req, const dht::decorated_key& k) {
    return req.start_after && req.start_after->row && req.start_after->key == k;
}

// The forward slice cut to what lies strictly after `row` in the read's order.
clustering_ranges slice_after(const schema& s, const clustering_ranges& forward, const clustering_key_prefix& row,
                              bool reversed) {
    position_in_partition_comparator cmp(s);
    clustering_ranges out;
    for (auto r : forward) {
        if (!reversed) {
            auto b = position_in_partition::after_key(row);
            if (cmp(r.start, b) < 0) {
                r.start = b;
            }
        } else {
            auto b = position_in_partition::before_key(row);
            if (cmp(b, r.end) < 0) {
                r.end = b;
            }
        }
        if (cmp(r.start, r.end) < 0) {
            out.push_back(std::move(r));
        }
    }
    return out;
}

// The part of `range` strictly after key k, which lies in or before it (none when nothing of it does).
std::optional<dht::partition_range> range_after(const dht::partition_range& range, const dht::decorated_key& k) {
    if (range.end() && range.end()->position.compare(k) <= 0) {
        return std::nullopt;
    }
    if (range.before(k)) {
        return range;
    }
    return dht::partition_range(dht::partition_range::bound{dht::ring_position::for_key(k), false}, range.end());
}

// Consumes a compacted stream into the page's partitions, counting rows, until the page is full.
class page_builder {
public:
    page_builder(schema_ptr s, const page_request& req)
        : _s(s), _req(req), _reversed(req.order == read_order::reversed), _builder(std::move(s), _reversed) {}

    // Feeds one fragment; returns false once the page is full (the partition in progress is finished).
    // Sets `skip_partition` when the rest of the current partition is not wanted (its limit is reached).
    bool consume(mutation_fragment&& f, bool& skip_partition) {
        skip_partition = false;
        if (auto* ps = std::get_if<partition_start>(&f)) {
            _key = ps->key;
            _open = true;
            _emitted = 0;
            _resumed = resumes(_req, ps->key);
            _partition_rows = _resumed ? _req.start_after->partition_rows : 0;
            _builder.consume(f);
            if (_partition_rows >= _req.partition_row_limit) {
                finish();
                skip_partition = true;
            }
            return true;
        }
        if (!_open) {
            return true;  // the rest of a partition skipped
        }
        if (std::holds_alternative<partition_end>(f)) {
            finish();
            return _result.rows < _req.row_limit;
        }
        if (auto* cr = std::get_if<clustering_row>(&f)) {
            auto ck = cr->key;
            _builder.consume(std::move(f));
            ++_emitted;
            ++_partition_rows;
            ++_result.rows;
            _result.last = page_position{*_key, std::move(ck), _partition_rows};
            if (_result.rows >= _req.row_limit) {
                finish();
                return false;
            }
            if (_partition_rows >= _req.partition_row_limit) {
                finish();
                skip_partition = true;
            }
            return true;
        }
        _builder.consume(std::move(f));
        return true;
    }

    page_result take() { return std::move(_result); }
    page_result& result() noexcept { return _result; }

private:
    void finish() {
        _open = false;
        auto m = _builder.consume(partition_end{});
        if (!m) {
            return;
        }
        if (_emitted == 0) {
            if (counted_rows(*m, _req.static_only_is_row, _resumed) == 0) {
                return;
            }
            ++_result.rows;
            _result.last = page_position{*_key, std::nullopt, 1};
        }
        _result.partitions.push_back(std::move(*m));
    }

    schema_ptr _s;
    const page_request& _req;
    bool _reversed;
    mutation_partition_builder _builder;
    page_result _result;
    std::optional<dht::decorated_key> _key;
    bool _open = false;
    bool _resumed = false;
    uint64_t _emitted = 0;
    uint64_t _partition_rows = 0;
};

// Feeds r (a compacting reader) into the builder until the page is full (returns false) or the stream ends
// (returns true); closes r.
future<bool> consume_into(mutation_reader r, reader_permit permit, page_builder& b) {
    bool ended = false;
    co_await with_closeable(std::move(r), [&](mutation_reader& r) -> future<> {
        while (true) {
            if (r.is_buffer_empty()) {
                if (r.is_end_of_stream()) {
                    ended = true;
                    co_return;
                }
                permit.check_timeout("the next rows");
                co_await r.fill_buffer();
                continue;
            }
            bool skip = false;
            if (!b.consume(r.pop_mutation_fragment(), skip)) {
                co_return;
            }
            if (skip) {
                co_await r.next_partition();
            }
        }
    });
    co_return ended;
}

// Reads `opts` into the builder until the page is full (returns false) or the stream ends (returns true).
future<bool> read_into(std::shared_ptr<table> t, reader_permit permit, read_options opts, deletion_time_type now,
                       page_builder& b) {
    auto raw = t->make_reader(permit, std::move(opts));
    // A coroutine: t stays alive until the read ends.
    co_return co_await consume_into(make_compacting_reader(std::move(raw), now, compaction_mode::query), permit, b);
}

// A raw partition (database::multi_get's) fed into the builder as query_page reads one: compacted for the query.
future<bool> feed_partition(const mutation& m, reader_permit permit, page_builder& b, bool reversed,
                            deletion_time_type now) {
    auto raw = make_fragment_vector_reader(m.schema(), to_fragments(m, reversed), dht::partition_range::full(),
                                           streamed_forwarding::no, reversed);
    return consume_into(make_compacting_reader(std::move(raw), now, compaction_mode::query), std::move(permit), b);
}

future<page_result> query_page_read(database& db, table_id id, page_request req);

// One shard's page, counted as a read of the table (db/table_stats.hh).
future<page_result> query_page_local(database& db, table_id id, page_request req) {
    auto started = utils::rate_meter::clock::now();
    auto res = co_await query_page_read(db, id, std::move(req));
    db.note_page_rows(res.rows);
    if (auto* stats = db.find_table_stats(id)) {
        stats->reads.record(started, utils::rate_meter::clock::now());
    }
    co_return res;
}

future<page_result> query_page_read(database& db, table_id id, page_request req) {
    auto t = db.find_table_shared(id);
    if (!t) {
        throw no_such_table("no table " + utils::to_string(id) + " on shard " + std::to_string(this_shard_id()));
    }
    auto s = t->schema();
    reader_permit permit(req.description, req.timeout);
    bool reversed = req.order == read_order::reversed;
    page_builder b(s, req);
    std::optional<dht::partition_range> rest = req.range;
    if (req.start_after) {
        auto& k = req.start_after->key;
        if (req.start_after->row && dht::shard_of(k.get_token(), smp::count()) == this_shard_id() &&
            req.range.contains(k) && req.start_after->partition_rows < req.partition_row_limit) {
            auto forward = slice_after(*s, req.slice, *req.start_after->row, reversed);
            if (!forward.empty()) {
                read_options opts{.range = dht::partition_range::singular(k),
                                  .slice = reversed ? reverse_ranges(forward) : std::move(forward),
                                  .order = req.order,
                                  .bypass = req.bypass};
                if (!co_await read_into(t, permit, std::move(opts), req.now, b)) {
                    auto res = b.take();
                    res.exhausted = false;
                    co_return res;
                }
            }
        }
        rest = range_after(req.range, k);
    }
    if (rest) {
        read_options opts{.range = *rest,
                          .slice = reversed ? reverse_ranges(req.slice) : req.slice,
                          .order = req.order,
                          .bypass = req.bypass};
        if (!co_await read_into(t, permit, std::move(opts), req.now, b)) {
            auto res = b.take();
            res.exhausted = false;
            co_return res;
        }
    }
    auto res = b.take();
    res.exhausted = true;
    co_return res;
}

// The first `n` rows of m in the read's order, with its static row.
mutation first_rows(const mutation& m, uint64_t n, bool reversed) {
    mutation out(m.schema(), m.decorated_key());
    auto& s = *m.schema();
    for (auto& [id, c] : m.partition().static_row().cells()) {
        out.partition().apply_static(s, id, c);
    }
    auto& rows = m.partition().rows();
    auto keep = [&](const auto& entry) { out.partition().apply_row(s, entry.first, entry.second); };
    if (!reversed) {
        for (auto it = rows.begin(); it != rows.end() && n > 0; ++it, --n) {
            keep(*it);
        }
    } else {
        for (auto it = rows.rbegin(); it != rows.rend() && n > 0; ++it, --n) {
            keep(*it);
        }
    }
    return out;
}

// What the shards' reads of a range page gave: their partitions in ring order (one mutation per key), and whether
// every shard reached the end of the range.
struct range_rows {
    std::vector<mutation> partitions;
    bool exhausted = true;
};

// One shard's reads of a range page so far.
struct shard_cursor {
    std::optional<page_position> after;
    bool exhausted = false;
    std::vector<mutation> partitions;
};

// Rounds of shard reads until the rows known complete (read by every shard up to there) fill req.row_limit or
// every shard is exhausted. The first round asks each shard for its share of the page and one row more; then
// the shard that stopped first (the bound of what is complete) is asked for the rows still missing; after
// `lagging_rounds` such rounds every shard still reading is, which completes the page. A page thus reads about
// row_limit rows instead of shards x row_limit.
future<range_rows> read_range_rounds(sharded<database>& db, table_id id, const page_request& req) {
    constexpr int lagging_rounds = 3;
    auto n = smp::count();
    std::vector<shard_cursor> shards(n);
    std::vector<uint64_t> asks(n, req.row_limit == no_row_limit || n == 1 ? req.row_limit : req.row_limit / n + 1);
    std::vector<shard_id> which;
    for (shard_id sh = 0; sh < n; ++sh) {
        shards[sh].after = req.start_after;
        which.push_back(sh);
    }
    for (int round = 0;; ++round) {
        std::vector<future<page_result>> parts;
        for (auto sh : which) {
            page_request part = req;
            part.row_limit = asks[sh];
            part.start_after = shards[sh].after;
            auto one = [id, part = std::move(part)](database& d) { return query_page_local(d, id, part); };
            parts.push_back(db.invoke_on(sh, std::move(one)));
        }
        auto results = co_await when_all(std::move(parts));
        for (size_t i = 0; i < which.size(); ++i) {
            auto& c = shards[which[i]];
            auto& r = results[i];
            c.exhausted = r.exhausted;
            if (r.last) {
                c.after = std::move(r.last);
            }
            for (auto& m : r.partitions) {
                // A partition a shard resumed in this round continues the one it ended the last with.
                if (!c.partitions.empty() && c.partitions.back().decorated_key() == m.decorated_key()) {
                    c.partitions.back().apply(std::move(m));
                } else {
                    c.partitions.push_back(std::move(m));
                }
            }
        }
        // The bound: where the first shard that may hold more stopped; every row up to it is read.
        std::optional<shard_id> lag;
        for (shard_id sh = 0; sh < n; ++sh) {
            if (!shards[sh].exhausted && (!lag || shards[sh].after->key < shards[*lag].after->key)) {
                lag = sh;
            }
        }
        if (!lag) {
            break;
        }
        auto& bound = shards[*lag].after->key;
        uint64_t complete = 0;
        for (auto& c : shards) {
            for (auto& m : c.partitions) {
                if (bound < m.decorated_key()) {
                    break;
                }
                complete += counted_rows(m, req.static_only_is_row, resumes(req, m.decorated_key()));
            }
        }
        if (complete >= req.row_limit) {
            break;
        }
        which.clear();
        for (shard_id sh = 0; sh < n; ++sh) {
            if (sh == *lag || (round + 1 >= lagging_rounds && !shards[sh].exhausted)) {
                which.push_back(sh);
                asks[sh] = req.row_limit - complete;
            }
        }
    }
    range_rows out;
    for (auto& c : shards) {
        out.exhausted = out.exhausted && c.exhausted;
        std::move(c.partitions.begin(), c.partitions.end(), std::back_inserter(out.partitions));
    }
    std::sort(out.partitions.begin(), out.partitions.end(),
              [](const mutation& a, const mutation& b) { return a.decorated_key() < b.decorated_key(); });
    co_return out;
}

} // namespace

std::shared_ptr<table> database::find_table_shared(const table_id& id) {
    auto it = _tables.find(id);
    return it == _tables.end() ? nullptr : it->second->t;
}

future<page_result> query_page(sharded<database>& db, schema_ptr s, page_request req) {
    auto id = s->id();
    if (req.range.is_singular() && req.range.start()->position.key()) {
        auto shard = dht::shard_of(req.range.start()->position.get_token(), smp::count());
        if (shard != this_shard_id()) {
            db.local().note_cross_shard_op();
        }
        auto one = [id, req](database& d) { return query_page_local(d, id, req); };
        co_return co_await db.invoke_on(shard, one);
    }
    auto all = co_await read_range_rounds(db, id, req);
    page_result out;
    out.exhausted = all.exhausted;
    bool reversed = req.order == read_order::reversed;
    for (auto& m : all.partitions) {
        if (out.rows >= req.row_limit) {
            out.exhausted = false;
            break;
        }
        bool resumed = resumes(req, m.decorated_key());
        uint64_t before = resumed ? req.start_after->partition_rows : 0;
        auto n = counted_rows(m, req.static_only_is_row, resumed);
        if (out.rows + n > req.row_limit) {
            n = req.row_limit - out.rows;
            m = first_rows(m, n, reversed);
            out.exhausted = false;
        }
        out.rows += n;
        auto& rows = m.partition().rows();
        std::optional<clustering_key_prefix> last_row;
        if (!rows.empty()) {
            last_row = reversed ? rows.begin()->first : rows.rbegin()->first;
        }
        out.last = page_position{m.decorated_key(), std::move(last_row), before + n};
        out.partitions.push_back(std::move(m));
    }
    co_return out;
}

namespace {

// The page's keys from `next` on, read in batches into the builder until the page is full (returns false) or the
// keys end (returns true).
future<bool> read_keys_into(sharded<database>& db, schema_ptr s, const std::vector<dht::decorated_key>& keys,
                            size_t next, const page_request& req, page_builder& b) {
    bool reversed = req.order == read_order::reversed;
    auto read_slice = reversed ? reverse_ranges(req.slice) : req.slice;
    reader_permit permit(req.description, req.timeout);
    while (next < keys.size()) {
        // Each partition with a row in the slice gives the page one at least.
        uint64_t left = req.row_limit - b.result().rows;
        size_t n = size_t(std::min<uint64_t>(keys.size() - next, std::max<uint64_t>(left, 1)));
        std::vector<partition_key> batch;
        batch.reserve(n);
        for (size_t i = next; i < next + n; ++i) {
            batch.push_back(keys[i].key());
        }
        auto found = co_await db.local().multi_get(s, std::move(batch), read_slice, reversed, req.timeout, req.bypass);
        std::sort(found.begin(), found.end(),
                  [](const mutation& x, const mutation& y) { return x.decorated_key() < y.decorated_key(); });
        for (size_t i = next; i < next + n; ++i) {
            auto it = std::lower_bound(found.begin(), found.end(), keys[i],
                                       [](const mutation& m, const dht::decorated_key& k) { return m.decorated_key() < k; });
            if (it == found.end() || !(it->decorated_key() == keys[i])) {
                continue;
            }
            bool ended = co_await feed_partition(*it, permit, b, reversed, req.now);
            if (!ended) {
                co_return false;
            }
        }
        next += n;
    }
    co_return true;
}

} // namespace

future<page_result> query_keys_page(sharded<database>& db, schema_ptr s, std::vector<dht::decorated_key> keys,
                                    page_request req) {
    size_t next = 0;
    page_result head;
    head.exhausted = true;
    if (req.start_after) {
        auto it = std::find(keys.begin(), keys.end(), req.start_after->key);
        if (it != keys.end()) {
            next = size_t(it - keys.begin()) + 1;
            if (req.start_after->row) {
                page_request one = req;
                one.range = dht::partition_range::singular(*it);
                head = co_await query_page(db, s, one);
                if (!head.exhausted) {
                    co_return head;
                }
            }
        }
    }
    page_request rest = req;
    rest.start_after.reset();
    rest.row_limit = req.row_limit == no_row_limit ? no_row_limit : req.row_limit - head.rows;
    page_builder b(s, rest);
    bool ended = co_await read_keys_into(db, s, keys, next, rest, b);
    auto res = b.take();
    res.exhausted = ended;
    if (!res.last) {
        res.last = std::move(head.last);
    }
    res.rows += head.rows;
    if (!head.partitions.empty()) {
        std::move(res.partitions.begin(), res.partitions.end(), std::back_inserter(head.partitions));
        res.partitions = std::move(head.partitions);
    }
    co_return res;
}

} // namespace reef
