// The DeleteRange workload on Reef's real write and read paths: one db::table (memtable, background flushes to
// sstables), every read through table::make_reader (the row cache in front of the sstables, merged with the
// memtables by the combined reader when they hold anything) wrapped in the compacting reader in query mode, as a CQL
// SELECT at `now` would read.
#include "test/perf/delete_range_workload.hh"
#include "test/perf/perf_counters.hh"
#include "test/perf/perf_util.hh"

#include "cache/tracker.hh"
#include "db/table.hh"
#include "mutation/mutation.hh"
#include "reader/combined_reader.hh"
#include "reader/compacting_reader.hh"
#include "runtime/reactor.hh"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/core.h>
#include <optional>
#include <stdexcept>

namespace reef::perf {

namespace {

schema_ptr delete_range_schema() {
    table_options o;
    // As RocksDB's side: no compression.
    o.compression = {{"enabled", "false"}};
    return schema_builder("bench", "delete_range")
        .with_column("pk", bigint_type(), column_kind::partition_key)
        .with_column("ck", bigint_type(), column_kind::clustering_key)
        .with_column("v", blob_type(), column_kind::regular_column)
        .with_options(o)
        .build();
}

bytes be64(uint64_t v) {
    char b[8];
    put_be64(v, b);
    return bytes(b, b + 8);
}

clustering_key_prefix ck_of(uint64_t c) {
    // From a stack buffer: the key holds its value inline, so nothing is allocated.
    char b[8];
    put_be64(c, b);
    clustering_key_prefix k;
    k.push_back(bytes_view(reinterpret_cast<const uint8_t*>(b), 8));
    return k;
}

deletion_time_type now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr size_t cache_budget = size_t(4) << 30;

table_config make_config(const delete_range_workload& wl, const std::string& dir) {
    table_config c;
    c.directory = dir;
    c.memtable_flush_threshold = wl.reef_memtable_bytes;
    uint32_t block = uint32_t(wl.reef_block_kb << 10);
    c.write_sstable = [block](mutation_reader& r, schema_ptr s, sstables::descriptor d, sstables::writer_options o) {
        o.column_index_size = block;
        o.crc_chunk_size = block;
        return sstables::write_sstable(r, std::move(s), std::move(d), std::move(o));
    };
    return c;
}

// The state of one run: the table, the workload's partitions keyed once, the write clock.
class reef_bench {
public:
    reef_bench(const delete_range_workload& wl, const std::string& dir)
        : _wl(wl), _s(delete_range_schema()), _table(_s, make_config(wl, dir)) {
        for (uint64_t p = 0; p < wl.partitions; ++p) {
            auto b = be64(p);
            _keys.emplace_back(partition_key(std::string(b.begin(), b.end())));
        }
    }

    future<> start() { return _table.start(); }
    future<> stop() { return _table.stop(); }
    table& tbl() noexcept { return _table; }
    const combined_reader_stats& stats() const noexcept { return _stats; }

    void write_row(uint64_t i) {
        char value[value_size];
        row_value(i, value);
        auto ts = ++_clock;
        mutation m(_s, _keys[_wl.partition_of(i)]);
        deletable_row r;
        r.marker = row_marker{ts};
        r.cells.apply(0, atomic_cell::make_live(ts, std::string(value, value_size)));
        m.partition().apply_row(*_s, ck_of(_wl.clustering_of(i)), r);
        _table.apply(m);
    }

    void delete_range(const range_deletion& d) {
        mutation m(_s, _keys[d.partition]);
        m.partition().apply_range_tombstone(position_in_partition::before_key(ck_of(d.start)),
                                            position_in_partition::before_key(ck_of(d.end)),
                                            tombstone{++_clock, now_seconds()});
        _table.apply(m);
    }

    // The scan variant's deletion: the range's live rows read through the table, each deleted by a row tombstone.
    future<> delete_live_rows(const range_deletion& d) {
        std::vector<clustering_key_prefix> live;
        co_await read(d.partition, d.start, std::numeric_limits<uint64_t>::max(), d.end, [&](const clustering_row& r) {
            live.push_back(r.key);
        });
        for (auto& k : live) {
            mutation m(_s, _keys[d.partition]);
            deletable_row r;
            r.tomb = tombstone{++_clock, now_seconds()};
            m.partition().apply_row(*_s, k, r);
            _table.apply(m);
        }
    }

