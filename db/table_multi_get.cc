// table::multi_get: a batch of single-partition reads over the memtables, the row cache and the sstables. See
// table.hh.
#include "db/memtable_reader.hh"
#include "db/table.hh"
#include "runtime/when_all.hh"
#include "sstables/located_mutations.hh"
#include "sstables/shared_sstable_readers.hh"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace reef {

namespace {

// Reads r's next partition (forward, whole) to the end of its stream: the partition, or nothing when r gives none.
future<std::optional<mutation>> read_partition(mutation_reader& r, schema_ptr s) {
    mutation_partition_builder builder(std::move(s));
    std::optional<mutation> out;
    while (auto f = co_await r()) {
        if (auto m = builder.consume(std::move(*f))) {
            out = std::move(m);
        }
    }
    co_return out;
}

// Reads r's one partition (forward, whole) and closes r: the partition, or nothing when r gives none, as an
// optional<mutation> or as a vector of one.
template <typename Out>
future<Out> read_whole(mutation_reader r, schema_ptr s) {
    std::optional<mutation> out;
    std::exception_ptr ex;
    try {
        out = co_await read_partition(r, std::move(s));
    } catch (...) {
        ex = std::current_exception();
    }
    co_await r.close();
    if (ex) {
        std::rethrow_exception(ex);
    }
    if constexpr (std::is_same_v<Out, std::optional<mutation>>) {
        co_return out;
    } else {
        Out one(1);
        one[0] = std::move(out);
        co_return one;
    }
}

// Made outside any co_await expression (coroutine rule 2: read_options is built here).
mutation_reader memtable_partition_reader(const std::shared_ptr<memtable>& mt, const schema_ptr& s,
                                          const dht::decorated_key& k, const clustering_ranges& forward_slice) {
    return make_memtable_reader(mt, s, {.range = dht::partition_range::singular(k), .slice = forward_slice});
}

mutation_reader located_reader(const sstables::shared_sstable& sst, const schema_ptr& s, reader_permit permit,
                               const clustering_ranges& forward_slice, std::vector<sstables::located_partition> located) {
    return sstables::make_located_sstable_reader(sst, s, std::move(permit), {.slice = forward_slice}, std::move(located));
}

// The keys of the ring-ordered batch within sst's key bounds, [first, last): a run, whose first key is the first at
// or after the summary's first point. Two binary searches.
std::pair<size_t, size_t> keys_within(const sstables::sstable& sst, std::span<const dht::decorated_key> keys) {
    auto& points = sst.summary().points;
    auto first = points.empty() ? keys.begin() : std::partition_point(keys.begin(), keys.end(), [&](auto& k) {
        return k < points.front().key;
    });
    auto last = std::partition_point(first, keys.end(), [&](auto& k) { return sst.spans(k); });
    return {size_t(first - keys.begin()), size_t(last - keys.begin())};
}

// The sstables whose key bounds hold a key of the batch, found by the key-bounds index of `all`, in set order: only
// these are held and read.
std::vector<sstables::shared_sstable> sstables_spanning(const std::vector<sstables::shared_sstable>& all,
                                                        const sstable_bounds_index& index,
                                                        const std::vector<dht::decorated_key>& keys) {
    std::vector<uint32_t> at;
    for (auto& k : keys) {
        auto p = index.spanning(k);
        at.insert(at.end(), p.begin(), p.end());
    }
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    std::vector<sstables::shared_sstable> out;
    out.reserve(at.size());
    for (auto i : at) {
        out.push_back(all[i]);
    }
    return out;
}

// A batch of one key: t's single-partition read of it, forward (made outside any co_await expression).
mutation_reader single_partition_reader(table& t, reader_permit permit, const dht::decorated_key& key,
                                        clustering_ranges forward_slice, bypass_cache bypass) {
    return t.make_reader(std::move(permit), {.range = dht::partition_range::singular(key),
                                             .slice = std::move(forward_slice),
                                             .bypass = bypass});
}

void apply_into(std::optional<mutation>& slot, mutation m) {
    if (slot) {
        slot->apply(m);
    } else {
        slot = std::move(m);
    }
}

// Throws std::invalid_argument unless keys are in ring order and distinct, as `who` requires.
void check_batch_keys(const std::vector<dht::decorated_key>& keys, const char* who) {
    for (size_t i = 1; i < keys.size(); ++i) {
        if (!(keys[i - 1] < keys[i])) {
            throw std::invalid_argument(std::string(who) + ": keys not in ring order or not distinct (key " +
                                        std::to_string(i) + ", token " + keys[i].get_token().to_string() + ")");
        }
    }
}

} // namespace

