// Mutations to and from fragment streams. See mutation.hh.
#include "mutation/mutation.hh"

#include <fmt/core.h>

#include <stdexcept>
#include <utility>

namespace reef {

void mutation::apply(const mutation& o) {
    if (!(_key == o._key)) {
        throw std::invalid_argument("mutation::apply: different partitions (token " + _key.get_token().to_string() +
                                    " and " + o._key.get_token().to_string() + ")");
    }
    _partition.apply(*_schema, o._partition);
}

std::optional<mutation> mutation_partition_builder::consume(const mutation_fragment& f) {
    if (auto* ps = std::get_if<partition_start>(&f)) {
        if (_current) {
            throw std::invalid_argument("mutation_partition_builder: partition_start inside a partition");
        }
        _current.emplace(_schema, ps->key);
        _current->partition().apply(ps->partition_tombstone);
        _changes = range_tombstone_change_accumulator(_reversed);
        return std::nullopt;
    }
    if (!_current) {
        throw std::invalid_argument(std::string("mutation_partition_builder: ") + kind_name(f) + " outside a partition");
    }
    auto& p = _current->partition();
    const schema& s = *_schema;
    if (auto* sr = std::get_if<static_row>(&f)) {
        for (auto& [id, c] : sr->cells.cells()) {
            p.apply_static(s, id, c);
        }
    } else if (auto* cr = std::get_if<clustering_row>(&f)) {
        p.apply_row(s, cr->key, deletable_row{cr->marker, cr->row_tombstone, cr->cells});
    } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
        // Ranges are read through the list's own apply, so the stream's
        // change positions are checked as range bounds.
        range_tombstone_list ranges(s);
        _changes.consume(*rtc, ranges);
        for (auto& e : ranges) {
            p.apply_range_tombstone(e.start, e.end, e.tomb);
        }
    } else if (std::holds_alternative<partition_end>(f)) {
        if (!_changes.current().empty()) {
            throw std::invalid_argument("mutation_partition_builder: partition ends inside a range tombstone");
        }
        auto m = std::move(*_current);
        _current.reset();
        return m;
    }
    return std::nullopt;
}

std::optional<mutation> mutation_partition_builder::consume(mutation_fragment&& f) {
    if (auto* cr = std::get_if<clustering_row>(&f); cr && _current) {
        _current->partition().apply_row(*_schema, std::move(cr->key),
                                        deletable_row{cr->marker, cr->row_tombstone, std::move(cr->cells)});
        return std::nullopt;
    }
    return consume(std::as_const(f));
}

std::vector<mutation> mutations_from_fragments(schema_ptr s, const std::vector<mutation_fragment>& fragments,
                                               bool reversed) {
    mutation_partition_builder b(std::move(s), reversed);
    std::vector<mutation> out;
    for (auto& f : fragments) {
        if (auto m = b.consume(f)) {
            out.push_back(std::move(*m));
        }
    }
    return out;
}

mutation mutation_from_fragments(schema_ptr s, const std::vector<mutation_fragment>& fragments, bool reversed) {
    auto ms = mutations_from_fragments(std::move(s), fragments, reversed);
    if (ms.size() != 1) {
        throw std::invalid_argument("mutation_from_fragments: " + std::to_string(ms.size()) + " partitions, not one");
    }
    return std::move(ms.front());
}

std::vector<mutation_fragment> to_fragments(const mutation& m, bool reversed) {
    const schema& s = *m.schema();
    const auto& p = m.partition();
    std::vector<mutation_fragment> out;
    out.push_back(partition_start{m.decorated_key(), p.partition_tombstone()});
    if (!p.static_row().empty()) {
        out.push_back(static_row{p.static_row()});
    }
    // Rows and changes never share a position (a change sits before or
    // after a prefix, a row at its key), so the merge needs no tie rule.
    position_in_partition_comparator cmp(s, reversed);
    auto changes = p.range_tombstones().to_changes(reversed);
    auto ci = changes.begin();
    auto emit_row = [&](const clustering_key_prefix& key, const deletable_row& r) {
        auto pos = position_in_partition::for_key(key);
        while (ci != changes.end() && cmp(ci->position, pos) < 0) {
            out.push_back(std::move(*ci++));
        }
        out.push_back(clustering_row{key, r.marker, r.tomb, r.cells});
    };
    if (reversed) {
        for (auto it = p.rows().rbegin(); it != p.rows().rend(); ++it) {
            emit_row(it->first, it->second);
        }
    } else {
        for (auto& [key, r] : p.rows()) {
            emit_row(key, r);
        }
    }
    while (ci != changes.end()) {
        out.push_back(std::move(*ci++));
    }
    out.push_back(partition_end{});
    return out;
}

namespace {

std::string hex(std::string_view v) {
    std::string out;
    for (unsigned char c : v) {
        out += fmt::format("{:02x}", c);
    }
    return out;
}

std::string describe(tombstone t) {
    return t ? fmt::format("{{{}, {}}}", t.timestamp, t.deletion_time) : "{}";
}

std::string describe(const atomic_cell& c) {
    if (c.is_dead_marker()) {
        return fmt::format("dead@{}/{}", c.timestamp(), c.local_deletion_time());
    }
    if (c.is_expiring()) {
        return fmt::format("{}@{} ttl {} expiry {}", hex(c.value()), c.timestamp(), c.ttl(), c.local_deletion_time());
    }
    return fmt::format("{}@{}", hex(c.value()), c.timestamp());
}

std::string describe(const row& r, const std::vector<column_definition>& columns) {
    std::string out = "{";
    for (auto& [id, c] : r.cells()) {
        out += out.size() > 1 ? ", " : "";
        out += (id < columns.size() ? columns[id].name : std::to_string(id)) + ": ";
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            out += describe(*cell);
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        out += "[tomb " + describe(coll.tomb);
        for (auto& [path, cell] : coll.cells) {
            out += ", " + hex(to_string_view(path)) + "=" + describe(cell);
        }
        out += "]";
    }
    return out + "}";
}

} // namespace

std::string to_string(const mutation& m) {
    const schema& s = *m.schema();
    const auto& p = m.partition();
    std::string out = fmt::format("{{token {}, tomb {}, static {}", m.decorated_key().get_token().to_string(),
                                  describe(p.partition_tombstone()), describe(p.static_row(), s.static_columns()));
    for (auto& [key, r] : p.rows()) {
        out += fmt::format(", row {} marker {{{}, ttl {}, expiry {}}} tomb {} {}",
                           to_string(position_in_partition::for_key(key)), r.marker.timestamp, r.marker.ttl,
                           r.marker.expiry, describe(r.tomb), describe(r.cells, s.regular_columns()));
    }
    for (auto& r : p.range_tombstones()) {
        out += fmt::format(", range [{}, {}) {}", to_string(r.start), to_string(r.end), describe(r.tomb));
    }
    return out + "}";
}

} // namespace reef

