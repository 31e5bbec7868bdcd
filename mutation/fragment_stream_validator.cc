// Checking the fragment stream's rules. See fragment_stream_validator.hh.
#include "mutation/fragment_stream_validator.hh"

#include <fmt/core.h>

namespace reef {

fragment_stream_validator::fragment_stream_validator(const schema& s, bool reversed) : _cmp(s, reversed) {}

void fragment_stream_validator::fail(const mutation_fragment& f, const std::string& why) const {
    throw invalid_fragment_stream(fmt::format("invalid fragment stream at fragment {} ({} at {}): {}", _count,
                                              kind_name(f), to_string(position_of(f)), why));
}

void fragment_stream_validator::operator()(const mutation_fragment& f) {
    ++_count;
    if (auto* ps = std::get_if<partition_start>(&f)) {
        if (_in_partition) {
            fail(f, "partition_start inside a partition (no partition_end before it)");
        }
        if (_last_key && !(*_last_key < ps->key)) {
            fail(f, fmt::format("partition out of order: token {} after token {}", ps->key.get_token().to_string(),
                                _last_key->get_token().to_string()));
        }
        _last_key = ps->key;
        _in_partition = true;
        _last_pos = position_in_partition::for_partition_start();
        _last_was_row = false;
        _active = {};
        return;
    }
    if (!_in_partition) {
        fail(f, "fragment outside a partition");
    }
    auto pos = position_of(f);
    int c = _cmp(*_last_pos, pos);
    if (c > 0) {
        fail(f, fmt::format("position goes backwards (previous {})", to_string(*_last_pos)));
    }
    if (std::holds_alternative<static_row>(f) && c == 0) {
        fail(f, "a second static row");
    }
    bool is_row = std::holds_alternative<clustering_row>(f);
    if (is_row && c == 0 && _last_was_row) {
        fail(f, "two rows with the same key");
    }
    if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
        if (rtc->position.region() != partition_region::clustered || rtc->position.weight() == bound_weight::equal) {
            fail(f, "a range tombstone change must sit before or after a clustering prefix");
        }
        _active = rtc->tomb;
    }
    if (std::holds_alternative<partition_end>(f)) {
        if (!_active.empty()) {
            fail(f, "partition ends while a range tombstone is in force (no closing range_tombstone_change)");
        }
        _in_partition = false;
    }
    _last_pos = std::move(pos);
    _last_was_row = is_row;
}

void fragment_stream_validator::on_end_of_stream() const {
    if (_in_partition) {
        throw invalid_fragment_stream(
            fmt::format("invalid fragment stream: it ends inside a partition (after {} fragments)", _count));
    }
}

} // namespace reef
