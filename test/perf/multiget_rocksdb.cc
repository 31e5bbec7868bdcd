// The MultiGet experiment on RocksDB (Debian's librocksdb-dev 7.8), set up as ../shared/benchmarks/multiget.md runs
// db_bench: 4 MB write buffer and target files, 16 MB level base, a 40 MB block cache, no compression, no bloom
// filter (db_bench's default), WAL off for the load; fillrandom, then a full compaction, then one unmeasured
// sequential read (db_bench's readseq). get: DB::Get; multiget_loop: the vector MultiGet (db_bench's
// -multiread_batched=false, a Get per key); multiget: the batched MultiGet (-multiread_batched=true).
#include "test/perf/multiget_workload.hh"
#include "test/perf/perf_util.hh"

#include <algorithm>
#include <fmt/core.h>
#include <stdexcept>

#ifdef REEF_HAVE_ROCKSDB
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>

#include <chrono>
#include <memory>
#include <thread>
#endif

namespace reef::perf {

#ifdef REEF_HAVE_ROCKSDB

namespace {

void check(const rocksdb::Status& st, const char* what) {
    if (!st.ok()) {
        throw std::runtime_error(fmt::format("rocksdb {}: {}", what, st.ToString()));
    }
}

rocksdb::Options options_of(const multiget_workload& wl) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.compression = rocksdb::kNoCompression;
    o.bottommost_compression = rocksdb::kNoCompression;
    o.write_buffer_size = 4 << 20;
    o.target_file_size_base = 4 << 20;
    o.max_bytes_for_level_base = 16 << 20;
    rocksdb::BlockBasedTableOptions t;
    t.block_cache = rocksdb::NewLRUCache(size_t(wl.cache_mb) << 20);
    t.block_size = 4096;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

uint64_t int_property(rocksdb::DB& db, const std::string& name) {
    uint64_t v = 0;
    db.GetIntProperty(name, &v);
    return v;
}

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

struct key_buf {
    char b[mg::key_size];
    explicit key_buf(uint64_t n) noexcept { mg::key_bytes(n, b); }
    rocksdb::Slice slice() const noexcept { return rocksdb::Slice(b, mg::key_size); }
};

multiget_cell measure_cell(rocksdb::DB& db, const std::vector<std::vector<uint64_t>>& batches,
                           const std::string& method, uint64_t batch, uint64_t stride) {
    multiget_cell c{method, batch, stride};
    for (auto& b : batches) {
        c.keys += b.size();
    }
    rocksdb::ReadOptions ro;
    std::vector<key_buf> keys;
    std::vector<rocksdb::Slice> slices;
    std::vector<std::string> values;
    std::vector<rocksdb::PinnableSlice> pinned(batch);
    std::vector<rocksdb::Status> statuses(batch);
    auto count = [&](const rocksdb::Status& st) {
        if (st.ok()) {
            ++c.found;
        } else if (!st.IsNotFound()) {
            check(st, "get");
        }
    };
    cell_meter tm;
    for (auto& b : batches) {
        keys.clear();
        slices.clear();
        for (auto k : b) {
            keys.emplace_back(k);
        }
        for (auto& k : keys) {
            slices.push_back(k.slice());
        }
        if (method == "get") {
            std::string value;
            for (auto& s : slices) {
                count(db.Get(ro, s, &value));
            }
        } else if (method == "multiget_loop") {
            for (auto& st : db.MultiGet(ro, slices, &values)) {
                count(st);
            }
        } else {
            for (auto& p : pinned) {
                p.Reset();
            }
            db.MultiGet(ro, db.DefaultColumnFamily(), slices.size(), slices.data(), pinned.data(), statuses.data());
            for (size_t i = 0; i < slices.size(); ++i) {
                count(statuses[i]);
            }
        }
    }
    tm.finish(c);
    return c;
}

// The database, loaded, compacted and reopened by start(), read by measure(); every call blocks the shard.
class rocksdb_multiget final : public multiget_engine {
public:
    rocksdb_multiget(const multiget_workload& wl, std::string directory)
        : _wl(wl), _directory(std::move(directory)), _options(options_of(wl)) {
        _run.engine = "rocksdb";
    }

