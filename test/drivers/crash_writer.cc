// `reef crash-writer`: the crash test's driver (test/suites/crash_test.py). Writing: starts the database as the
// node does (commitlog replay included), creates ks.t if missing and applies random inserts, updates, row, range
// and partition deletes and now and then a TRUNCATE, each deterministic from (seed, cycle, index) with a unique
// known timestamp; before each write it appends an intent line to the ack file, after its acknowledgement an ack
// line (write(2), O_APPEND), until killed or --ops are done; with --compact-ms, major compactions on every shard
// meanwhile (purging the long-expired tombstones), so that kills land inside them. A TRUNCATE runs alone (no write in flight), so the
// file's order says which writes it removed. --verify: starts the database, replays the ack file into a model of
// every row and compares it with the table: rows lost, resurrected (written once, deleted or truncated in the model,
// live in the table) and phantom (never written yet live), with writes that were in flight (intent, no ack) allowed
// either way, and a TRUNCATE in flight either done or not. Exit 1 on any.
#include "db/database.hh"
#include "mutation/mutation.hh"
#include "node/directory_lock.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/reactor.hh"
#include "runtime/semaphore.hh"
#include "runtime/sharded.hh"
#include "runtime/smp.hh"
#include "test/drivers/drivers.hh"
#include "test/perf/perf_util.hh"

#include <fmt/core.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace reef::drivers {

namespace {

constexpr int partitions = 40;
constexpr int rows_per_partition = 16;
constexpr int64_t cycle_span = 100'000'000;

// One write. kind: i insert (marker and v), u update (v), r row delete, g range delete [ck, ck2], p partition delete,
// t TRUNCATE of the table.
struct op {
    uint64_t idx = 0;
    uint64_t seq = 0;  // the line of its intent in the ack file (verify)
    char kind = 'i';
    int pk = 0, ck = 0, ck2 = 0, value = 0;
    int64_t ts = 0;
};

op make_op(uint64_t seed, uint64_t cycle, uint64_t i) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull ^ (cycle << 40) ^ (i * 0xBF58476D1CE4E5B9ull));
    auto rnd = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    op o;
    o.idx = cycle * cycle_span + i;
    o.ts = 1 + int64_t(o.idx);
    int k = rnd(0, 99);
    o.kind = k < 45 ? 'i' : k < 75 ? 'u' : k < 88 ? 'r' : k < 96 ? 'g' : 'p';
    if (rnd(0, 1999) == 0) {
        o.kind = 't';  // a few per cycle: the table refills in between
    }
    o.pk = rnd(0, partitions - 1);
    o.ck = rnd(0, rows_per_partition - 1);
    o.ck2 = std::min(rows_per_partition - 1, o.ck + rnd(0, 4));
    o.value = rnd(0, 1'000'000);
    return o;
}

bytes int_bytes(int v) {
    return bytes{uint8_t(uint32_t(v) >> 24), uint8_t(uint32_t(v) >> 16), uint8_t(uint32_t(v) >> 8), uint8_t(v)};
}

int int_of(std::string_view b) {
    return int(uint32_t(uint8_t(b[0])) << 24 | uint32_t(uint8_t(b[1])) << 16 | uint32_t(uint8_t(b[2])) << 8 |
               uint32_t(uint8_t(b[3])));
}

clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

clustering_key_prefix ck_of(int k) { return clustering_key_prefix({int_bytes(k)}); }

dht::decorated_key pk_of(int k) {
    auto b = int_bytes(k);
    return dht::decorated_key(partition_key(std::string(b.begin(), b.end())));
}

schema_ptr table_schema() {
    return schema_builder("ks", "t")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", int32_type(), column_kind::regular_column)
        .build();
}

mutation to_mutation(const schema_ptr& s, const op& o) {
    mutation m(s, pk_of(o.pk));
    const deletion_time_type now = 1'700'000'000;
    tombstone t{o.ts, now};
    switch (o.kind) {
    case 'i':
    case 'u': {
        deletable_row r;
        if (o.kind == 'i') {
            r.marker.timestamp = o.ts;
        }
        auto v = int_bytes(o.value);
        // v is the only regular column: id 0.
        apply_cell(r.cells, 0, atomic_cell::make_live(o.ts, std::string(v.begin(), v.end())), s->regular_columns());
        m.partition().apply_row(*s, ck_of(o.ck), r);
        break;
    }
    case 'r': {
        deletable_row r;
        r.tomb = t;
        m.partition().apply_row(*s, ck_of(o.ck), r);
        break;
    }
    case 'g':
        m.partition().apply_range_tombstone(position_in_partition::before_key(ck_of(o.ck)),
                                            position_in_partition::after_key(ck_of(o.ck2)), t);
        break;
    default:
        m.partition().apply(t);
    }
    return m;
}

