// Cassandra 5.0's vector<T, N> (VectorType): its type object and its two serialized forms, fixed-length elements
// back to back or variable-length ones each behind an unsigned vint length.

#include "schema/types.hh"
#include "utils/vint.hh"

#include <fmt/format.h>

#include <stdexcept>

namespace reef {

vector_type_impl::vector_type_impl(data_type element, uint32_t dimension)
    : abstract_type(type_kind::vector, false, std::vector<data_type>{element->freeze()})
    , _dimension(dimension) {
    if (dimension == 0 || dimension > uint32_t(INT32_MAX)) {
        // VectorType's constructor says it so (with its typo); Java's int bounds the dimension.
        throw std::invalid_argument(fmt::format("vectors may only have positive dimentions; given {}", int64_t(dimension)));
    }
}

data_type vector_type(data_type element, uint32_t dimension) {
    return std::make_shared<const vector_type_impl>(std::move(element), dimension);
}

bytes serialize_vector(const abstract_type& vector, const std::vector<bytes>& elements) {
    auto& et = *vector.element_type();
    if (elements.size() != vector.vector_dimension()) {
        throw marshal_exception(
            fmt::format("Required {} elements, but saw {}", vector.vector_dimension(), elements.size()));
    }
    auto fixed = et.value_length_if_fixed();
    bytes out;
    for (auto& e : elements) {
        if (fixed) {
            if (e.size() != *fixed) {
                throw marshal_exception(fmt::format("a {} element of {} bytes, not {}", et.cql_name(), e.size(), *fixed));
            }
        } else {
            std::string len;
            utils::append_unsigned_vint(len, e.size());
            out.insert(out.end(), len.begin(), len.end());
        }
        out.insert(out.end(), e.begin(), e.end());
    }
    return out;
}

std::vector<bytes_view> split_vector(const abstract_type& vector, bytes_view v) {
    auto& et = *vector.element_type();
    uint32_t n = vector.vector_dimension();
    auto fixed = et.value_length_if_fixed();
    // The size bounds N (exactly N fixed lengths, or at least a length byte per element), so the huge N of a bad
    // class name fails here, before anything is allocated for it.
    if (fixed ? uint64_t(*fixed) * n != v.size() : n > v.size()) {
        throw marshal_exception(fmt::format("{} bytes cannot hold a {}", v.size(), vector.cql_name()));
    }
    std::vector<bytes_view> out;
    out.reserve(n);
    size_t pos = 0;
    for (uint32_t i = 0; i < n; ++i) {
        size_t len;
        if (fixed) {
            len = *fixed;
        } else {
            auto d = utils::try_decode_unsigned_vint(std::as_bytes(v.subspan(pos)));
            if (!d) {
                throw marshal_exception(fmt::format("Not enough bytes to read the length of vector element {}", i));
            }
            pos += d->length;
            if (d->value > v.size() - pos) {
                throw marshal_exception(fmt::format("Not enough bytes to read vector element {}", i));
            }
            len = size_t(d->value);
        }
        if (len > v.size() - pos) {
            throw marshal_exception(fmt::format("Not enough bytes to read vector element {}", i));
        }
        auto e = v.subspan(pos, len);
        et.validate(e);
        out.push_back(e);
        pos += len;
    }
    if (pos != v.size()) {
        throw marshal_exception("Unexpected extraneous bytes after vector value");
    }
    return out;
}

} // namespace reef
