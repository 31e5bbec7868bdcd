// ring_position and partition_range: points and ranges on the token ring, the first
// argument of every read (one partition, a token range, everything).
#pragma once

#include "mutation/token.hh"

#include <optional>

namespace reef::dht {

// A decorated key, or a bare token standing before or after every key with
// that token (so ranges can start "at token t" without knowing a key).
class ring_position {
public:
    static ring_position for_key(decorated_key k) { return ring_position(k.get_token(), std::move(k), 0); }
    static ring_position before_token(token t) { return ring_position(t, std::nullopt, -1); }
    static ring_position after_token(token t) { return ring_position(t, std::nullopt, 1); }

    const token& get_token() const noexcept { return _token; }
    const std::optional<decorated_key>& key() const noexcept { return _key; }

    // <0, 0, >0 as this position is before, at or after the key.
    int compare(const decorated_key& k) const noexcept;

private:
    ring_position(token t, std::optional<decorated_key> k, int weight)
        : _token(t), _key(std::move(k)), _weight(weight) {}
    token _token;
    std::optional<decorated_key> _key;
    int _weight;
};

// A range of partitions; an absent bound is unbounded.
class partition_range {
public:
    struct bound {
        ring_position position;
        bool inclusive;
    };

    static partition_range full() { return partition_range(std::nullopt, std::nullopt); }
    // Holds k once: its end is its start.
    static partition_range singular(const decorated_key& k) {
        partition_range r(bound{ring_position::for_key(k), true}, std::nullopt);
        r._singular = true;
        return r;
    }
    partition_range(std::optional<bound> start, std::optional<bound> end) : _start(std::move(start)), _end(std::move(end)) {}

    const std::optional<bound>& start() const noexcept { return _start; }
    const std::optional<bound>& end() const noexcept { return _singular ? _start : _end; }
    bool is_singular() const noexcept;

    // Whether k is before the range's start, after its end, or inside.
    bool before(const decorated_key& k) const noexcept;
    bool after(const decorated_key& k) const noexcept;
    bool contains(const decorated_key& k) const noexcept { return !before(k) && !after(k); }

private:
    std::optional<bound> _start;
    std::optional<bound> _end;  // unused when _singular
    bool _singular = false;
};

} // namespace reef::dht
