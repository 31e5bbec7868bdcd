// mx_fragment_consumer: turns the Data.db parser's atoms into the fragment stream (partition_start, static_row,
// clustering_row, range_tombstone_change, partition_end) of a schema that matches the sstable's serialization
// header. Promises: one range_tombstone_change per marker (a boundary closes and opens at one position), and
// input the stream cannot express (a null inside a clustering key, a start bound without a deletion) is a
// malformed_sstable_exception naming the file and the offset.
#pragma once

#include "mutation/fragment.hh"
#include "mutation/token.hh"
#include "reader/mutation_reader.hh"
#include "schema/schema.hh"
#include "sstables/mx_consumer.hh"
#include "sstables/serialization_header.hh"

#include <concepts>
#include <functional>
#include <string>
#include <string_view>

namespace reef::sstables {

// A schema with the header's columns: the partition key "partition_key" (or "partition_key_<i>" for a
// composite), clustering columns "clustering_<i>" (DESC where the header type is reversed), and the static and
// regular columns with their names and types. Used when the table's own schema is not at hand (tools).
schema_ptr schema_from_header(const serialization_header& h, std::string keyspace = "ks", std::string table = "tbl");

// Orders a row's stored clustering values (a full key, or a compact table's prefix up to its first null) against a
// position as position_in_partition_comparator(s, reversed) orders the row's position against it, without building
// the row's clustering key: what a reader needs to decide, from the key alone, whether a row is wanted.
class row_position_comparator {
public:
    explicit row_position_comparator(const schema& s, bool reversed = false)
        : _types(s.clustering_types()), _reversed(reversed) {}
    // <0: the row sorts before pos, 0: it is at pos, >0: after it.
    int operator()(const clustering_values& row, const position_in_partition& pos) const;

private:
    std::vector<data_type> _types;
    bool _reversed;
};

class mx_fragment_consumer : public mx_consumer {
public:
    // The partition's token from its key bytes (the partitioner).
    using token_function = std::function<dht::token(bytes_view key)>;

    // s must have the header's columns in the same order (schema_from_header gives one); throws
    // std::invalid_argument otherwise. The consumer stops the parser once `max_buffered` fragments wait.
    // token: Murmur3 when empty (called directly, not through a std::function). file names the data in errors:
    // not copied, it must outlive the consumer (a temporary cannot).
    mx_fragment_consumer(schema_ptr s, const serialization_header& h, std::string_view file,
                         size_t max_buffered = 1000, token_function token = {});
    template <typename S>
        requires std::same_as<S, std::string>
    mx_fragment_consumer(schema_ptr, const serialization_header&, S&&, size_t = 1000, token_function = {}) = delete;
    // buffer() may be another object's (set_output).
    mx_fragment_consumer(const mx_fragment_consumer&) = delete;
    mx_fragment_consumer& operator=(const mx_fragment_consumer&) = delete;

    // Fragments produced and not yet taken: the consumer's own buffer, or the one given to set_output.
    fragment_buffer& buffer() noexcept { return *_out; }

    proceed consume_partition_start(bytes_view key, tombstone deletion, uint64_t position, uint64_t header_end) override;
    row_action consume_row_start(const mx_row& row) override;
    void consume_cell(const mx_cell& cell) override;
    void consume_complex_start(column_id column, tombstone tomb) override;
    void consume_complex_end() override;
    proceed consume_row_end(const mx_row& row) override;
    proceed consume_range_tombstone(const mx_marker& marker) override;
    proceed consume_partition_end(uint64_t end) override;

protected:
    // The fragments go into `out` (a reader's own buffer: built where the reader's caller takes them, not moved
    // there from the consumer's), and clustering rows are built in place in it. So the row being parsed is in
    // `out` before it is whole: nothing may take from `out` while the parser is inside a row (let it run until it
    // stops for a full consumer), and if the parse has to stop there (a read failed), detach_row first.
    void set_output(fragment_buffer& out) noexcept {
        _out = &out;
        _in_place = true;
    }
    // The row being built in place, if any, leaves `out` (which then holds whole fragments only); it is finished
    // outside it and pushed whole when it ends, should the parse go on.
    void detach_row() noexcept {
        if (_cur != &_row) {
            _row = std::move(*_cur);
            _out->pop_back();
            _cur = &_row;
        }
    }
    // While set, fragments are built but not pushed (a partition the reader does not want).
    bool _dropping = false;

private:
    template <typename Fragment>
    proceed push(Fragment&& f) {
        if (!_dropping) {
            _out->emplace_back(std::in_place_type<std::decay_t<Fragment>>, std::forward<Fragment>(f));
        }
        return full();
    }
    proceed full() const noexcept { return _out->size() >= _max_buffered ? proceed::no : proceed::yes; }
    void assign_key(clustering_key_prefix& key, const clustering_values& v, uint64_t position) const;
    clustering_key_prefix key_of(const clustering_values& v, uint64_t position) const;
    const column_definition& column(column_id id) const;

    schema_ptr _schema;
    std::string_view _file;
    size_t _max_buffered;
    token_function _token;
    // A vector drained in place: a deque of 200-byte fragments allocated a node every 2 rows.
    fragment_buffer _buffer;
    fragment_buffer* _out = &_buffer;
    bool _in_place = false;
    // The row being built: _row, or (in place) the last fragment of *_out.
    bool _static = false;
    uint64_t _row_position = 0;
    clustering_row _row;
    clustering_row* _cur = &_row;
    std::optional<std::pair<column_id, collection_cells>> _collection;
};

} // namespace reef::sstables