std::string line_of(char tag, const op& o) {
    return fmt::format("{} {} {} {} {} {} {} {}\n", tag, o.idx, o.kind, o.pk, o.ck, o.ck2, o.value, o.ts);
}

void append_line(int fd, const std::string& line) {
    size_t done = 0;
    while (done < line.size()) {
        auto n = ::write(fd, line.data() + done, line.size() - done);
        if (n < 0) {
            throw std::system_error(errno, std::generic_category(), "crash-writer: write to the ack file");
        }
        done += size_t(n);
    }
}

database_config make_config(const std::string& workdir, const std::string& sync, uint64_t dirty_limit,
                            uint64_t segment_kb) {
    database_config cfg;
    cfg.data_directory = workdir + "/data";
    cfg.dirty_memory_hard_limit = dirty_limit;
    cfg.commitlog.commitlog_directory = workdir + "/commitlog";
    cfg.commitlog.commitlog_sync = commitlog::parse_sync_mode(sync);
    cfg.commitlog.commitlog_sync_period_in_ms = 10;
    cfg.commitlog.segment_size_in_bytes = segment_kb << 10;
    // A few segments per shard: writes meet back-pressure and the flushes it asks for.
    cfg.commitlog.total_space_in_bytes = 8 * (segment_kb << 10);
    return cfg;
}