    // Keeps at most one sealed memtable waiting for its flush (the write path's back-pressure), letting the
    // background flush run.
    future<> throttle() {
        co_await maybe_yield();
        while (_table.sealed_memtable_count() > 1) {
            co_await sleep(std::chrono::milliseconds(1));
        }
    }

    // Up to `limit` live rows of partition p from clustering key `from` (to `to`, exclusive, when not max), at
    // `now`; on_row for each. Returns the rows read.
    template <typename OnRow>
    future<uint64_t> read(uint64_t p, uint64_t from, uint64_t limit, uint64_t to, OnRow on_row) {
        auto end = to == std::numeric_limits<uint64_t>::max() ? position_in_partition::after_all_clustered_rows()
                                                               : position_in_partition::before_key(ck_of(to));
        // Moved in (a braced list would copy both keys).
        clustering_ranges slice;
        slice.reserve(1);
        slice.push_back(position_range{position_in_partition::before_key(ck_of(from)), std::move(end)});
        auto range = dht::partition_range::singular(_keys[p]);
        co_return co_await read(range, std::move(slice), limit, on_row);
    }

    // Up to `limit` live rows of `range` sliced by `slice`.
    template <typename OnRow>
    future<uint64_t> read(const dht::partition_range& range, clustering_ranges slice, uint64_t limit, OnRow& on_row) {
        auto r = make_compacting_reader(
            _table.make_reader(reader_permit(), {.range = range, .slice = std::move(slice), .stats = &_stats}), now_seconds(),
            compaction_mode::query);
        uint64_t n = 0;
        std::exception_ptr err;
        try {
            while (n < limit) {
                if (r.is_buffer_empty()) {
                    if (r.is_end_of_stream()) {
                        break;
                    }
                    co_await r.fill_buffer();
                    continue;
                }
                auto f = r.pop_mutation_fragment();
                if (auto* row = std::get_if<clustering_row>(&f)) {
                    ++n;
                    on_row(*row);
                }
            }
        } catch (...) {
            err = std::current_exception();
        }
        co_await r.close();
        if (err) {
            std::rethrow_exception(err);
        }
        co_return n;
    }