future<> table::read_sstables_batch(const std::vector<sstables::shared_sstable>& ssts,
                                    const std::vector<dht::decorated_key>& keys, const clustering_ranges& forward_slice, reader_permit permit,
                                    std::vector<std::optional<mutation>>& out, sstables::partition_batch_stats* stats) {
    // Each key hashed once for every sstable's filter; every filter probed for the whole batch first, and only the
    // sstables that admit a key looked at further, all of them at once (their index pages and Data.db reads in
    // flight together), then parsed one after another.
    std::vector<sstables::bloom_filter::hash_type> hashes;
    hashes.reserve(keys.size());
    for (auto& k : keys) {
        hashes.push_back(sstables::bloom_filter::hash_of(k.key().bytes()));
    }
    std::vector<size_t> candidates;
    std::vector<future<sstables::located_batch>> locating;
    for (size_t i = 0; i < ssts.size(); ++i) {
        // Only the keys within its bounds reach its filter.
        auto [from, to] = keys_within(*ssts[i], keys);
        auto admitted = sstables::probe_filter(*ssts[i], std::span(hashes).subspan(from, to - from), stats);
        for (auto& a : admitted) {
            a += from;
        }
        if (!admitted.empty()) {
            candidates.push_back(i);
            locating.push_back(sstables::locate_admitted(*ssts[i], keys, std::move(admitted), permit, {}, stats));
        }
    }
    auto all_located = co_await when_all(std::move(locating));
    for (size_t c = 0; c < candidates.size(); ++c) {
        auto& sst = ssts[candidates[c]];
        auto& located = all_located[c];
        if (located.keys.empty()) {
            continue;
        }
        auto which = std::move(located.keys);
        auto partitions = std::move(located.partitions);
        if (sstables::located_mutation_parser::serves(*sst, *_schema, forward_slice)) {
            // The small partitions straight from their bytes into mutations; the others through the reader below.
            if (permit.timed_out()) {
                permit.check_timeout(sst->data_file().path());
            }
            sstables::located_mutation_parser parser(*sst, _schema);
            size_t kept = 0;
            for (size_t i = 0; i < partitions.size(); ++i) {
                if (partitions[i].bytes.empty()) {
                    which[kept] = which[i];
                    partitions[kept++] = std::move(partitions[i]);
                } else {
                    parser.parse_into(partitions[i], out[which[i]]);
                }
            }
            which.resize(kept);
            partitions.erase(partitions.begin() + ptrdiff_t(kept), partitions.end());
            if (partitions.empty()) {
                continue;
            }
        }
        auto r = located_reader(sst, _schema, permit, forward_slice, std::move(partitions));
        mutation_partition_builder builder(_schema);
        size_t next = 0;
        std::exception_ptr ex;
        try {
            while (auto f = co_await r()) {
                auto m = builder.consume(std::move(*f));
                if (!m) {
                    continue;
                }
                while (next < which.size() && !(keys[which[next]] == m->decorated_key())) {
                    ++next;
                }
                if (next == which.size()) {
                    throw std::runtime_error(sst->desc().filename(sstables::component_type::data) +
                                             ": a batch read returned a partition it did not locate");
                }
                apply_into(out[which[next++]], std::move(*m));
            }
        } catch (...) {
            ex = std::current_exception();
        }
        co_await r.close();
        if (ex) {
            std::rethrow_exception(ex);
        }
    }
}

future<std::vector<std::optional<mutation>>> table::multi_get(reader_permit permit, std::vector<dht::decorated_key> keys,
                                                              clustering_ranges slice, read_order order,
                                                              sstables::partition_batch_stats* stats,
                                                              bypass_cache bypass) {
    using result = std::vector<std::optional<mutation>>;
    // Not a coroutine, so that a batch of one runs in one (read_whole's); what fails here fails the future.
    try {
        check_batch_keys(keys, "table::multi_get");
        auto forward_slice = order == read_order::reversed ? reverse_ranges(slice) : std::move(slice);
        if (keys.size() == 1 && !stats) {
            // A batch of one shares nothing: make_reader's single-partition read, which the contract describes,
            // without the batch's bookkeeping.
            return read_whole<result>(single_partition_reader(*this, std::move(permit), keys.front(),
                                                              std::move(forward_slice), bypass),
                                      _schema);
        }
        return multi_get_batch(std::move(permit), std::move(keys), std::move(forward_slice), stats, bypass);
    } catch (...) {
        return make_exception_future<result>(std::current_exception());
    }
}