// Built outside the coroutine (coroutine rule 7).
keyspace_definition test_keyspace() {
    return keyspace_definition{"ks", {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

future<schema_ptr> ensure_table(sharded<database>& db) {
    if (!db.local().find_keyspace("ks")) {
        auto ks = test_keyspace();
        co_await db.local().create_keyspace(ks);
    }
    auto s = db.local().find_schema("ks", "t");
    if (!s) {
        s = co_await db.local().create_table(table_schema());
    }
    co_return s;
}

// The visible state of one row: present (marker or v live), and v.
struct row_state {
    bool present = false;
    std::optional<int> v;
    bool operator==(const row_state&) const = default;
};

bool touches(const op& o, int ck) {
    switch (o.kind) {
    case 't':
        return false;  // handled as the cut (verify)
    case 'p':
        return true;
    case 'g':
        return o.ck <= ck && ck <= o.ck2;
    default:
        return o.ck == ck;
    }
}

// A model of the row from the writes that reached it: the newest v and marker, each visible when newer than every
// deletion covering the row (a tombstone wins a tie, as in Cassandra; timestamps are unique here anyway).
row_state model_row(const std::vector<const op*>& ops) {
    int64_t v_ts = INT64_MIN, marker_ts = INT64_MIN, deleted = INT64_MIN;
    int v = 0;
    for (auto* o : ops) {
        if (o->kind == 'i' || o->kind == 'u') {
            if (o->ts > v_ts) {
                v_ts = o->ts;
                v = o->value;
            }
            if (o->kind == 'i') {
                marker_ts = std::max(marker_ts, o->ts);
            }
        } else {
            deleted = std::max(deleted, o->ts);
        }
    }
    row_state r;
    bool v_live = v_ts != INT64_MIN && v_ts > deleted;
    r.present = v_live || (marker_ts != INT64_MIN && marker_ts > deleted);
    if (v_live) {
        r.v = v;
    }
    return r;
}

struct ack_log {
    std::map<uint64_t, op> acked;
    std::map<uint64_t, op> in_flight;  // intents without an ack
    uint64_t torn = 0;
};

ack_log read_ack_file(const std::string& path) {
    ack_log log;
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::map<uint64_t, op> intents;
    size_t pos = 0;
    uint64_t line = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string::npos) {
            ++log.torn;  // the write(2) the kill interrupted
            break;
        }
        std::istringstream ls(text.substr(pos, nl - pos));
        pos = nl + 1;
        ++line;
        char tag = 0;
        op o;
        if (!(ls >> tag >> o.idx >> o.kind >> o.pk >> o.ck >> o.ck2 >> o.value >> o.ts) || (tag != 'A' && tag != 'I')) {
            ++log.torn;  // a torn line the next run completed with its newline
            continue;
        }
        if (tag == 'I') {
            o.seq = line;
            intents[o.idx] = o;
        } else {
            log.acked[o.idx] = o;
        }
    }
    for (auto& [idx, o] : intents) {
        if (auto a = log.acked.find(idx); a != log.acked.end()) {
            a->second.seq = o.seq;
        } else {
            log.in_flight[idx] = o;
        }
    }
    return log;
}

using row_table = std::map<std::pair<int, int>, row_state>;

struct verdict {
    uint64_t lost = 0, resurrected = 0, phantom = 0, uncertain = 0, live = 0;
    uint64_t errors() const { return lost + resurrected + phantom; }
};

// Every row against the model of the writes after `cut` (the intent line of the last TRUNCATE taken as done; 0:
// none); with `print`, each wrong row is printed.
verdict check_rows(const row_table& table, const ack_log& log, uint64_t cut, bool print) {
    std::vector<std::vector<const op*>> acked_by_pk(partitions), flying_by_pk(partitions), ever_by_pk(partitions);
    for (auto& [idx, o] : log.acked) {
        if (o.kind != 't') {
            ever_by_pk[o.pk].push_back(&o);
            if (o.seq > cut) {
                acked_by_pk[o.pk].push_back(&o);
            }
        }
    }
    for (auto& [idx, o] : log.in_flight) {
        if (o.kind != 't' && o.seq > cut) {
            flying_by_pk[o.pk].push_back(&o);
        }
    }
    verdict out;
    for (int pk = 0; pk < partitions; ++pk) {
        for (int ck = 0; ck < rows_per_partition; ++ck) {
            std::vector<const op*> ops, flying;
            bool ever_written = false;
            for (auto* o : ever_by_pk[pk]) {
                ever_written |= touches(*o, ck) && (o->kind == 'i' || o->kind == 'u');
            }
            for (auto* o : acked_by_pk[pk]) {
                if (touches(*o, ck)) {
                    ops.push_back(o);
                }
            }
            for (auto* o : flying_by_pk[pk]) {
                if (touches(*o, ck)) {
                    flying.push_back(o);
                }
            }
            auto expected = model_row(ops);
            auto it = table.find({pk, ck});
            row_state actual = it == table.end() ? row_state{} : it->second;
            out.live += actual.present;
            if (actual == expected) {
                continue;
            }
            // Writes in flight at a kill may or may not have reached the log: any subset of them.
            bool explained = false;
            size_t n = std::min<size_t>(flying.size(), 12);
            for (uint64_t mask = 1; mask < (uint64_t(1) << n) && !explained; ++mask) {
                auto with = ops;
                for (size_t b = 0; b < n; ++b) {
                    if (mask >> b & 1) {
                        with.push_back(flying[b]);
                    }
                }
                explained = model_row(with) == actual;
            }
            if (explained) {
                ++out.uncertain;
                continue;
            }
            auto v_of = [](const row_state& r) { return r.v ? std::to_string(*r.v) : std::string("none"); };
            if (expected.present) {
                ++out.lost;
                if (print) {
                    fmt::print("LOST ({}, {}): expected v {}, table has {}\n", pk, ck, v_of(expected),
                               actual.present ? (actual.v ? std::to_string(*actual.v) : "a row without v") : "nothing");
                }
            } else if (ever_written) {
                ++out.resurrected;
                if (print) {
                    fmt::print("RESURRECTED ({}, {}): deleted or truncated, table has v {}\n", pk, ck, v_of(actual));
                }
            } else {
                ++out.phantom;
                if (print) {
                    fmt::print("PHANTOM ({}, {}): never written, table has v {}\n", pk, ck, v_of(actual));
                }
            }
        }
    }
    return out;
}

future<int> verify(sharded<database>& db, const std::string& ack_path) {
    auto s = co_await ensure_table(db);
    auto log = read_ack_file(ack_path);
    auto full = dht::partition_range::full();
    auto slice = full_slice();
    auto got = co_await db.local().query(s, full, slice);
    row_table table;
    for (auto& m : got) {
        m.partition().drop_shadowed();
        int pk = int_of(m.decorated_key().key().view());
        for (auto& [key, r] : m.partition().rows()) {
            row_state st;
            if (auto* c = r.cells.find(0)) {
                st.v = int_of(std::get<atomic_cell>(*c).value());
            }
            st.present = st.v || !r.marker.empty();
            if (st.present) {
                auto c = key.component(0);
                table[{pk, int_of(std::string_view(reinterpret_cast<const char*>(c.data()), c.size()))}] = st;
            }
        }
    }
    // The last acknowledged TRUNCATE removed every write before it; each later one in flight at a kill may have
    // happened (atomically: its record is one commitlog entry) or not. The cut that explains the table best is
    // the verdict.
    uint64_t cut = 0, truncates = 0, truncates_in_flight = 0;
    for (auto& [idx, o] : log.acked) {
        if (o.kind == 't') {
            cut = std::max(cut, o.seq);
            ++truncates;
        }
    }
    std::vector<uint64_t> cuts{cut};
    for (auto& [idx, o] : log.in_flight) {
        if (o.kind == 't') {
            ++truncates_in_flight;
            if (o.seq > cut) {
                cuts.push_back(o.seq);
            }
        }
    }
    uint64_t best = cuts[0];
    uint64_t best_errors = UINT64_MAX;
    for (auto c : cuts) {
        if (auto e = check_rows(table, log, c, false).errors(); e < best_errors) {
            best_errors = e;
            best = c;
        }
    }
    auto v = check_rows(table, log, best, true);
    auto& r = db.local().last_replay();
    fmt::print("verify: {} acked writes, {} in flight, {} torn lines; {} live rows; lost {} resurrected {} phantom {} "
               "(in-flight explained {}); {} truncates acked, {} in flight; replay: {} segments, {} replayed, "
               "{} skipped, {} corrupt\n",
               log.acked.size(), log.in_flight.size(), log.torn, v.live, v.lost, v.resurrected, v.phantom, v.uncertain,
               truncates, truncates_in_flight, r.segments, r.replayed, r.skipped, r.corrupt);
    co_return v.errors() ? 1 : 0;
}

// A major compaction of the table on this shard (its current version: a TRUNCATE may have replaced it).
future<> compact_local(database& d, table_id id) {
    if (auto t = d.find_table_shared(id)) {
        co_await t->compact_all(deletion_time_type(std::time(nullptr)));
    }
}

future<int> write(sharded<database>& db, uint64_t seed, uint64_t cycle, const std::string& ack_path, uint64_t writers,
                  uint64_t ops, uint64_t compact_ms) {
    auto s = co_await ensure_table(db);
    int fd = ::open(ack_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::system_error(errno, std::generic_category(), "crash-writer: open " + ack_path);
    }
    // A line the last kill tore gets its newline: the verifier skips it whole.
    if (auto size = ::lseek(fd, 0, SEEK_END); size > 0) {
        char last = 0;
        int rfd = ::open(ack_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (rfd >= 0 && ::pread(rfd, &last, 1, size - 1) == 1 && last != '\n') {
            append_line(fd, "\n");
        }
        if (rfd >= 0) {
            ::close(rfd);
        }
    }
    auto& r = db.local().last_replay();
    fmt::print("crash-writer: cycle {} writing (replayed {}, skipped {}, {} segments)\n", cycle, r.replayed, r.skipped,
               r.segments);
    std::fflush(stdout);
    uint64_t next = 0, done = 0;
    // A write takes one unit, a TRUNCATE all of them: it runs alone, after every write begun before it.
    semaphore alone(writers);
    auto writer = [&]() -> future<> {
        while (ops == 0 || next < ops) {
            auto o = make_op(seed, cycle, next++);
            size_t units = o.kind == 't' ? writers : 1;
            co_await alone.wait(units);
            std::exception_ptr err;
            try {
                append_line(fd, line_of('I', o));
                if (o.kind == 't') {
                    co_await db.local().truncate("ks", "t");
                } else {
                    auto m = to_mutation(s, o);
                    co_await db.local().apply(std::move(m));
                }
                append_line(fd, line_of('A', o));
            } catch (...) {
                err = std::current_exception();
            }
            alone.signal(units);
            if (err) {
                std::rethrow_exception(err);
            }
            ++done;
        }
    };
    // Major compactions now and then, on every shard, during the writes (one unit: never beside a TRUNCATE). The
    // tombstones' deletion time is long past gc_grace_seconds: compactions purge what max_purgeable allows, so a
    // swap that kept an input beside its output could bring deleted rows back.
    bool writing = true;
    uint64_t compactions = 0;
    std::mt19937_64 compaction_rng(seed ^ (cycle * 0x9E3779B97F4A7C15ull) ^ 0xC0FFEE);
    auto compactor = [&]() -> future<> {
        while (compact_ms && writing) {
            auto pause = std::uniform_int_distribution<uint64_t>(compact_ms / 2, compact_ms * 3 / 2)(compaction_rng);
            co_await sleep(std::chrono::milliseconds(pause));
            if (!writing) {
                break;
            }
            co_await alone.wait(1);
            std::exception_ptr err;
            try {
                auto id = s->id();
                auto compact = [id](database& d) { return compact_local(d, id); };
                co_await db.invoke_on_all(compact);
                ++compactions;
            } catch (...) {
                err = std::current_exception();
            }
            alone.signal(1);
            if (err) {
                std::rethrow_exception(err);
            }
        }
    };
    // Futures start when awaited: the writers and the compactor are awaited together; the last writer to end
    // stops the compactor.
    uint64_t writers_left = writers;
    auto counted_writer = [&]() -> future<> {
        std::exception_ptr failed;
        try {
            co_await writer();
        } catch (...) {
            failed = std::current_exception();
        }
        if (--writers_left == 0) {
            writing = false;
        }
        if (failed) {
            std::rethrow_exception(failed);
        }
    };
    std::vector<future<>> running;
    for (uint64_t w = 0; w < writers; ++w) {
        running.push_back(counted_writer());
    }
    running.push_back(compactor());
    co_await when_all(std::move(running));
    ::close(fd);
    fmt::print("crash-writer: cycle {} wrote {}, {} major compactions\n", cycle, done, compactions);
    co_return 0;
}

} // namespace

int crash_writer_main(int argc, char** argv) {
    program_options::options opts("reef crash-writer",
                                  "The crash test's driver (test/suites/crash_test.py): random writes to ks.t, each "
                                  "acknowledged one appended to the ack file, until killed; --verify compares the "
                                  "table with the ack file's model.");
    runtime_options rt;
    rt.add(opts);
    std::string workdir, sync, ack_file;
    uint64_t seed = 0, cycle = 0, writers = 0, ops = 0, dirty_limit = 0, segment_kb = 0, compact_ms = 0;
    bool verify_mode = false;
    opts.add("workdir", "the database's directory (data/ and commitlog/ in it)", &workdir, "./crash-data");
    opts.add("commitlog-sync", "batch or periodic", &sync, "batch");
    opts.add("seed", "the writes' seed", &seed, uint64_t(1));
    opts.add("cycle", "this run's number (the writes and their timestamps depend on it)", &cycle, uint64_t(0),
             uint64_t(0), uint64_t(10'000));
    opts.add("ack-file", "where acknowledged writes are appended", &ack_file, "./crash-acks");
    opts.add("writers", "writes in flight", &writers, uint64_t(4), uint64_t(1), uint64_t(256));
    opts.add("ops", "writes to do (0: until killed)", &ops, uint64_t(0), uint64_t(0), uint64_t(cycle_span - 1));
    opts.add("dirty-memory-limit", "each shard's dirty memory hard limit in bytes (flushes start at 60%)",
             &dirty_limit, uint64_t(64 << 10), uint64_t(1));
    opts.add("segment-kb", "commitlog segment size in KiB", &segment_kb, uint64_t(64), uint64_t(64), uint64_t(1 << 20));
    opts.add("compact-ms", "a major compaction on every shard about every this many ms while writing (0: none)",
             &compact_ms, uint64_t(0), uint64_t(0), uint64_t(3'600'000));
    opts.add("verify", "compare the table with the ack file instead of writing", &verify_mode);
    int exit_status = 0;
    auto parsed = perf::parse_command_line("reef crash-writer", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    database_config cfg;
    std::vector<node::directory_lock> locks;
    try {
        cfg = make_config(workdir, sync, dirty_limit, segment_kb);
        // TRUNCATE both ways: flushed and snapshotted first, or its memtables dropped.
        cfg.auto_snapshot = cycle % 2 == 0;
        // As the node does: a second process on the directories (a writer not dead yet) is refused.
        locks.push_back(node::directory_lock::acquire(cfg.data_directory));
        locks.push_back(node::directory_lock::acquire(cfg.commitlog.commitlog_directory));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reef crash-writer: %s\n", e.what());
        return 2;
    }
    return run(*parsed, [&]() -> future<int> {
        sharded<database> db;
        co_await db.start(&db, cfg);
        int rc = 1;
        std::exception_ptr err;
        try {
            co_await db.local().start();
            if (verify_mode) {
                rc = co_await verify(db, ack_file);
            } else {
                rc = co_await write(db, seed, cycle, ack_file, writers, ops, compact_ms);
            }
            co_await db.local().drain();
        } catch (...) {
            err = std::current_exception();
        }
        co_await db.stop();
        if (err) {
            std::rethrow_exception(err);
        }
        co_return rc;
    });
}

} // namespace reef::drivers
