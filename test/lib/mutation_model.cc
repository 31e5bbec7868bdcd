// The model and the reader-checking helpers. See mutation_model.hh.
#include "test/lib/mutation_model.hh"

#include "mutation/fragment_stream_validator.hh"
#include "reader/mutation_fragment_filter.hh"
#include "runtime/reactor.hh"

#include <algorithm>

namespace reef::testing {

void apply_to_model(mutation_model& model, const mutation& m) {
    auto it = model.find(m.decorated_key());
    if (it == model.end()) {
        model.emplace(m.decorated_key(), m);
    } else {
        it->second.apply(m);
    }
}

std::vector<mutation_fragment> sliced_partition(const mutation& m, const clustering_ranges& slice, bool reversed) {
    auto frags = to_fragments(m, reversed);
    mutation_fragment_filter filter(*m.schema(), slice, reversed);
    std::vector<mutation_fragment> out{frags.front()};
    // Everything is fed, partition_end included (which closes what is open):
    // no skipping, so nothing of a reader's own walk is reused here.
    for (size_t i = 1; i < frags.size(); ++i) {
        filter.consume(std::move(frags[i]), out);
    }
    return out;
}

std::vector<mutation_fragment> expected_read(const mutation_model& model, const dht::partition_range& pr,
                                             const clustering_ranges& slice, bool reversed) {
    std::vector<mutation_fragment> out;
    for (auto& [k, m] : model) {
        if (pr.contains(k)) {
            auto p = sliced_partition(m, slice, reversed);
            out.insert(out.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
        }
    }
    return out;
}

namespace {

// Live cells only (collection tombstones gone).
row live_cells(const row& r, deletion_time_type now) {
    row out;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (cell->is_live(now)) {
                out.apply(id, *cell);
            }
        } else {
            collection_cells live;
            for (auto& [path, cell] : std::get<collection_cells>(c).cells) {
                if (cell.is_live(now)) {
                    live.cells.emplace_back(path, cell);
                }
            }
            if (!live.cells.empty()) {
                out.apply(id, std::move(live), [](bytes_view, bytes_view) { return 0; });
            }
        }
    }
    return out;
}

} // namespace

std::optional<mutation> model_query(mutation m, deletion_time_type now, const std::optional<clustering_ranges>& forward_slice,
                                    bool keep_empty) {
    m.partition().drop_shadowed();
    const schema& s = *m.schema();
    position_in_partition_comparator cmp(s);
    auto in_slice = [&](const clustering_key_prefix& key) {
        if (!forward_slice) {
            return true;
        }
        auto pos = position_in_partition::for_key(key);
        return std::any_of(forward_slice->begin(), forward_slice->end(),
                           [&](const position_range& r) { return cmp(r.start, pos) <= 0 && cmp(pos, r.end) < 0; });
    };
    mutation out(m.schema(), m.decorated_key());
    auto st = live_cells(m.partition().static_row(), now);
    for (auto& [id, c] : st.cells()) {
        out.partition().apply_static(s, id, c);
    }
    for (auto& [key, r] : m.partition().rows()) {
        if (!in_slice(key)) {
            continue;
        }
        deletable_row live;
        if (r.marker.is_live(now)) {
            live.marker = r.marker;
        }
        live.cells = live_cells(r.cells, now);
        if (!live.marker.empty() || !live.cells.empty()) {
            out.partition().apply_row(s, key, live);
        }
    }
    if (!keep_empty && out.partition().static_row().empty() && out.partition().rows().empty()) {
        return std::nullopt;
    }
    return out;
}

std::vector<mutation> canonical_mutations(const schema_ptr& s, const std::vector<mutation_fragment>& fs, bool reversed) {
    auto ms = mutations_from_fragments(s, fs, reversed);
    for (auto& m : ms) {
        m.partition().drop_shadowed();
    }
    return ms;
}

void validate_stream(const schema& s, const std::vector<mutation_fragment>& fs, bool reversed) {
    fragment_stream_validator v(s, reversed);
    for (auto& f : fs) {
        v(f);
    }
    v.on_end_of_stream();
}

future<std::vector<mutation_fragment>> read_validated(mutation_reader& r, bool reversed) {
    std::vector<mutation_fragment> out;
    while (true) {
        co_await yield();
        auto f = co_await r();
        if (!f) {
            break;
        }
        out.push_back(std::move(*f));
    }
    validate_stream(*r.schema(), out, reversed);
    co_return out;
}

std::vector<dht::decorated_key> keys_of(const mutation_model& model) {
    std::vector<dht::decorated_key> keys;
    keys.reserve(model.size());
    for (auto& [k, m] : model) {
        keys.push_back(k);
    }
    return keys;
}

std::string describe(const std::vector<mutation>& ms) {
    std::string out;
    for (auto& m : ms) {
        out += to_string(m) + "\n";
    }
    return out;
}

bool is_empty(const mutation& m) {
    auto& p = m.partition();
    return !p.partition_tombstone() && p.static_row().empty() && p.rows().empty() && p.range_tombstones().empty();
}

dht::partition_range random_partition_range(mutation_generator& g, const std::vector<dht::decorated_key>& keys) {
    if (keys.empty()) {
        return dht::partition_range::full();
    }
    auto position = [&] {
        auto& k = keys[g.rnd(0, int(keys.size()) - 1)];
        switch (g.rnd(0, 2)) {
        case 0: return dht::ring_position::before_token(k.get_token());
        case 1: return dht::ring_position::after_token(k.get_token());
        default: return dht::ring_position::for_key(k);
        }
    };
    auto bound = [&]() -> std::optional<dht::partition_range::bound> {
        if (g.rnd(0, 3) == 0) {
            return std::nullopt;
        }
        return dht::partition_range::bound{position(), bool(g.rnd(0, 1))};
    };
    switch (g.rnd(0, 3)) {
    case 0: return dht::partition_range::full();
    case 1: return dht::partition_range::singular(keys[g.rnd(0, int(keys.size()) - 1)]);
    default: return dht::partition_range(bound(), bound());
    }
}

} // namespace reef::testing
