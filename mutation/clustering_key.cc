// Building and copying out clustering prefixes. See clustering_key.hh.
#include "mutation/clustering_key.hh"

namespace reef {

std::vector<bytes> clustering_key_prefix::to_vector() const {
    std::vector<bytes> out;
    out.reserve(_n);
    for (auto c : components()) {
        out.emplace_back(c.begin(), c.end());
    }
    return out;
}

void clustering_key_prefix::push_back(bytes_view v) {
    if (!v.empty() && v.data() >= _buf.data() && v.data() < _buf.data() + _buf.size()) {
        // One of our own values: copied first, as the buffer may move.
        bytes copy(v.begin(), v.end());
        push_back(copy);
        return;
    }
    size_t old = _buf.size();
    if (old + 4 + v.size() > UINT32_MAX) {
        throw std::length_error("clustering_key_prefix: values too long");
    }
    uint32_t end = _n ? load_end(_buf.data(), _n - 1) : 0;
    // The values move up by one offset's width to make room for the new value's end offset.
    _buf.resize(old + 4 + v.size());
    uint8_t* p = _buf.data();
    std::memmove(p + 4 * (_n + 1), p + 4 * _n, old - 4 * _n);
    if (!v.empty()) {
        std::memcpy(p + 4 * (_n + 1) + end, v.data(), v.size());
    }
    end += uint32_t(v.size());
    std::memcpy(p + 4 * _n, &end, 4);
    ++_n;
}

} // namespace reef
