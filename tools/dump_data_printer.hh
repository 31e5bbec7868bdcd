// dump_data_printer: the JSON of `reef sstable dump-data` (sstabledump -t's structure and bytes) piece by piece:
// partition headers, rows with their cells, range tombstone markers. dump-data feeds it parser atoms; `query`
// feeds it a reader's fragments (print_fragments_json), so both print the same structure.
#pragma once

#include "mutation/fragment.hh"
#include "sstables/mx_consumer.hh"
#include "sstables/serialization_header.hh"
#include "tools/jackson_printer.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reef::tools {

// One entry of a row's "cells": a cell, or a complex column's deletion (complex_deletion, with tomb).
struct dump_cell {
    bool complex_deletion = false;
    column_id column = 0;
    bytes path;
    write_time::timestamp_type timestamp = write_time::missing_timestamp;
    int32_t ttl = 0;
    deletion_time_type ldt = no_deletion_time;
    bool deleted = false, expiring = false;
    bytes value;
    tombstone tomb;
};

// Calls must follow the stream: partition_header, then rows and markers, then partition_end. A position is
// printed where given (dump-data's Data.db offsets) and left out where not (fragments carry none).
class dump_data_printer {
public:
    // now: the clock (seconds) the "expired" flags compare with.
    dump_data_printer(const sstables::serialization_header& h, jackson_printer& j, int64_t now)
        : _h(h), _j(j), _now(now) {}

    // Opens the partition's object and its "rows" array.
    void partition_header(bytes_view key, const tombstone& deletion, std::optional<uint64_t> position);
    void partition_end();
    // A row ("static_block" when is_static; ck is then ignored). A clustering row's key shorter than the
    // clustering columns prints its missing values as "*" (bounds do), a null one as null (compact tables).
    void row(bool is_static, const sstables::clustering_values& ck, const row_marker& marker, const tombstone& deletion,
             const std::vector<dump_cell>& cells, std::optional<uint64_t> position);
    // A range tombstone bound or boundary; for a boundary `tomb` is the one it closes, `boundary_start_tomb` the
    // one it opens. Missing values of a bound's prefix print as "*".
    void range_tombstone(sstables::mx_bound_kind kind, const sstables::clustering_values& ck, const tombstone& tomb,
                         const tombstone& boundary_start_tomb);

private:
    void deletion(const tombstone& t);
    void clustering(const sstables::clustering_values& ck);
    void bound(bool start, bool inclusive, const sstables::clustering_values& ck, const tombstone& t);
    void cell(const row_marker& marker, const sstables::serialization_header_column& col, const dump_cell& c);

    const sstables::serialization_header& _h;
    jackson_printer& _j;
    int64_t _now;
};

// A fragment stream (whole partitions, forward or, with reversed, as a reversed reader gives it) printed as
// dump-data prints those partitions: one JSON array and a newline, without positions. Nothing is applied:
// tombstones, shadowed and expired data print as they are. A range_tombstone_change becomes the bound or
// boundary marker it stands for (a reversed stream's changes are read back in forward terms); a change to the
// tombstone already in force prints nothing (readers drop those: a file's boundary between two equal
// tombstones, which dump-data prints, does not reach a query). The header gives the types and column names (the fragments' schema must have
// its columns, as schema_from_header's).
std::string print_fragments_json(const sstables::serialization_header& h, const std::vector<mutation_fragment>& fragments,
                                 int64_t now, bool reversed = false);

} // namespace reef::tools
