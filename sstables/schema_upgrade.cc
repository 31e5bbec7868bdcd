// Moving cells between schema versions by column name.
#include "sstables/schema_upgrade.hh"

#include <stdexcept>
#include <variant>

namespace reef {

std::vector<std::optional<column_id>> column_mapping(const std::vector<column_definition>& from,
                                                     const std::vector<column_definition>& to) {
    std::vector<std::optional<column_id>> out(from.size());
    for (size_t i = 0; i < from.size(); ++i) {
        for (size_t j = 0; j < to.size(); ++j) {
            if (from[i].name == to[j].name && *from[i].type == *to[j].type) {
                out[i] = column_id(j);
                break;
            }
        }
    }
    return out;
}

row upgrade_row(const row& r, const std::vector<std::optional<column_id>>& mapping,
                const std::vector<column_definition>& to) {
    row out;
    for (auto& [id, c] : r.cells()) {
        if (id >= mapping.size() || !mapping[id]) {
            continue;
        }
        column_id nid = *mapping[id];
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (to[nid].type->is_counter()) {
                out.apply_counter(nid, *cell);
            } else {
                out.apply(nid, *cell);
            }
        } else {
            auto comparator = to[nid].type->name_comparator();
            out.apply(nid, std::get<collection_cells>(c),
                      [comparator](bytes_view a, bytes_view b) { return comparator->compare(a, b); });
        }
    }
    return out;
}

namespace {

struct row_mappings {
    std::vector<std::optional<column_id>> statics;
    std::vector<std::optional<column_id>> regulars;

    row_mappings(const schema& from, const schema& to)
        : statics(column_mapping(from.static_columns(), to.static_columns())),
          regulars(column_mapping(from.regular_columns(), to.regular_columns())) {}
};

void check_same_keys(const schema& from, const schema& to) {
    if (from.partition_key().size() != to.partition_key().size() ||
        from.clustering_key().size() != to.clustering_key().size()) {
        throw std::invalid_argument("schema upgrade of " + to.keyspace() + "." + to.table() +
                                    ": the key columns differ");
    }
}

} // namespace

mutation upgrade_mutation(const mutation& m, const schema_ptr& to) {
    if (m.schema() == to) {
        return m;
    }
    check_same_keys(*m.schema(), *to);
    row_mappings maps(*m.schema(), *to);
    mutation out(to, m.decorated_key());
    auto& p = out.partition();
    auto& src = m.partition();
    p.apply(src.partition_tombstone());
    auto statics = upgrade_row(src.static_row(), maps.statics, to->static_columns());
    for (auto& [id, c] : statics.cells()) {
        p.apply_static(*to, id, c);
    }
    for (auto& [key, r] : src.rows()) {
        deletable_row nr{r.marker, r.tomb, upgrade_row(r.cells, maps.regulars, to->regular_columns())};
        if (nr.cells.empty() && nr.marker.empty() && !nr.tomb) {
            continue;  // held only cells of dropped columns
        }
        p.apply_row(*to, key, nr);
    }
    for (auto& rt : src.range_tombstones()) {
        p.apply_range_tombstone(rt.start, rt.end, rt.tomb);
    }
    return out;
}

bool header_matches(const schema& s, const sstables::serialization_header& h) {
    auto same = [](const std::vector<column_definition>& cols, const std::vector<sstables::serialization_header_column>& hc) {
        if (cols.size() != hc.size()) {
            return false;
        }
        for (size_t i = 0; i < cols.size(); ++i) {
            if (cols[i].name != hc[i].name || !(*cols[i].type == *hc[i].type)) {
                return false;
            }
        }
        return true;
    };
    return same(s.static_columns(), h.static_columns) && same(s.regular_columns(), h.regular_columns);
}

namespace {

class upgrading_reader final : public mutation_reader_impl {
public:
    upgrading_reader(mutation_reader r, schema_ptr to)
        : mutation_reader_impl(to), _inner(std::move(r)), _maps(*_inner.schema(), *to) {
        check_same_keys(*_inner.schema(), *to);
    }

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            if (_inner.is_buffer_empty()) {
                if (_inner.is_end_of_stream()) {
                    _end_of_stream = true;
                    break;
                }
                co_await _inner.fill_buffer();
                continue;
            }
            while (!_inner.is_buffer_empty() && !is_buffer_full()) {
                auto f = convert(_inner.pop_mutation_fragment());
                // A row that held only cells of dropped columns is no row (as the sstable parser drops it).
                if (auto* cr = std::get_if<clustering_row>(&f);
                    cr && cr->cells.empty() && cr->marker.empty() && !cr->row_tombstone) {
                    continue;
                }
                push(std::move(f));
            }
        }
    }
    future<> next_partition() override {
        co_await _inner.next_partition();
        // The end of a window is not the end of the stream: the next partition may follow.
        _end_of_stream = _inner.done();
    }
    future<> fast_forward_to(const dht::partition_range& pr) override { return _inner.fast_forward_to(pr); }
    future<> fast_forward_to(position_range pr) override { return _inner.fast_forward_to(std::move(pr)); }
    future<> close() noexcept override { return _inner.close(); }

private:
    mutation_fragment convert(mutation_fragment f) {
        if (auto* sr = std::get_if<static_row>(&f)) {
            sr->cells = upgrade_row(sr->cells, _maps.statics, _schema->static_columns());
        } else if (auto* cr = std::get_if<clustering_row>(&f)) {
            cr->cells = upgrade_row(cr->cells, _maps.regulars, _schema->regular_columns());
        }
        return f;
    }

    mutation_reader _inner;
    row_mappings _maps;
};

} // namespace

mutation_reader make_upgrading_reader(mutation_reader r, schema_ptr to) {
    return mutation_reader(std::make_unique<upgrading_reader>(std::move(r), std::move(to)));
}

} // namespace reef
