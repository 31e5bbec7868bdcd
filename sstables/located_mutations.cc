// Located partitions parsed into mutations. See located_mutations.hh.
#include "sstables/located_mutations.hh"

#include "sstables/exceptions.hh"
#include "sstables/mx_parser.hh"
#include "sstables/schema_upgrade.hh"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>

namespace reef::sstables {

bool located_mutation_parser::serves(const sstable& sst, const schema& s, const clustering_ranges& slice) {
    return slice.size() == 1 && slice[0] == position_range::full() && header_matches(s, *sst.header());
}

located_mutation_parser::consumer::consumer(schema_ptr s, const sstable& sst, std::string_view file)
    // The token of the key checked equal to the located one is that key's (no second hash).
    : mx_fragment_consumer(std::move(s), *sst.header(), file, 1000,
                           [this](bytes_view) { return _expected->key.get_token(); }),
      _file(file) {
    // Rows built where the builder takes them: parse_into drains only between fragments.
    set_output(_parsed);
}

mx_consumer::proceed located_mutation_parser::consumer::consume_partition_start(bytes_view key, tombstone deletion,
                                                                                uint64_t position,
                                                                                uint64_t header_end) {
    if (++_starts > 1) {
        throw malformed_sstable_exception(_file, position,
                                          "a partition starts where the located one should end (the index gives " +
                                              std::to_string(_expected->range.end) + ")");
    }
    auto want = _expected->key.key().view();
    auto want_bytes = reinterpret_cast<const uint8_t*>(want.data());
    if (key.size() != want.size() || !std::equal(key.begin(), key.end(), want_bytes)) {
        throw malformed_sstable_exception(_file, position,
                                          "the partition here is not the one the index places here (token " +
                                              _expected->key.get_token().to_string() + ")");
    }
    return mx_fragment_consumer::consume_partition_start(key, deletion, position, header_end);
}

located_mutation_parser::located_mutation_parser(const sstable& sst, schema_ptr s)
    : _sst(sst), _file(sst.data_file().path()), _consumer(s, sst, _file), _builder(s) {}

void located_mutation_parser::parse_into(const located_partition& p, std::optional<mutation>& into) {
    _consumer.expect(p);
    _consumer.buffer().clear();
    mx_parser parser(*_sst.header(), _file, _consumer, p.range.start, p.range.end, mx_parser::start_at::partition);
    parser.feed(std::as_bytes(std::span<const char>(p.bytes.get(), p.bytes.size())));
    bool whole = false;
    bool fed_end = false;
    for (;;) {
        auto step = parser.run();
        if (step.what == parse_step::kind::need_more_data && !fed_end) {
            parser.feed_end_of_stream();  // the bytes are the whole range: the parser says whether it ended well
            fed_end = true;
            continue;
        }
        if (step.what != parse_step::kind::consumer_full && step.what != parse_step::kind::done) {
            throw malformed_sstable_exception(_file, parser.offset(), "the located partition's bytes end inside it");
        }
        // Stopped between fragments: what is buffered is whole.
        auto& parsed = _consumer.buffer();
        while (!parsed.empty()) {
            if (auto m = _builder.consume(parsed.take_front())) {
                whole = true;
                if (into) {
                    into->apply(*m);
                } else {
                    into = std::move(m);  // the one move of the mutation the builder made
                }
            }
        }
        if (step.what == parse_step::kind::done) {
            break;
        }
    }
    if (!whole) {
        throw malformed_sstable_exception(_file, p.range.start, "no whole partition in the located bytes");
    }
}

} // namespace reef::sstables
