// table: memtables, background flush, the sstable set, reads over all of them, major compaction.
#include "db/table.hh"

#include "db/memtable_reader.hh"
#include "reader/combined_reader.hh"
#include "reader/compacting_reader.hh"
#include "runtime/blocking.hh"
#include "runtime/file.hh"
#include "runtime/log.hh"
#include "runtime/with_closeable.hh"
#include "sstables/shared_sstable_readers.hh"
#include "sstables/swap_log.hh"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <limits>
#include <stdexcept>

namespace reef {

namespace {
logger tlog("table");
}

table::table(schema_ptr s, table_config cfg)
    : _schema(std::move(s)), _cfg(std::move(cfg)), _active(new_memtable()) {
    if (!_cfg.write_sstable) {
        _cfg.write_sstable = [](mutation_reader& r, schema_ptr s, sstables::descriptor d, sstables::writer_options o) {
            return sstables::write_sstable(r, std::move(s), std::move(d), std::move(o));
        };
    }
    if (_cfg.enable_cache) {
        auto& tracker = _cfg.cache_tracker ? *_cfg.cache_tracker : cache::shard_cache_tracker();
        _cache = std::make_unique<row_cache>(
            _schema,
            [this](const dht::partition_range& range, const clustering_ranges& slice, reader_permit permit) {
                return make_sstables_reader(range, slice, std::move(permit));
            },
            tracker);
    }
}

table::~table() {
    if (_registered) {
        _cfg.dirty_memory->unregister_flushable(*this);
    }
    // Readers may keep memtables alive after the table: they stop counting now.
    _active->release_dirty_memory();
    for (auto& mt : _sealed) {
        mt->release_dirty_memory();
    }
}

std::shared_ptr<memtable> table::new_memtable() {
    auto mt = std::make_shared<memtable>(_schema);
    mt->set_dirty_memory(_cfg.dirty_memory);
    return mt;
}

size_t table::sealed_dirty_bytes() const noexcept {
    size_t n = 0;
    for (auto& mt : _sealed) {
        n += mt->occupancy();
    }
    return n;
}

future<> table::flush_for_memory() {
    if (!_background.try_enter()) {
        co_return;
    }
    std::exception_ptr err;
    try {
        co_await flush();
    } catch (...) {
        err = std::current_exception();
    }
    _background.leave();
    if (err) {
        std::rethrow_exception(err);
    }
}

bool table::owns_generation(const std::string& generation) const {
    try {
        return std::stoull(generation) % _cfg.shard_count == _cfg.shard;
    } catch (...) {
        return _cfg.shard == 0;  // not a number: start() refuses it below; one shard cleans it
    }
}

// One directory of the table at start (created already): this shard's partial writes removed, its sstables'
// descriptors listed (every shard's: start() keeps its own).
future<std::vector<sstables::descriptor>> table::load_directory(std::string dir) {
    std::function<bool(const sstables::descriptor&)> owned = [this](const sstables::descriptor& d) {
        return owns_generation(d.generation);
    };
    auto removed = co_await sstables::remove_partial_sstables(dir, std::move(owned));
    for (auto& d : removed) {
        tlog.info("{}.{}: removed the partial sstable {} (a write or deletion a crash interrupted)", _schema->keyspace(),
                  _schema->table(), d.filename(sstables::component_type::toc));
    }
    co_return co_await run_blocking([&dir] {
        std::vector<sstables::descriptor> out;
        for (auto& e : std::filesystem::directory_iterator(dir)) {
            auto name = e.path().filename().string();
            if (name.ends_with("-TOC.txt")) {
                out.push_back(sstables::descriptor::from_path(e.path().string()));
            }
        }
        return out;
    });
}

std::vector<std::string> table::directories() const {
    std::vector<std::string> out{_cfg.directory};
    out.insert(out.end(), _cfg.more_directories.begin(), _cfg.more_directories.end());
    return out;
}

future<> table::start() {
    if (_cfg.shard_count == 0 || _cfg.shard >= _cfg.shard_count) {
        throw std::invalid_argument(_cfg.directory + ": table_config shard " + std::to_string(_cfg.shard) + " of " +
                                    std::to_string(_cfg.shard_count));
    }
    std::vector<sstables::descriptor> descs;
    auto dirs = directories();
    for (auto& dir : dirs) {
        const std::string& path = dir;
        auto create = [&path] { std::filesystem::create_directories(path); };
        co_await run_blocking(create);
    }
    // The swaps a crash interrupted first (their deletions may leave partial sstables for the next step).
    std::function<bool(const std::string&)> owned = [this](const std::string& id) { return owns_generation(id); };
    auto recovered = co_await sstables::recover_swaps(_cfg.directory, dirs, owned);
    if (recovered.completed || recovered.rolled_back || recovered.temporary) {
        tlog.info("{}.{}: interrupted compaction swaps: {} completed, {} rolled back, {} unstarted logs removed",
                  _schema->keyspace(), _schema->table(), recovered.completed, recovered.rolled_back,
                  recovered.temporary);
    }
    for (auto& dir : dirs) {
        auto found = co_await load_directory(dir);
        descs.insert(descs.end(), found.begin(), found.end());
    }
    for (auto& d : descs) {
        uint64_t gen = 0;
        try {
            gen = std::stoull(d.generation);
        } catch (...) {
            throw std::runtime_error(d.filename(sstables::component_type::toc) + ": generation is not a number");
        }
        if (gen % _cfg.shard_count != _cfg.shard) {
            continue;  // another shard's
        }
        _last_generation = std::max(_last_generation, gen);
        auto sst = co_await sstables::open_sstable(d);
        if (_cfg.truncated_at && truncated_by(sst, *_cfg.truncated_at)) {
            co_await sst->readers().close();
            co_await sst->close();
            co_await sstables::delete_sstable_files(d);
            continue;
        }
        _sstables.push_back(std::move(sst));
        note_flushed(_sstables.back());
    }
    // Once, not per sstable: a rebuild sorts the whole set, and nothing reads the table before start() returns.
    index_sstables();
    if (_cfg.truncated_at && (!_flushed_position || *_cfg.truncated_at > *_flushed_position)) {
        _flushed_position = _cfg.truncated_at;
    }
    if (_cfg.dirty_memory && !_registered) {
        _cfg.dirty_memory->register_flushable(*this);
        _registered = true;
    }
    if (_cfg.compaction_manager) {
        _cfg.compaction_manager->add(*this);
    }
}

namespace {

std::optional<commitlog::replay_position> to_replay_position(const sstables::commitlog_position& p) {
    if (p.segment_id < 0 || p.position < 0) {
        return std::nullopt;  // CommitLogPosition.NONE
    }
    return commitlog::replay_position{uint64_t(p.segment_id), uint32_t(p.position)};
}

sstables::commitlog_position to_commitlog_position(const commitlog::replay_position& p) {
    return sstables::commitlog_position{int64_t(p.segment_id), int32_t(p.offset)};
}

} // namespace

std::optional<commitlog::replay_position> table::own_upper_bound(const sstables::shared_sstable& sst) const {
    auto& st = sst->statistics().stats;
    if (!st) {
        return std::nullopt;
    }
    if (st->originating_host_id && _cfg.host_id && *st->originating_host_id != *_cfg.host_id) {
        return std::nullopt;  // another host's commitlog positions
    }
    // Cassandra's rule at load: the greatest upper bound of the sstables' intervals.
    auto up = to_replay_position(st->commitlog_upper_bound);
    for (auto& [a, b] : st->commitlog_intervals) {
        if (auto e = to_replay_position(b); e && (!up || *e > *up)) {
            up = e;
        }
    }
    return up;
}

bool table::truncated_by(const sstables::shared_sstable& sst, commitlog::replay_position truncated_at) const {
    // Only this host's flushes say which commitlog positions they hold; an imported sstable stays.
    auto& st = sst->statistics().stats;
    if (!st || !st->originating_host_id || !_cfg.host_id || *st->originating_host_id != *_cfg.host_id) {
        return false;
    }
    auto up = own_upper_bound(sst);
    return up && *up <= truncated_at;
}

void table::note_flushed(const sstables::shared_sstable& sst) {
    auto up = own_upper_bound(sst);
    if (up && (!_flushed_position || *up > *_flushed_position)) {
        _flushed_position = up;
    }
}

future<> table::stop() {
    if (_cfg.compaction_manager) {
        co_await _cfg.compaction_manager->remove(*this);
    }
    if (_registered) {
        _cfg.dirty_memory->unregister_flushable(*this);
        _registered = false;
    }
    co_await _background.close();
    auto f = co_await get_units(_flush_sem, 1);
    auto c = co_await get_units(_compaction_sem, 1);
}

void table::apply(const mutation& m) {
    _active->apply(m);
    maybe_seal_and_flush();
}

uint64_t table::register_write() {
    ++_writes_in_flight[_write_phase];
    return _write_phase;
}

void table::abandon_write(uint64_t phase) {
    auto it = _writes_in_flight.find(phase);
    if (it != _writes_in_flight.end() && --it->second == 0) {
        _writes_in_flight.erase(it);
        _writes_done.broadcast();
    }
}

void table::apply(const mutation& m, commitlog::replay_position rp, uint64_t phase) {
    // The memtable of the write's phase: the active one, or a sealed one whose flush waits for this write.
    memtable* target = _active.get();
    if (phase != _active->write_phase()) {
        for (auto& mt : _sealed) {
            if (mt->write_phase() == phase) {
                target = mt.get();
            }
        }
        if (target == _active.get()) {
            tlog.error("{}.{}: no memtable of write phase {} (active {}); applied to the active one",
                       _schema->keyspace(), _schema->table(), phase, _active->write_phase());
        }
    }
    target->apply(m);
    target->note_replay_position(rp);
    abandon_write(phase);
    maybe_seal_and_flush();
}

void table::apply_replayed(const mutation& m, commitlog::replay_position rp) {
    _active->apply(m);
    _active->note_replay_position(rp);
    maybe_seal_and_flush();
}

write_time::timestamp_type table::min_unflushed_timestamp() const noexcept {
    auto result = _active->min_timestamp();
    for (auto& mt : _sealed) {
        result = std::min(result, mt->min_timestamp());
    }
    return result;
}

void table::maybe_seal_and_flush() {
    if (_active->occupancy() >= _cfg.memtable_flush_threshold && !_background.is_closed()) {
        seal_active();
        _background.enter();
        spawn([this]() -> future<> {
            try {
                co_await flush_sealed();
            } catch (const std::exception& e) {
                tlog.warn("{}.{}: background flush failed (memtable kept, retried by the next flush): {}",
                          _schema->keyspace(), _schema->table(), e.what());
            } catch (...) {
                tlog.warn("{}.{}: background flush failed (memtable kept, retried by the next flush)",
                          _schema->keyspace(), _schema->table());
            }
            _background.leave();
        });
    }
}

void table::seal_active() {
    if (!_active->empty()) {
        // Writes positioned from now on belong to the next memtable.
        _active->mark_sealed();
        _sealed.push_back(std::exchange(_active, new_memtable()));
        _active->set_write_phase(++_write_phase);
    }
}

namespace {

// A `now` before every expiry and deletion time: a compacting reader at it drops only shadowed data.
constexpr deletion_time_type no_expiry_now = std::numeric_limits<deletion_time_type>::min();

} // namespace

sstables::descriptor table::next_descriptor() {
    // The least generation above the last that is ours: n * shard_count + shard.
    uint64_t n = _last_generation / _cfg.shard_count;
    uint64_t gen = n * _cfg.shard_count + _cfg.shard;
    if (gen <= _last_generation) {
        gen += _cfg.shard_count;
    }
    _last_generation = gen;
    // The directories in turn, by generation, so that the turn goes on across restarts.
    auto dirs = directories();
    auto& dir = dirs[(gen / _cfg.shard_count) % dirs.size()];
    return sstables::descriptor{dir, sstables::sstable_version::me, std::to_string(gen), "big"};
}

future<> table::flush_sealed() {
    auto units = co_await get_units(_flush_sem, 1);
    while (!_sealed.empty()) {
        auto mt = _sealed.front();
        // The writes of its phase positioned but not applied yet go into it: wait for them.
        auto phase = mt->write_phase();
        co_await _writes_done.wait([this, phase] {
            return _writes_in_flight.empty() || _writes_in_flight.begin()->first > phase;
        });
        auto d = next_descriptor();
        auto opts = sstables::writer_options_for(*_schema);
        opts.originating_host_id = _cfg.host_id;
        if (mt->min_replay_position()) {
            opts.commitlog_intervals.emplace_back(to_commitlog_position(*mt->min_replay_position()),
                                                  to_commitlog_position(*mt->max_replay_position()));
        }
        // Without the data its own tombstones shadow (nothing is purged or expired): Cassandra's range reads of one
        // sstable trust a partition to hold none, as its memtables drop it (a streamed snapshot showed deleted rows).
        auto r = make_compacting_reader(make_memtable_reader(mt, _schema, read_options{}), no_expiry_now,
                                        compaction_mode::compaction, no_expiry_now, write_time::missing_timestamp);
        try {
            co_await with_closeable(std::move(r), [this, &d, &opts](mutation_reader& r) {
                return _cfg.write_sstable(r, _schema, d, opts);
            });
        } catch (...) {
            ++_failed_flushes;
            throw;
        }
        auto sst = co_await sstables::open_sstable(d);
        // One step, no suspension: the sstable joins the set as the memtable leaves, so no read misses it, and
        // the row cache takes in what the memtable held (and refuses populations read before this).
        _sstables.push_back(std::move(sst));
        index_sstables();
        _sealed.erase(std::find(_sealed.begin(), _sealed.end(), mt));
        // Its memory counts no more: readers still holding it end soon, and the writes waiting for it may go on.
        mt->release_dirty_memory();
        if (_cache) {
            _cache->update(*mt);
        }
        note_flushed(_sstables.back());
        ++_flushes;
        // Every entry of the table positioned at or before the memtable's last is in an sstable now (the
        // memtables before it are flushed, in order, and later phases took later positions).
        if (_cfg.commitlog && mt->max_replay_position()) {
            co_await _cfg.commitlog->discard_completed_segments(_schema->id(), *mt->max_replay_position());
        }
        if (_cfg.compaction_manager) {
            _cfg.compaction_manager->submit(*this);
        }
    }
}

future<> table::flush() {
    seal_active();
    co_await flush_sealed();
}

void table::index_sstables() {
    std::vector<const sstable_key_bounds*> bounds;
    bounds.reserve(_sstables.size());
    for (auto& sst : _sstables) {
        bounds.push_back(&sst->key_bounds());
    }
    _bounds_index = sstable_bounds_index(bounds);
}

const sstable_bounds_index& table::bounds_index() const {
    if (_bounds_index.size() != _sstables.size()) {
        throw std::logic_error(fmt::format("table {}.{}: the sstable index has {} sstables, the set {}",
                                           _schema->keyspace(), _schema->table(), _bounds_index.size(),
                                           _sstables.size()));
    }
    return _bounds_index;
}

table::sstable_refs table::sstables_for(const dht::partition_range& range) const {
    // A single key: only the sstables whose key bounds hold it (found by the index, not by asking each) and whose
    // bloom filter admits it (the key hashed once for all of them).
    if (range.is_singular() && range.start()->position.key()) {
        auto& k = *range.start()->position.key();
        auto h = sstables::bloom_filter::hash_of(k.key().bytes());
        sstable_refs out;
        for (auto i : bounds_index().spanning(k)) {
            auto& sst = _sstables[i];
            if (sst->components().filter.is_present(h)) {
                out.push_back(sst);
            }
        }
        return out;
    }
    return sstable_refs(_sstables.begin(), _sstables.end());
}

mutation_reader table::make_reader(reader_permit permit, read_options opts) {
    // Read directly: only the sstables that may hold the range.
    auto ssts = reads_cache(opts.bypass) ? sstable_refs{} : sstables_for(opts.range);
    return make_reader(std::move(permit), std::move(opts), std::move(ssts));
}

mutation_reader table::make_reader(reader_permit permit, read_options opts, sstable_refs ssts) {
    bool use_cache = reads_cache(opts.bypass);
    // With one source the combined reader would only pass its stream through (and cost a merge step per
    // fragment): that source is read directly, in the read's own forwarding mode (opts.stats then counts nothing).
    // Empty memtables are no sources: the active one too, so a write applied during the read into a memtable
    // that was empty when it started is not seen, which the read's contract allows (it returns what was there
    // when it started).
    size_t count = (_active->empty() ? 0 : 1) + (use_cache ? 1 : ssts.size());
    for (auto& mt : _sealed) {
        count += mt->empty() ? 0 : 1;
    }
    if (count == 1) {
        // The one source, read directly (no sources vector to build).
        if (!_active->empty()) {
            return make_memtable_reader(_active, _schema, std::move(opts));
        }
        for (auto& mt : _sealed) {
            if (!mt->empty()) {
                return make_memtable_reader(mt, _schema, std::move(opts));
            }
        }
        if (use_cache) {
            return _cache->make_reader(std::move(permit), std::move(opts));
        }
        return sstables::make_sstable_reader(ssts.front(), _schema, std::move(permit), std::move(opts));
    }
    // Several sources: each takes a copy, with forwarding (the combined reader drives their windows) and without
    // the stats, which are the combined reader's.
    auto options_for_source = [&] {
        return read_options{.range = opts.range,
                            .slice = opts.slice,
                            .order = opts.order,
                            .forwarding = streamed_forwarding::yes,
                            .bypass = opts.bypass};
    };
    std::vector<combined_reader_source> sources;
    sources.reserve(count);
    auto add_memtable = [&](const std::shared_ptr<memtable>& mt, write_time::timestamp_type max_ts) {
        if (!mt->empty()) {
            sources.push_back({make_memtable_reader(mt, _schema, options_for_source()), max_ts, streamed_forwarding::yes});
        }
    };
    // The active memtable takes writes during the read (its reader follows them, see memtable_reader.hh): no
    // bound on its timestamps.
    add_memtable(_active, std::numeric_limits<write_time::timestamp_type>::max());
    for (auto& mt : _sealed) {
        add_memtable(mt, mt->max_timestamp());
    }
    if (use_cache) {
        auto max_ts = write_time::missing_timestamp;
        for (auto& sst : _sstables) {
            max_ts = std::max(max_ts, sst->max_timestamp());
        }
        sources.push_back({_cache->make_reader(permit, options_for_source()), max_ts, streamed_forwarding::yes});
    } else {
        for (auto& sst : ssts) {
            sources.push_back({sstables::make_sstable_reader(sst, _schema, permit, options_for_source()),
                               sst->max_timestamp(), streamed_forwarding::yes});
        }
    }
    if (sources.size() == 1) {
        return std::move(sources.front().reader);
    }
    return make_combined_reader(_schema, std::move(sources), opts.reversed(), opts.forwarding, opts.stats);
}

mutation_reader table::make_sstables_reader(const dht::partition_range& range, const clustering_ranges& slice,
                                            reader_permit permit) {
    // No sstable: a combined reader of nothing.
    auto ssts = sstables_for(range);
    if (ssts.size() == 1) {
        return sstables::make_sstable_reader(ssts.front(), _schema, std::move(permit),
                                             {.range = range, .slice = slice});
    }
    std::vector<combined_reader_source> sources;
    for (auto& sst : ssts) {
        sources.push_back({sstables::make_sstable_reader(sst, _schema, permit,
                                                         {.range = range, .slice = slice,
                                                          .forwarding = streamed_forwarding::yes}),
                           sst->max_timestamp(), streamed_forwarding::yes});
    }
    return make_combined_reader(_schema, std::move(sources), false, streamed_forwarding::no);
}

std::vector<sstables::descriptor> table::sstable_descriptors() const {
    std::vector<sstables::descriptor> out;
    for (auto& s : _sstables) {
        out.push_back(s->desc());
    }
    return out;
}

write_time::timestamp_type table::max_purgeable(const dht::decorated_key& k,
                                                const std::vector<sstables::shared_sstable>& compacting) const {
    auto result = std::numeric_limits<write_time::timestamp_type>::max();
    auto consider_memtable = [&](const memtable& mt) {
        if (mt.partitions().contains(k)) {
            result = std::min(result, mt.min_timestamp());
        }
    };
    consider_memtable(*_active);
    for (auto& mt : _sealed) {
        consider_memtable(*mt);
    }
    // The purge guard (ScyllaDB issue 14870): the commitlog segments not yet discarded for this table may hold
    // older data of the key that a crash would replay, so no tombstone at or above their least timestamp is
    // purged. Those entries are the memtables' (a flush discards its own, replay skips what sstables hold).
    if (_cfg.commitlog) {
        result = std::min(result, min_unflushed_timestamp());
    }
    for (auto& sst : _sstables) {
        if (std::find(compacting.begin(), compacting.end(), sst) == compacting.end() && sst->may_contain(k)) {
            result = std::min(result, sst->min_timestamp());
        }
    }
    return result;
}

namespace {

// A swap log is named by its least input generation: this shard's, and no other swap's while the input lives.
std::string swap_id(const std::vector<sstables::shared_sstable>& inputs) {
    auto least = inputs.front()->desc().generation;
    for (auto& sst : inputs) {
        auto& g = sst->desc().generation;
        if (g.size() < least.size() || (g.size() == least.size() && g < least)) {
            least = g;
        }
    }
    return least;
}

} // namespace

future<sstables::written_sstable> table::write_sstable(mutation_reader& r, sstables::descriptor d,
                                                     sstables::writer_options o) {
    o.originating_host_id = _cfg.host_id;
    return _cfg.write_sstable(r, _schema, std::move(d), std::move(o));
}

future<sstables::sstable_swap> table::begin_swap(const std::vector<sstables::shared_sstable>& inputs,
                                                 const std::vector<sstables::descriptor>& outputs) {
    // The swap is logged before the output can be committed (db/README.md, "Crash-safe swaps").
    std::vector<sstables::descriptor> in;
    for (auto& sst : inputs) {
        in.push_back(sst->desc());
    }
    auto dirs = directories();
    auto id = swap_id(inputs);
    auto swap = co_await sstables::sstable_swap::begin(_cfg.directory, dirs, id, in, outputs, _cfg.swap_hook);
    co_return swap;
}

future<> table::replace_sstables(std::vector<sstables::shared_sstable> inputs,
                                 std::vector<sstables::shared_sstable> outputs, bool may_have_purged) {
    // Otherwise the row cache is left alone: it holds what the set holds, and the set's data is the same. A read
    // that made its sstable reader before this populates from `inputs`, which give the same answer.
    if (may_have_purged && _cache) {
        _cache->clear();
    }
    std::erase_if(_sstables, [&](auto& s) { return std::find(inputs.begin(), inputs.end(), s) != inputs.end(); });
    _sstables.insert(_sstables.end(), outputs.begin(), outputs.end());
    index_sstables();
    for (auto& sst : inputs) {
        co_await sst->readers().close();
        co_await sst->close();
    }
}

future<> table::compact_all(deletion_time_type now) {
    if (_cfg.compaction_manager) {
        co_await _cfg.compaction_manager->perform_major_compaction(*this, now);
        co_return;
    }
    auto units = co_await get_units(_compaction_sem, 1);
    if (_sstables.empty()) {
        co_return;
    }
    compaction::compaction_control ctl;
    co_await compaction::compact_sstables(*this, _sstables, compaction::job_kind::regular, now, ctl,
                                          compaction::compaction_options_of(*_schema).max_sstable_size);
}

} // namespace reef
