// The MultiGet experiment on Reef: one db::table of (k blob PRIMARY KEY, v blob), uncompressed, loaded by random
// writes into memtables flushed to sstables, then compacted (major) into a run of about 8.6 MB sstables with
// disjoint key bounds (--reef-flat: the flushed sstables as they are, each spanning the ring), read through the shard's
// caches at RocksDB's block cache size. get: table::make_reader of the key's singular range (the path a
// single-partition query takes) into a mutation; multiget_loop: table::multi_get_unbatched of the whole batch (one
// call, a single-partition read per key inside, sstable readers kept for the call, as RocksDB's unbatched MultiGet);
// multiget: table::multi_get of the whole batch. Both take the batch's keys in ring order, distinct. With
// --reef-stride-order ring, a strided batch's keys are `stride` apart in ring order (tokens) rather than in key order.
#include "test/perf/multiget_workload.hh"
#include "test/perf/perf_util.hh"

#include "cache/tracker.hh"
#include "db/table.hh"
#include "runtime/reactor.hh"

#include <algorithm>
#include <ctime>
#include <fmt/core.h>
#include <numeric>

namespace reef::perf {

namespace {

// Leveled: the major compaction after the load writes a run of sstables of about 8.6 MB (8 MiB), with disjoint key
// bounds, as RocksDB's full compaction leaves its last level.
schema_ptr multiget_schema(uint64_t sstable_mb, double bloom_fp_chance) {
    table_options o;
    o.compression = {{"enabled", "false"}};
    o.other["compaction"] =
        fmt::format("{{'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '{}'}}", sstable_mb);
    o.other["bloom_filter_fp_chance"] = fmt::format("{}", bloom_fp_chance);
    return schema_builder("bench", "multiget")
        .with_column("k", blob_type(), column_kind::partition_key)
        .with_column("v", blob_type(), column_kind::regular_column)
        .with_options(o)
        .build();
}

dht::decorated_key decorated(uint64_t n) {
    char b[mg::key_size];
    mg::key_bytes(n, b);
    return dht::decorated_key(partition_key(std::string_view(b, mg::key_size)));
}

clustering_ranges full_slice() {
    return clustering_ranges{position_range::full()};
}

mutation_reader single_reader(table& t, const dht::decorated_key& k) {
    return t.make_reader(reader_permit(), {.range = dht::partition_range::singular(k)});
}

// The single-partition read a query makes, into a mutation; whether the key was found.
future<bool> get(table& t, const dht::decorated_key& k) {
    auto r = single_reader(t, k);
    mutation_partition_builder builder(t.schema());
    std::optional<mutation> m;
    while (auto f = co_await r()) {
        if (auto done = builder.consume(std::move(*f))) {
            m = std::move(done);
        }
    }
    co_await r.close();
    co_return m && !m->partition().rows().empty();
}

bool found_in(const std::optional<mutation>& m) {
    return m && !m->partition().rows().empty();
}

// One batch through multi_get (or, not batched, multi_get_unbatched): keys in ring order, distinct; every key of the
// batch (duplicates too) counted.
future<uint64_t> multi_get(table& t, const std::vector<uint64_t>& batch, const clustering_ranges& slice, bool batched) {
    std::vector<std::pair<dht::decorated_key, size_t>> order;
    order.reserve(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
        order.emplace_back(decorated(batch[i]), i);
    }
    std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<dht::decorated_key> keys;
    std::vector<size_t> slot(batch.size());
    for (auto& [k, i] : order) {
        if (keys.empty() || !(keys.back() == k)) {
            keys.push_back(k);
        }
        slot[i] = keys.size() - 1;
    }
    std::vector<std::optional<mutation>> got;
    if (batched) {
        got = co_await t.multi_get(reader_permit(), std::move(keys), slice);
    } else {
        got = co_await t.multi_get_unbatched(reader_permit(), std::move(keys), slice);
    }
    uint64_t found = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        found += found_in(got[slot[i]]);
    }
    co_return found;
}

future<> load(table& t, const multiget_workload& wl, double& seconds) {
    auto s = t.schema();
    auto start = clock_type::now();
    mg::rng r(1);
    char value[mg::value_size];
    for (uint64_t w = 1; w <= wl.keys; ++w) {
        mg::value_bytes(w, value);
        mutation m(s, decorated(wl.load_key(r)));
        deletable_row row;
        auto ts = write_time::timestamp_type(w);
        row.marker = row_marker{ts};
        row.cells.apply(0, atomic_cell::make_live(ts, std::string(value, mg::value_size)));
        m.partition().apply_row(*s, clustering_key_prefix{}, row);
        t.apply(m);
        if (w % 1024 == 0) {
            // The write path's back-pressure: at most one sealed memtable waiting for its flush.
            co_await maybe_yield();
            while (t.sealed_memtable_count() > 1) {
                co_await sleep(std::chrono::milliseconds(1));
            }
        }
    }
    co_await t.flush();
    if (!wl.reef_flat) {
        // As the RocksDB run compacts fully after its load.
        co_await t.compact_all(deletion_time_type(std::time(nullptr)));
    }
    seconds = seconds_since(start);
}

// The keys of [0, n) in ring order: a batch's i-th key in key order becomes the i-th in ring order (--reef-stride-order
// ring), so that keys `stride` apart are that far apart in Reef's sstables.
std::vector<uint64_t> ring_order(uint64_t n) {
    std::vector<std::pair<dht::token, uint64_t>> by_token;
    by_token.reserve(n);
    for (uint64_t k = 0; k < n; ++k) {
        by_token.emplace_back(decorated(k).get_token(), k);
    }
    std::sort(by_token.begin(), by_token.end());
    std::vector<uint64_t> out;
    out.reserve(n);
    for (auto& [t, k] : by_token) {
        out.push_back(k);
    }
    return out;
}

future<multiget_cell> measure_cell(table& t, const std::vector<std::vector<uint64_t>>& batches,
                                   const std::string& method, uint64_t batch, uint64_t stride) {
    multiget_cell c{method, batch, stride};
    auto slice = full_slice();
    for (auto& b : batches) {
        c.keys += b.size();
    }
    cell_meter tm;
    if (method == "get") {
        for (auto& b : batches) {
            for (auto k : b) {
                c.found += co_await get(t, decorated(k));
            }
        }
    } else {
        for (auto& b : batches) {
            c.found += co_await multi_get(t, b, slice, method == "multiget");
        }
    }
    tm.finish(c);
    co_return c;
}

// The table, loaded and compacted by start(), read by measure().
class reef_multiget final : public multiget_engine {
public:
    reef_multiget(const multiget_workload& wl, std::string directory) : _wl(wl), _directory(std::move(directory)) {
        _run.engine = "reef";
    }