    bool is_key(const clustering_row& r, uint64_t c) const {
        auto k = r.key.component(0);
        char want[8];
        put_be64(c, want);
        return k.size() == 8 && std::memcmp(k.data(), want, 8) == 0;
    }

private:
    const delete_range_workload& _wl;
    schema_ptr _s;
    table _table;
    std::vector<dht::decorated_key> _keys;
    write_time::timestamp_type _clock = 0;
    combined_reader_stats _stats;
};

future<> load(reef_bench& b, const delete_range_workload& wl, phase_result& out) {
    auto perm = wl.load_order();
    deletion_schedule deletions(wl);
    phase_timer timer;
    for (uint64_t w = 1; w <= wl.rows; ++w) {
        b.write_row(perm[w - 1]);
        if (auto d = deletions.after_write(w); d && d->end > d->start) {
            if (wl.variant == delete_variant::range) {
                b.delete_range(*d);
            } else if (wl.variant == delete_variant::scan) {
                co_await b.delete_live_rows(*d);
            }
        }
        if (w % 64 == 0) {
            co_await b.throttle();
        }
    }
    if (!wl.reef_no_flush) {
        co_await b.tbl().flush();
    }
    if (wl.major_compaction) {
        co_await b.tbl().compact_all(now_seconds());
    }
    timer.finish(out);
    out.ops = wl.rows;
}

future<> point_reads(reef_bench& b, const delete_range_workload& wl, phase_result& out) {
    read_stream stream(wl, get_seed);
    phase_timer timer;
    for (uint64_t op = 0; op < wl.ops; ++op) {
        auto i = stream.next();
        auto c = wl.clustering_of(i);
        out.found += co_await b.read(wl.partition_of(i), c, 1, c + 1, [](const clustering_row&) {});
    }
    timer.finish(out);
    out.ops = wl.ops;
}

future<> scans(reef_bench& b, const delete_range_workload& wl, uint64_t seed, uint64_t ops, uint64_t limit,
               phase_result& out) {
    read_stream stream(wl, seed);
    phase_timer timer;
    for (uint64_t op = 0; op < ops; ++op) {
        auto i = stream.next();
        auto c = wl.clustering_of(i);
        bool first = true;
        out.rows += co_await b.read(wl.partition_of(i), c, limit, std::numeric_limits<uint64_t>::max(),
                                    [&](const clustering_row& r) {
                                        if (first) {
                                            out.first_found += b.is_key(r, c);
                                            first = false;
                                        }
                                    });
    }
    timer.finish(out);
    out.ops = ops;
}

future<> full_scan(reef_bench& b, phase_result* out) {
    phase_timer timer;
    auto nothing = [](const clustering_row&) {};
    auto range = dht::partition_range::full();
    clustering_ranges slice{position_range::full()};
    auto rows = co_await b.read(range, std::move(slice), std::numeric_limits<uint64_t>::max(), nothing);
    if (out) {
        timer.finish(*out);
        out->rows = rows;
        out->ops = rows;
    }
}

} // namespace

engine_run run_reef(const delete_range_workload& wl, const std::string& directory, const runtime_config& cfg) {
    engine_run out;
    out.engine = "reef";
    runtime_config c = cfg;
    c.smp = 1;
    run(c, [&]() -> future<int> {
        // The shard's caches (row cache and index caches) get what RocksDB's block cache gets: 4 GiB.
        cache::shard_cache_tracker().lru().set_budget(cache_budget);
        reef_bench b(wl, directory);
        co_await b.start();
        std::exception_ptr err;
        try {
            co_await load(b, wl, out.load);
            co_await full_scan(b, nullptr);  // unmeasured: warms what can be warmed
            combined_reader_stats before = b.stats();
            // operator new calls per operation (per row for the full scan), where counted (not under ASan).
            std::vector<std::string> allocs;
            auto counted = [&](const char* what, uint64_t per, auto phase) -> future<> {
                auto a0 = allocations();
                co_await phase();
                if (auto a1 = allocations(); a0 && a1 && per) {
                    allocs.push_back(fmt::format("{} {:.1f}", what, double(*a1 - *a0) / double(per)));
                }
            };
            co_await counted("get", wl.ops, [&] { return point_reads(b, wl, out.get); });
            co_await counted("scan10", wl.ops, [&] { return scans(b, wl, scan10_seed, wl.ops, 10, out.scan10); });
            co_await counted("scan1000", wl.long_ops,
                             [&] { return scans(b, wl, scan1000_seed, wl.long_ops, 1000, out.scan1000); });
            auto a0 = allocations();
            co_await full_scan(b, &out.fullscan);
            if (auto a1 = allocations(); a0 && a1 && out.fullscan.rows) {
                allocs.push_back(fmt::format("fullscan row {:.2f}", double(*a1 - *a0) / double(out.fullscan.rows)));
            }
            out.notes.emplace_back("block KiB", fmt::format("{}", wl.reef_block_kb));
            auto& rc = b.tbl().cache()->stats();
            out.notes.emplace_back("row cache (whole run)",
                                   fmt::format("{} hits, {} misses, {} populations, {} evictions, {} partitions, "
                                               "{:.0f} MiB of {} GiB used",
                                               rc.hits, rc.misses, rc.populations, rc.evictions,
                                               b.tbl().cache()->partition_count(),
                                               double(cache::shard_cache_tracker().lru().memory_used()) / (1 << 20),
                                               cache_budget >> 30));
            if (!allocs.empty()) {
                std::string a;
                for (auto& x : allocs) {
                    a += (a.empty() ? "" : ", ") + x;
                }
                out.notes.emplace_back("allocations per op", a);
            }
            out.notes.emplace_back("sstables", fmt::format("{}", b.tbl().sstable_count()));
            out.notes.emplace_back("flushes", fmt::format("{}", b.tbl().flushes()));
            if (wl.reef_no_flush) {
                out.notes.emplace_back("memtables left (--reef-no-flush)", fmt::format("{}", 1 + b.tbl().sealed_memtable_count()));
            }
            out.notes.emplace_back("range skips (reads)", fmt::format("{}", b.stats().range_skips - before.range_skips));
            out.notes.emplace_back("covered fragments dropped (reads)",
                                   fmt::format("{}", b.stats().covered_fragments_dropped - before.covered_fragments_dropped));
        } catch (...) {
            err = std::current_exception();
        }
        co_await b.stop();
        if (err) {
            std::rethrow_exception(err);
        }
        co_return 0;
    });
    return out;
}

} // namespace reef::perf
