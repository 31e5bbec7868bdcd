#include "cql/paging_state.hh"

#include "cql/cql_error.hh"
#include "utils/big_endian.hh"

#include <fmt/format.h>

namespace reef::cql {

namespace {

constexpr uint8_t magic = 0x52;  // 'R'
constexpr uint8_t version = 1;

template <typename T>
void put(bytes& out, T v) {
    char b[sizeof(T)];
    utils::write_be_unchecked<T>(b, v);
    out.insert(out.end(), b, b + sizeof(T));
}

void put_bytes(bytes& out, bytes_view v) {
    put<uint32_t>(out, uint32_t(v.size()));
    out.insert(out.end(), v.begin(), v.end());
}

class reader {
public:
    explicit reader(bytes_view b) : _b(b) {}
    template <typename T>
    T get(const char* what) {
        need(sizeof(T), what);
        T v = utils::read_be_unchecked<T>(reinterpret_cast<const char*>(_b.data() + _pos));
        _pos += sizeof(T);
        return v;
    }
    bytes get_bytes(const char* what) {
        auto n = get<uint32_t>(what);
        need(n, what);
        bytes v(_b.begin() + ptrdiff_t(_pos), _b.begin() + ptrdiff_t(_pos + n));
        _pos += n;
        return v;
    }
    void need(size_t n, const char* what) const {
        if (_b.size() - _pos < n) {
            fail(fmt::format("{} truncated", what));
        }
    }
    [[noreturn]] void fail(const std::string& why) const {
        throw cql_error(error_code::protocol_error,
                        fmt::format("Invalid value for the paging state: {} at offset {} of {} bytes", why, _pos,
                                    _b.size()));
    }
    bool at_end() const { return _pos == _b.size(); }

private:
    bytes_view _b;
    size_t _pos = 0;
};

} // namespace

bytes encode_paging_state(const paging_state& ps) {
    bytes out;
    out.push_back(magic);
    out.push_back(version);
    put_bytes(out, ps.partition_key);
    if (ps.clustering) {
        put<uint16_t>(out, uint16_t(ps.clustering->size() + 1));
        for (auto& c : *ps.clustering) {
            put_bytes(out, c);
        }
    } else {
        put<uint16_t>(out, 0);
    }
    put<uint64_t>(out, ps.partition_rows);
    put<uint64_t>(out, ps.remaining);
    return out;
}

paging_state decode_paging_state(bytes_view b) {
    reader r(b);
    if (r.get<uint8_t>("magic") != magic) {
        r.fail("not a Reef paging state (bad first byte)");
    }
    if (auto v = r.get<uint8_t>("version"); v != version) {
        r.fail(fmt::format("unknown version {}", v));
    }
    paging_state ps;
    ps.partition_key = r.get_bytes("partition key");
    if (auto n = r.get<uint16_t>("clustering count"); n > 0) {
        ps.clustering.emplace();
        for (uint16_t i = 1; i < n; ++i) {
            ps.clustering->push_back(r.get_bytes("clustering value"));
        }
    }
    ps.partition_rows = r.get<uint64_t>("partition rows");
    ps.remaining = r.get<uint64_t>("remaining rows");
    if (!r.at_end()) {
        r.fail("trailing bytes");
    }
    return ps;
}

} // namespace reef::cql
