// The DeleteRange workload on RocksDB (Debian's librocksdb-dev), the baseline: delete-range.md's settings (4 GiB
// block cache, 10-bit bloom filter, 4 KiB blocks, no compression, 2 background jobs, WAL on without fsync), the
// reads on the database reopened read-only, each scan a new iterator bounded by the end of its partition.
#include "test/perf/delete_range_workload.hh"
#include "test/perf/perf_util.hh"

#include <fmt/core.h>
#include <stdexcept>

#ifdef REEF_HAVE_ROCKSDB
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>

#include <chrono>
#include <memory>
#include <thread>
#endif

namespace reef::perf {

#ifdef REEF_HAVE_ROCKSDB

bool have_rocksdb() noexcept {
    return true;
}

namespace {

struct key16 {
    char b[16];
    key16(uint64_t p, uint64_t c) noexcept {
        put_be64(p, b);
        put_be64(c, b + 8);
    }
    rocksdb::Slice slice() const noexcept { return rocksdb::Slice(b, 16); }
};

void check(const rocksdb::Status& st, const char* what) {
    if (!st.ok()) {
        throw std::runtime_error(fmt::format("rocksdb {}: {}", what, st.ToString()));
    }
}

rocksdb::Options bench_options() {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.max_background_jobs = 2;
    o.compression = rocksdb::kNoCompression;
    o.bottommost_compression = rocksdb::kNoCompression;
    rocksdb::BlockBasedTableOptions t;
    t.block_cache = rocksdb::NewLRUCache(size_t(4) << 30);
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10, false));
    t.block_size = 4096;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

uint64_t int_property(rocksdb::DB& db, const std::string& name) {
    uint64_t v = 0;
    if (!db.GetIntProperty(name, &v)) {
        throw std::runtime_error("rocksdb: no property " + name);
    }
    return v;
}

// Flushes, then waits until no flush or compaction is pending or running (7.8 has no public WaitForCompact).
void settle(rocksdb::DB& db) {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    check(db.Flush(fo), "flush");
    while (int_property(db, rocksdb::DB::Properties::kMemTableFlushPending) ||
           int_property(db, rocksdb::DB::Properties::kNumRunningFlushes) ||
           int_property(db, rocksdb::DB::Properties::kCompactionPending) ||
           int_property(db, rocksdb::DB::Properties::kNumRunningCompactions)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// Up to `limit` keys of partition p from clustering key c; a new iterator bounded by the partition's end.
uint64_t scan(rocksdb::DB& db, uint64_t p, uint64_t c, uint64_t limit, bool& first_found,
              std::vector<std::string>* keys = nullptr, uint64_t end = UINT64_MAX) {
    key16 from(p, c);
    key16 bound = end == UINT64_MAX ? key16(p + 1, 0) : key16(p, end);
    auto upper = bound.slice();
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
    uint64_t n = 0;
    it->Seek(from.slice());
    first_found = it->Valid() && it->key() == from.slice();
    for (; it->Valid() && n < limit; it->Next()) {
        ++n;
        if (keys) {
            keys->push_back(it->key().ToString());
        }
    }
    check(it->status(), "iterator");
    return n;
}

void load(rocksdb::DB& db, const delete_range_workload& wl, phase_result& out) {
    auto perm = wl.load_order();
    deletion_schedule deletions(wl);
    rocksdb::WriteOptions wo;  // WAL on, no fsync
    char value[value_size];
    phase_timer timer;
    for (uint64_t w = 1; w <= wl.rows; ++w) {
        uint64_t i = perm[w - 1];
        row_value(i, value);
        key16 k(wl.partition_of(i), wl.clustering_of(i));
        check(db.Put(wo, k.slice(), rocksdb::Slice(value, value_size)), "put");
        if (auto d = deletions.after_write(w); d && d->end > d->start) {
            if (wl.variant == delete_variant::range) {
                key16 a(d->partition, d->start), b(d->partition, d->end);
                check(db.DeleteRange(wo, db.DefaultColumnFamily(), a.slice(), b.slice()), "delete range");
            } else if (wl.variant == delete_variant::scan) {
                std::vector<std::string> keys;
                bool first = false;
                scan(db, d->partition, d->start, UINT64_MAX, first, &keys, d->end);
                for (auto& key : keys) {
                    check(db.Delete(wo, key), "delete");
                }
            }
        }
    }
    settle(db);
    if (wl.major_compaction) {
        rocksdb::CompactRangeOptions co;
        co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
        check(db.CompactRange(co, nullptr, nullptr), "compact range");
        settle(db);
    }
    timer.finish(out);
    out.ops = wl.rows;
}

void full_scan(rocksdb::DB& db, phase_result* out) {
    phase_timer timer;
    std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
    uint64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
        ++n;
    }
    check(it->status(), "iterator");
    if (out) {
        timer.finish(*out);
        out->rows = n;
        out->ops = n;
    }
}

} // namespace

engine_run run_rocksdb(const delete_range_workload& wl, const std::string& directory) {
    engine_run out;
    out.engine = "rocksdb";
    auto options = bench_options();
    {
        rocksdb::DB* raw = nullptr;
        check(rocksdb::DB::Open(options, directory, &raw), "open");
        std::unique_ptr<rocksdb::DB> db(raw);
        load(*db, wl, out.load);
        for (int l = 0; l < db->NumberLevels(); ++l) {
            std::string n;
            if (db->GetProperty(fmt::format("rocksdb.num-files-at-level{}", l), &n) && n != "0") {
                out.notes.emplace_back(fmt::format("files at L{}", l), n);
            }
        }
        check(db->Close(), "close");
    }
    rocksdb::DB* raw = nullptr;
    check(rocksdb::DB::OpenForReadOnly(options, directory, &raw), "open read-only");
    std::unique_ptr<rocksdb::DB> db(raw);
    full_scan(*db, nullptr);  // unmeasured: warms the block cache
    {
        read_stream stream(wl, get_seed);
        phase_timer timer;
        std::string value;
        for (uint64_t op = 0; op < wl.ops; ++op) {
            auto i = stream.next();
            key16 k(wl.partition_of(i), wl.clustering_of(i));
            auto st = db->Get(rocksdb::ReadOptions(), k.slice(), &value);
            if (st.ok()) {
                ++out.get.found;
            } else if (!st.IsNotFound()) {
                check(st, "get");
            }
        }
        timer.finish(out.get);
        out.get.ops = wl.ops;
    }
    auto scans = [&](uint64_t seed, uint64_t ops, uint64_t limit, phase_result& res) {
        read_stream stream(wl, seed);
        phase_timer timer;
        for (uint64_t op = 0; op < ops; ++op) {
            auto i = stream.next();
            bool first = false;
            res.rows += scan(*db, wl.partition_of(i), wl.clustering_of(i), limit, first);
            res.first_found += first;
        }
        timer.finish(res);
        res.ops = ops;
    };
    scans(scan10_seed, wl.ops, 10, out.scan10);
    scans(scan1000_seed, wl.long_ops, 1000, out.scan1000);
    full_scan(*db, &out.fullscan);
    out.notes.emplace_back("version", fmt::format("{}.{}.{}", ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH));
    check(db->Close(), "close");
    return out;
}

#else

bool have_rocksdb() noexcept {
    return false;
}

engine_run run_rocksdb(const delete_range_workload&, const std::string&) {
    throw std::runtime_error("built without librocksdb-dev: install it and run ./configure.py again");
}

#endif

} // namespace reef::perf
