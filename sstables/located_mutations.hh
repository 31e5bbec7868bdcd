// located_mutation_parser: a batch's small located partitions, their Data.db bytes read already, parsed straight into
// mutations (no reader, no slice filter): the whole partition, forward, of an sstable written under the read's schema.
#pragma once

#include "mutation/mutation.hh"
#include "reader/position_range.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/sstable.hh"

#include <cstdint>
#include <optional>
#include <string_view>

namespace reef::sstables {

class located_mutation_parser {
public:
    // Whether a read of sst under s with this (forward) slice may use the parser: the slice is the full one and sst's
    // header is s's columns (else the located reader, which slices and upgrades, serves it).
    static bool serves(const sstable& sst, const schema& s, const clustering_ranges& slice);

    // For sst under s, where serves() holds; sst must outlive the parser.
    located_mutation_parser(const sstable& sst, schema_ptr s);

    // The partition p locates, parsed from p.bytes (not empty): what make_located_sstable_reader gives for it, as a
    // mutation, put into `into` when that is empty, else merged into what it holds (the same key from another
    // sstable). Throws malformed_sstable_exception naming Data.db and the offset when the bytes do not hold exactly
    // that one partition (another key, a second partition, a truncated one); the parser is not used after a throw.
    void parse_into(const located_partition& p, std::optional<mutation>& into);

private:
    // The fragment consumer, told the located key: the Data.db key must be it, and its token is not computed again.
    class consumer final : public mx_fragment_consumer {
    public:
        consumer(schema_ptr s, const sstable& sst, std::string_view file);
        void expect(const located_partition& p) noexcept {
            _expected = &p;
            _starts = 0;
        }
        proceed consume_partition_start(bytes_view key, tombstone deletion, uint64_t position,
                                        uint64_t header_end) override;

    private:
        fragment_buffer _parsed;  // buffer(): rows are built in place there
        std::string_view _file;
        const located_partition* _expected = nullptr;
        unsigned _starts = 0;
    };

    const sstable& _sst;
    std::string_view _file;  // Data.db's path, for errors
    consumer _consumer;
    mutation_partition_builder _builder;
};

} // namespace reef::sstables
