// The combined reader's model-test helpers. See combined_model.hh.
#include "test/lib/combined_model.hh"

#include "mutation/fragment_stream_validator.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <exception>
#include <sstream>

namespace reef::testing {

void map_timestamps(mutation_fragment& f, const std::function<write_time::timestamp_type(write_time::timestamp_type)>& fn) {
    auto tomb = [&](tombstone& t) {
        if (t) {
            t.timestamp = fn(t.timestamp);
        }
    };
    auto cell = [&](const atomic_cell& c) {
        auto ts = fn(c.timestamp());
        if (c.is_dead_marker()) {
            return atomic_cell::make_dead(ts, c.local_deletion_time());
        }
        if (c.is_expiring()) {
            return atomic_cell::make_expiring(ts, std::string(c.value()), c.ttl(), c.local_deletion_time());
        }
        return atomic_cell::make_live(ts, std::string(c.value()));
    };
    auto cells = [&](row& r) {
        row out;
        for (auto& [id, c] : r.cells()) {
            if (auto* a = std::get_if<atomic_cell>(&c)) {
                out.apply(id, cell(*a));
            } else {
                collection_cells coll = std::get<collection_cells>(c);
                tomb(coll.tomb);
                for (auto& [path, element] : coll.cells) {
                    element = cell(element);
                }
                // Into an empty column: the element order stays as it is.
                out.apply(id, std::move(coll), [](bytes_view, bytes_view) { return 0; });
            }
        }
        r = std::move(out);
    };
    if (auto* ps = std::get_if<partition_start>(&f)) {
        tomb(ps->partition_tombstone);
    } else if (auto* sr = std::get_if<static_row>(&f)) {
        cells(sr->cells);
    } else if (auto* cr = std::get_if<clustering_row>(&f)) {
        if (!cr->marker.empty()) {
            cr->marker.timestamp = fn(cr->marker.timestamp);
        }
        tomb(cr->row_tombstone);
        cells(cr->cells);
    } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
        tomb(rtc->tomb);
    }
}

write_time::timestamp_type max_timestamp(std::vector<mutation_fragment> fs) {
    write_time::timestamp_type max = write_time::missing_timestamp;
    for (auto& f : fs) {
        map_timestamps(f, [&](write_time::timestamp_type ts) {
            max = std::max(max, ts);
            return ts;
        });
    }
    return max;
}

mutation shift_timestamps(const mutation& m, write_time::timestamp_type delta) {
    auto fs = to_fragments(m);
    for (auto& f : fs) {
        map_timestamps(f, [&](write_time::timestamp_type ts) { return ts + delta; });
    }
    return mutation_from_fragments(m.schema(), fs);
}

future<read_result> read_by_plan(mutation_reader& r, schema_ptr s, const read_plan& plan, bool reversed) {
    read_result out;
    fragment_stream_validator v(*s, reversed);
    std::vector<mutation_fragment> fs;
    for (size_t i = 0; i < plan.ranges.size(); ++i) {
        if (i > 0) {
            co_await r.fast_forward_to(plan.ranges[i]);
        }
        while (auto f = co_await r()) {
            auto* ps = std::get_if<partition_start>(&*f);
            BOOST_REQUIRE_MESSAGE(ps, "expected partition_start, got " << kind_name(*f));
            out.keys.push_back(ps->key);
            if (plan.skipped.contains(ps->key)) {
                co_await r.next_partition();
                continue;
            }
            std::vector<mutation_fragment> partition{std::move(*f)};
            if (!plan.windows) {
                while (true) {
                    auto g = co_await r();
                    BOOST_REQUIRE_MESSAGE(g, "stream ends inside a partition");
                    bool end = std::holds_alternative<partition_end>(*g);
                    partition.push_back(std::move(*g));
                    if (end) {
                        break;
                    }
                }
            } else {
                while (auto g = co_await r()) {
                    partition.push_back(std::move(*g));
                }
                for (auto& w : *plan.windows) {
                    co_await r.fast_forward_to(w);
                    while (auto g = co_await r()) {
                        partition.push_back(std::move(*g));
                    }
                }
                partition.push_back(partition_end{});
                co_await r.next_partition();
            }
            for (auto& g : partition) {
                v(g);
            }
            out.mutations.push_back(mutation_from_fragments(s, partition, reversed));
        }
    }
    v.on_end_of_stream();
    co_return out;
}

mutation visible(mutation m) {
    m.partition().drop_shadowed();
    return m;
}

namespace {

std::string what(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return x.what();
    } catch (...) {
        return "unknown exception";
    }
}

std::string describe_indented(const std::vector<mutation>& ms) {
    std::ostringstream o;
    for (auto& m : ms) {
        o << "\n  " << to_string(m);
    }
    return o.str();
}

dht::partition_range random_range(testing::mutation_generator& g, const std::vector<dht::decorated_key>& keys,
                                   size_t& from) {
    using bound = dht::partition_range::bound;
    // A range over keys[from..], moving `from` past it.
    if (from >= keys.size() || g.rnd(0, 3) == 0) {
        from = keys.size();
        return from ? dht::partition_range(bound{dht::ring_position::for_key(keys.back()), false}, std::nullopt)
                    : dht::partition_range::full();
    }
    size_t a = from + size_t(g.rnd(0, int(keys.size() - from) - 1));
    size_t b = a + size_t(g.rnd(0, int(keys.size() - a) - 1));
    from = b + 1;
    if (a == b && g.rnd(0, 1)) {
        return dht::partition_range::singular(keys[a]);
    }
    return dht::partition_range(bound{dht::ring_position::for_key(keys[a]), true},
                                bound{dht::ring_position::for_key(keys[b]), bool(g.rnd(0, 1))});
}

} // namespace