    future<> start() override {
        try {
            load();
            open();
        } catch (...) {
            return make_exception_future<>(std::current_exception());
        }
        return make_ready_future<>();
    }

    future<multiget_cell> measure(uint64_t batch, uint64_t stride, unsigned method, unsigned round) override {
        try {
            auto batches = _wl.cell_batches(batch, stride, method, round);
            auto c = measure_cell(*_db, batches, multiget_methods[method], batch, stride);
            return make_ready_future<multiget_cell>(std::move(c));
        } catch (...) {
            return make_exception_future<multiget_cell>(std::current_exception());
        }
    }

    future<> stop() override {
        if (_db) {
            auto st = _db->Close();
            _db.reset();
            if (!st.ok()) {
                return make_exception_future<>(
                    std::make_exception_ptr(std::runtime_error("rocksdb close: " + st.ToString())));
            }
        }
        return make_ready_future<>();
    }

private:
    // fillrandom, then a full compaction; closed after.
    void load() {
        rocksdb::DB* raw = nullptr;
        check(rocksdb::DB::Open(_options, _directory, &raw), "open");
        std::unique_ptr<rocksdb::DB> db(raw);
        auto start = clock_type::now();
        rocksdb::WriteOptions wo;
        wo.disableWAL = true;
        mg::rng r(1);
        char value[mg::value_size];
        for (uint64_t w = 1; w <= _wl.keys; ++w) {
            mg::value_bytes(w, value);
            key_buf k(_wl.load_key(r));
            check(db->Put(wo, k.slice(), rocksdb::Slice(value, mg::value_size)), "put");
        }
        settle(*db);
        rocksdb::CompactRangeOptions co;
        check(db->CompactRange(co, nullptr, nullptr), "compact range");
        settle(*db);
        _run.load_seconds = seconds_since(start);
        std::string levels;
        for (int l = 0; l < db->NumberLevels(); ++l) {
            std::string n;
            if (db->GetProperty(fmt::format("rocksdb.num-files-at-level{}", l), &n) && n != "0") {
                levels += fmt::format("{}L{} {}", levels.empty() ? "" : ", ", l, n);
            }
        }
        _run.notes.emplace_back("files", levels);
        check(db->Close(), "close");
    }

    // Reopened as db_bench's read benchmarks open it, then its readseq and the warm-up gets (unmeasured).
    void open() {
        rocksdb::DB* raw = nullptr;
        check(rocksdb::DB::Open(_options, _directory, &raw), "reopen");
        _db.reset(raw);
        std::unique_ptr<rocksdb::Iterator> it(_db->NewIterator(rocksdb::ReadOptions()));
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
        }
        check(it->status(), "iterator");
        auto warm = _wl.cell_batches(1, 0, 3);
        warm.resize(std::min<size_t>(warm.size(), 20000));
        measure_cell(*_db, warm, "get", 0, 0);
    }

    const multiget_workload& _wl;
    std::string _directory;
    rocksdb::Options _options;
    std::unique_ptr<rocksdb::DB> _db;
};

} // namespace

bool have_rocksdb_multiget() noexcept {
    return true;
}

std::unique_ptr<multiget_engine> make_rocksdb_multiget(const multiget_workload& wl, std::string directory) {
    return std::make_unique<rocksdb_multiget>(wl, std::move(directory));
}

#else

bool have_rocksdb_multiget() noexcept {
    return false;
}

std::unique_ptr<multiget_engine> make_rocksdb_multiget(const multiget_workload&, std::string) {
    throw std::runtime_error("built without librocksdb-dev");
}

#endif

} // namespace reef::perf
