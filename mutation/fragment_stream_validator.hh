// fragment_stream_validator: checks that a stream of fragments keeps the stream's rules,
// and names the first fragment that breaks one. Every reader in every test runs through it.
#pragma once

#include "mutation/fragment.hh"
#include "schema/schema.hh"

#include <optional>
#include <stdexcept>
#include <string>

namespace reef {

class invalid_fragment_stream : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The rules: partitions in increasing (token, key) order, each opened by
// partition_start and closed by partition_end; inside one, at most one
// static row, before anything clustered; clustered fragments in
// non-decreasing position order (rows strictly increasing); and no range
// tombstone still in force at partition_end. A reversed stream is checked
// with the reversed clustering order (partitions stay in token order).
class fragment_stream_validator {
public:
    explicit fragment_stream_validator(const schema& s, bool reversed = false);

    // Throws invalid_fragment_stream describing the problem and the fragment.
    void operator()(const mutation_fragment& f);
    // The stream ended: it must not be inside a partition.
    void on_end_of_stream() const;

    size_t fragments_seen() const noexcept { return _count; }

private:
    [[noreturn]] void fail(const mutation_fragment& f, const std::string& why) const;

    position_in_partition_comparator _cmp;
    std::optional<dht::decorated_key> _last_key;
    bool _in_partition = false;
    std::optional<position_in_partition> _last_pos;
    bool _last_was_row = false;
    tombstone _active;
    size_t _count = 0;
};

} // namespace reef