future<std::vector<std::optional<mutation>>> table::multi_get_unbatched(reader_permit permit,
                                                                        std::vector<dht::decorated_key> keys,
                                                                        clustering_ranges slice, read_order order,
                                                                        bypass_cache bypass) {
    check_batch_keys(keys, "table::multi_get_unbatched");
    auto forward_slice = order == read_order::reversed ? reverse_ranges(slice) : std::move(slice);
    std::vector<std::optional<mutation>> out(keys.size());
    // The sstable readers kept for the batch: a key whose one source is an sstable already read in the batch is
    // read by forwarding that sstable's reader to it (the keys ascend) rather than by a new reader. Its own filter
    // probe, index lookup and Data.db read are the same either way.
    std::vector<std::pair<const sstables::sstable*, mutation_reader>> kept;
    std::exception_ptr ex;
    try {
        for (size_t i = 0; i < keys.size(); ++i) {
            auto range = dht::partition_range::singular(keys[i]);
            bool sstables_only = !reads_cache(bypass) && _active->empty() &&
                                 std::all_of(_sealed.begin(), _sealed.end(), [](auto& mt) { return mt->empty(); });
            if (!sstables_only) {
                out[i] = co_await read_whole<std::optional<mutation>>(
                    single_partition_reader(*this, permit, keys[i], forward_slice, bypass), _schema);
                continue;
            }
            auto ssts = sstables_for(range);
            if (ssts.empty()) {
                continue;  // no source may hold it
            }
            if (ssts.size() > 1) {
                // make_reader's merge of them, the filters not probed again.
                auto r = make_reader(permit, {.range = range, .slice = forward_slice, .bypass = bypass},
                                     std::move(ssts));
                out[i] = co_await read_whole<std::optional<mutation>>(std::move(r), _schema);
                continue;
            }
            // Reused only under the table's schema now (an ALTER TABLE may have come between two keys).
            auto it = std::find_if(kept.begin(), kept.end(), [&](auto& e) {
                return e.first == ssts.front().get() && e.second.schema() == _schema;
            });
            if (it == kept.end()) {
                auto r = sstables::make_sstable_reader(ssts.front(), _schema, permit,
                                                       {.range = range, .slice = forward_slice, .bypass = bypass});
                kept.emplace_back(ssts.front().get(), std::move(r));
                it = kept.end() - 1;
            } else {
                co_await it->second.fast_forward_to(range);
            }
            out[i] = co_await read_partition(it->second, _schema);
        }
    } catch (...) {
        ex = std::current_exception();
    }
    for (auto& e : kept) {
        co_await e.second.close();
    }
    if (ex) {
        std::rethrow_exception(ex);
    }
    co_return out;
}

future<std::vector<std::optional<mutation>>> table::multi_get_batch(reader_permit permit,
                                                                    std::vector<dht::decorated_key> keys,
                                                                    clustering_ranges forward_slice,
                                                                    sstables::partition_batch_stats* stats,
                                                                    bypass_cache bypass) {
    // The sources present now, taken before anything suspends; the sstables' reader gates held (compaction closes
    // and removes an sstable only after its readers).
    std::vector<std::shared_ptr<memtable>> memtables;
    if (!_active->empty()) {
        memtables.push_back(_active);
    }
    for (auto& mt : _sealed) {
        if (!mt->empty()) {
            memtables.push_back(mt);
        }
    }
    auto ssts = sstables_spanning(_sstables, bounds_index(), keys);
    std::vector<gate::holder> holds;
    holds.reserve(ssts.size());
    for (auto& sst : ssts) {
        holds.emplace_back(sst->readers());
    }
    row_cache* cache = _cache && bypass == bypass_cache::no && !_sstables.empty() ? _cache.get() : nullptr;
    uint64_t phase = cache ? cache->phase() : 0;

    // The row cache first: its hits (data, or known absent) are the sstables' part of those keys.
    std::vector<std::optional<mutation>> out(keys.size());
    std::vector<std::shared_ptr<memtable>> cached(cache ? keys.size() : 0);
    std::vector<size_t> misses;
    if (!cache && !ssts.empty()) {
        // No cache: the sstables' part of every key, read straight into the result.
        co_await read_sstables_batch(ssts, keys, forward_slice, permit, out, stats);
    } else if (cache) {
        for (size_t i = 0; i < keys.size(); ++i) {
            auto r = cache->lookup(keys[i], forward_slice);
            if (r.hit) {
                cached[i] = std::move(r.data);
            } else {
                misses.push_back(i);
            }
        }
    }
    if (!misses.empty()) {
        // The batch itself when every key missed (no copies).
        std::vector<dht::decorated_key> miss_keys;
        if (misses.size() != keys.size()) {
            miss_keys.reserve(misses.size());
            for (size_t i : misses) {
                miss_keys.push_back(keys[i]);
            }
        }
        std::vector<std::optional<mutation>> read(misses.size());
        co_await read_sstables_batch(ssts, misses.size() == keys.size() ? keys : miss_keys, forward_slice, permit,
                                     read, stats);
        for (size_t j = 0; j < misses.size(); ++j) {
            // As the cache's reader populates a miss: shadowed data dropped, then into the cache if its phase
            // has not moved (else a private copy), and served from there.
            if (read[j]) {
                read[j]->partition().drop_shadowed();
            }
            cached[misses[j]] = cache->fill(keys[misses[j]], read[j] ? &*read[j] : nullptr, forward_slice, phase);
        }
    }
    for (size_t i = 0; i < keys.size(); ++i) {
        if (cache && cached[i]) {
            out[i] = co_await read_whole<std::optional<mutation>>(
                memtable_partition_reader(cached[i], _schema, keys[i], forward_slice), _schema);
        }
        for (auto& mt : memtables) {
            if (!mt->partitions().contains(keys[i])) {
                continue;
            }
            auto m = co_await read_whole<std::optional<mutation>>(
                memtable_partition_reader(mt, _schema, keys[i], forward_slice), _schema);
            if (m) {
                apply_into(out[i], std::move(*m));
            }
        }
    }
    co_return out;
}

} // namespace reef