combined_case make_combined_case(mutation_generator& g, bool layered) {
    combined_case c;
    c.s = g.schema();
    std::vector<dht::decorated_key> keys;
    int nkeys = g.rnd(1, 5);
    for (int i = 0; i < nkeys; ++i) {
        keys.push_back(pkey(g.rnd(0, 9)));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

    int nsources = g.rnd(1, 4);
    std::vector<int> layer(nsources, 0);
    if (layered) {
        for (auto& l : layer) {
            l = g.rnd(0, 3);
        }
    }
    c.sources.resize(nsources);
    for (auto& k : keys) {
        std::optional<mutation> merged;
        int versions = g.rnd(1, 4);
        for (int v = 0; v < versions; ++v) {
            int i = g.rnd(0, nsources - 1);
            auto m = shift_timestamps(g.make(k, 6), 10 * layer[i]);
            if (!merged) {
                merged = m;
            } else {
                merged->apply(m);
            }
            auto& ms = c.sources[i];
            if (!ms.empty() && ms.back().decorated_key() == k) {
                ms.back().apply(m);
            } else {
                ms.push_back(std::move(m));
            }
        }
        c.model.push_back(std::move(*merged));
    }
    for (auto& ms : c.sources) {
        std::vector<mutation_fragment> fs;
        for (auto& m : ms) {
            for (auto& f : to_fragments(m)) {
                fs.push_back(std::move(f));
            }
        }
        c.max_timestamps.push_back(max_timestamp(std::move(fs)));
        // Small buffers make the combined reader fill often, and its skips
        // reach the source's reader.
        c.buffer_fragments.push_back(g.rnd(0, 3) ? size_t(g.rnd(1, 3)) : 128);
    }

    c.reversed = g.rnd(0, 1);
    if (g.rnd(0, 1)) {
        c.slice = g.make_ranges();
        if (c.reversed) {
            c.slice = reverse_ranges(*c.slice);
        }
    }
    size_t from = 0;
    int nranges = g.rnd(0, 2) ? 1 : g.rnd(2, 3);
    for (int i = 0; i < nranges; ++i) {
        c.plan.ranges.push_back(g.rnd(0, 2) || i > 0 ? random_range(g, keys, from) : dht::partition_range::full());
        if (i == 0 && c.plan.ranges[0].start() == std::nullopt && c.plan.ranges[0].end() == std::nullopt) {
            break;  // the full range: nothing after it
        }
    }
    for (auto& k : keys) {
        if (g.rnd(0, 5) == 0) {
            c.plan.skipped.insert(k);
        }
    }
    if (g.rnd(0, 2) == 0) {
        c.plan.windows = g.make_ranges();
        if (c.reversed) {
            c.plan.windows = reverse_ranges(*c.plan.windows);
        }
    }
    for (size_t i = 0; i < c.sources.size(); ++i) {
        bool whole = !c.plan.windows && g.rnd(0, 2) == 0;
        c.source_forwarding.push_back(whole ? streamed_forwarding::no : streamed_forwarding::yes);
    }
    return c;
}

future<> check_combined_case(const combined_case& c, const source_factory& make_source, const std::string& context,
                             combined_reader_stats& stats) {
    auto& s = c.s;
    auto fwd = c.forwarding();
    // The model: the merged mutations read by the same plan through the
    // fragment vector reader (whose slicing and windows have their own tests).
    std::vector<mutation_fragment> model_fragments;
    for (auto& m : c.model) {
        for (auto& f : to_fragments(m, c.reversed)) {
            model_fragments.push_back(std::move(f));
        }
    }
    auto model_reader =
        make_fragment_vector_reader(s, std::move(model_fragments), c.plan.ranges.front(), fwd, c.reversed, c.slice);
    auto want = co_await read_by_plan(model_reader, s, c.plan, c.reversed);
    co_await model_reader.close();

    std::vector<combined_reader_source> inputs;
    for (size_t i = 0; i < c.sources.size(); ++i) {
        inputs.push_back(combined_reader_source{make_source(c, i), c.max_timestamps[i], c.source_forwarding[i]});
    }
    auto combined = make_combined_reader(s, std::move(inputs), c.reversed, fwd, &stats);
    auto where = context + (c.reversed ? " reversed" : "");
    read_result got;
    try {
        got = co_await read_by_plan(combined, s, c.plan, c.reversed);
    } catch (...) {
        BOOST_ERROR(where << ": " << what(std::current_exception()));
    }
    co_await combined.close();

    // The comparison: the same partitions, each equal to the model's once
    // shadowed data is dropped from both. The combined stream may differ
    // from the model's in representation only: it skips (never reads) a
    // source's data that a newer tombstone deletes, and it may carry range
    // tombstones that the partition tombstone covers; drop_shadowed removes
    // exactly such data and tombstones, and nothing a read returns.
    BOOST_CHECK_MESSAGE(got.keys == want.keys, where << ": partitions differ");
    std::vector<mutation> got_visible, want_visible;
    for (auto& m : got.mutations) {
        got_visible.push_back(visible(m));
    }
    for (auto& m : want.mutations) {
        want_visible.push_back(visible(m));
    }
    BOOST_CHECK_MESSAGE(got_visible == want_visible,
                        where << ":\n got" << describe_indented(got_visible) << "\n want" << describe_indented(want_visible));
}

} // namespace reef::testing
