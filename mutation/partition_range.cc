// Ring positions and partition ranges. See partition_range.hh.
#include "mutation/partition_range.hh"

namespace reef::dht {

int ring_position::compare(const decorated_key& k) const noexcept {
    if (_key) {
        auto c = *_key <=> k;
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (_token != k.get_token()) {
        return _token < k.get_token() ? -1 : 1;
    }
    return _weight;
}

bool partition_range::is_singular() const noexcept {
    if (_singular) {
        return true;
    }
    return _start && _end && _start->position.key() && _end->position.key() && *_start->position.key() == *_end->position.key();
}

bool partition_range::before(const decorated_key& k) const noexcept {
    if (!_start) {
        return false;
    }
    int c = _start->position.compare(k);
    return c > 0 || (c == 0 && !_start->inclusive);
}

bool partition_range::after(const decorated_key& k) const noexcept {
    auto& end = this->end();
    if (!end) {
        return false;
    }
    int c = end->position.compare(k);
    return c < 0 || (c == 0 && !end->inclusive);
}

} // namespace reef::dht
