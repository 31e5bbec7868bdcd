// The full-scan reader of an mx sstable: a mutation_reader over the whole uncompressed Data.db stream (from a
// data_source: plain, CRC-checked or decompressing), parsed by mx_parser into fragments in file order. For
// compaction, validation and tools: it reads sequentially and uses no index, so partition ranges and
// next_partition are honoured by reading past what is not wanted.
#pragma once

#include "mutation/partition_range.hh"
#include "reader/mutation_reader.hh"
#include "runtime/input_stream.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_parser.hh"
#include "sstables/serialization_header.hh"

#include <functional>
#include <memory>
#include <string>

namespace reef::sstables {

// s must match the header's columns (schema_from_header gives one). data_length: the uncompressed stream's
// length (lengths reaching past it are refused at once). token: the partitioner (Murmur3 by default).
// No clustering-window forwarding: fast_forward_to(position_range) throws std::logic_error. start_offset: where
// src starts in Data.db (a partition's start: the partition-range reader parses only the index's byte range).
// start: mx_parser::start_at::inside_partition when src starts at an unfiltered of a partition (the reversed reader's
// jumps): the stream then has that partition's rows, markers and partition_end, but no partition_start.
// skip_row: asked for each clustering row's stored key as it is parsed (before anything else of the row is read):
// skip passes over the row unbuilt (it never reaches the stream); pause builds it, then ends the fill with it, so
// that the caller consumes what is parsed before more is. The caller decides from what it has consumed so far,
// which lags what is parsed: it must skip only rows that nothing later can want, and pauses at a row past where its
// current range ends, so its answers catch up.
enum class row_verdict { read, skip, pause };
using row_skip_function = std::function<row_verdict(const clustering_values&)>;
mutation_reader make_mx_full_scan_reader(schema_ptr s, std::shared_ptr<const serialization_header> header,
                                         data_source src, std::string file, uint64_t data_length,
                                         dht::partition_range range = dht::partition_range::full(),
                                         mx_fragment_consumer::token_function token = {}, uint64_t start_offset = 0,
                                         mx_parser::start_at start = mx_parser::start_at::partition,
                                         row_skip_function skip_row = {});

} // namespace reef::sstables