    future<> start() override {
        cache::shard_cache_tracker().lru().set_budget(size_t(_wl.cache_mb) << 20);
        table_config tc;
        tc.directory = _directory;
        tc.memtable_flush_threshold = size_t(_wl.reef_memtable_mb) << 20;
        tc.enable_cache = _wl.reef_row_cache;
        _table = std::make_unique<table>(multiget_schema(_wl.reef_sstable_mb, _wl.reef_bloom_fp_chance), tc);
        co_await _table->start();
        _started = true;
        co_await load(*_table, _wl, _run.load_seconds);
        uint64_t bytes = 0;
        for (auto& sst : _table->sstables()) {
            bytes += sst->components().data_length();
        }
        auto n = _table->sstable_count();
        _run.notes.emplace_back("sstables", fmt::format("{}", n));
        _run.notes.emplace_back("Data.db MB each",
                                fmt::format("{:.1f}", double(bytes) / 1e6 / double(std::max<size_t>(1, n))));
        // Unmeasured: single gets of keys no cell reads (index pages, caches), at most 20000.
        auto warm = _wl.cell_batches(1, 0, 3);
        warm.resize(std::min<size_t>(warm.size(), 20000));
        co_await measure_cell(*_table, warm, "get", 0, 0);
        if (_wl.reef_ring_order) {
            _ring = ring_order(_wl.keys);
        }
    }

    future<multiget_cell> measure(uint64_t batch, uint64_t stride, unsigned method, unsigned round) override {
        auto batches = _wl.cell_batches(batch, stride, method, round);
        if (!_ring.empty() && stride != 0) {
            for (auto& b : batches) {
                for (auto& k : b) {
                    k = _ring[k];
                }
            }
        }
        auto c = co_await measure_cell(*_table, batches, multiget_methods[method], batch, stride);
        co_return c;
    }

    future<> stop() override {
        if (!_started) {
            co_return;
        }
        auto& rs = cache::shard_cache_tracker().row_stats();
        auto& is = cache::shard_cache_tracker().index_stats();
        _run.notes.emplace_back("row cache hits/misses", fmt::format("{}/{}", rs.hits, rs.misses));
        _run.notes.emplace_back("index page hits/misses", fmt::format("{}/{}", is.hits, is.misses));
        _started = false;
        co_await _table->stop();
    }

private:
    const multiget_workload& _wl;
    std::string _directory;
    std::unique_ptr<table> _table;
    bool _started = false;
    std::vector<uint64_t> _ring;  // key order to ring order (--reef-stride-order ring)
};

} // namespace

std::unique_ptr<multiget_engine> make_reef_multiget(const multiget_workload& wl, std::string directory) {
    return std::make_unique<reef_multiget>(wl, std::move(directory));
}

std::vector<std::vector<uint64_t>> multiget_workload::cell_batches(uint64_t batch, uint64_t stride, unsigned method,
                                                                   unsigned round) const {
    // Round 0 draws what a run of one round always drew.
    mg::rng r((batch * 1000003 + stride) * 4 + method + 7 + uint64_t(round) * 0x9E3779B97F4A7C15ull);
    std::vector<std::vector<uint64_t>> out(std::max<uint64_t>(1, reads / batch));
    for (auto& b : out) {
        b.reserve(batch);
        if (stride == 0) {
            for (uint64_t i = 0; i < batch; ++i) {
                b.push_back(r.next() % keys);
            }
            continue;
        }
        uint64_t span = batch * stride;
        uint64_t start = span < keys ? r.next() % (keys - span) : 0;
        for (uint64_t i = 0; i < batch; ++i) {
            b.push_back((start + i * stride) % keys);
        }
    }
    return out;
}

} // namespace reef::perf
