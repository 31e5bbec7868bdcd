// Clustering prefixes as the promoted index stores them. See clustering_bound.hh and FORMAT.md.
#include "sstables/clustering_bound.hh"

#include <array>

namespace reef::sstables {

namespace {
constexpr std::array<std::string_view, 8> kind_names{
    "excl_end_bound",   "incl_start_bound",   "excl_end_incl_start_boundary", "static_clustering",
    "clustering",       "incl_end_excl_start_boundary", "incl_end_bound", "excl_start_bound"};
} // namespace

std::string_view to_string(clustering_kind k) noexcept {
    return size_t(k) < kind_names.size() ? kind_names[size_t(k)] : "unknown";
}

position_in_partition clustering_bound::position() const {
    switch (kind) {
    case clustering_kind::clustering:
        return position_in_partition::for_key(prefix);
    case clustering_kind::incl_start_bound:
    case clustering_kind::excl_end_bound:
    case clustering_kind::excl_end_incl_start_boundary:
        return position_in_partition::before_key(prefix);
    case clustering_kind::excl_start_bound:
    case clustering_kind::incl_end_bound:
    case clustering_kind::incl_end_excl_start_boundary:
        return position_in_partition::after_key(prefix);
    case clustering_kind::static_clustering:
        break;
    }
    return position_in_partition::for_static_row();
}

clustering_key_prefix read_clustering_values(byte_reader& in, const std::vector<data_type>& types, size_t count) {
    std::vector<bytes> values;
    values.reserve(count);
    uint64_t header = 0;
    for (size_t i = 0; i < count; ++i) {
        if (i % 32 == 0) {
            header = in.read_unsigned_vint("a clustering block header");
        }
        unsigned shift = unsigned(i % 32) * 2;
        bool empty = (header >> shift) & 1;
        bool null = (header >> (shift + 1)) & 1;
        if (empty || null) {
            values.emplace_back();
            continue;
        }
        auto fixed = types[i]->value_length_if_fixed();
        auto v = fixed ? in.read_bytes(*fixed, "a clustering value") : in.read_vint_length_bytes("a clustering value");
        auto b = reinterpret_cast<const uint8_t*>(v.data());
        values.emplace_back(b, b + v.size());
    }
    return clustering_key_prefix(std::move(values));
}

clustering_bound read_clustering_bound(byte_reader& in, const std::vector<data_type>& types) {
    auto at = in.offset();
    auto k = in.read_u8("a clustering prefix kind");
    if (k > 7 || clustering_kind(k) == clustering_kind::static_clustering) {
        in.fail_at(at, "expected a clustering prefix kind (0..7 but not 3, static), found " + std::to_string(k));
    }
    clustering_bound b;
    b.kind = clustering_kind(k);
    size_t count = types.size();
    if (b.kind != clustering_kind::clustering) {
        auto size_at = in.offset();
        count = in.read_be<uint16_t>("a clustering bound size");
        if (count > types.size()) {
            in.fail_at(size_at, "expected a bound of at most " + std::to_string(types.size()) + " clustering values, found " +
                                    std::to_string(count));
        }
    }
    b.prefix = read_clustering_values(in, types, count);
    return b;
}

void write_clustering_values(std::string& out, const std::vector<data_type>& types, const clustering_key_prefix& p) {
    auto values = p.components();
    for (size_t start = 0; start < values.size(); start += 32) {
        size_t stop = std::min(values.size(), start + 32);
        uint64_t header = 0;
        for (size_t i = start; i < stop; ++i) {
            if (values[i].empty()) {
                header |= uint64_t(1) << ((i - start) * 2);
            }
        }
        utils::append_unsigned_vint(out, header);
        for (size_t i = start; i < stop; ++i) {
            if (values[i].empty()) {
                continue;
            }
            if (!types[i]->value_length_if_fixed()) {
                utils::append_unsigned_vint(out, values[i].size());
            }
            out.append(reinterpret_cast<const char*>(values[i].data()), values[i].size());
        }
    }
}

void write_clustering_bound(std::string& out, const std::vector<data_type>& types, const clustering_bound& b) {
    out.push_back(char(b.kind));
    if (b.kind != clustering_kind::clustering) {
        char n[2];
        utils::write_be_unchecked<uint16_t>(n, uint16_t(b.prefix.size()));
        out.append(n, 2);
    }
    write_clustering_values(out, types, b.prefix);
}

} // namespace reef::sstables
