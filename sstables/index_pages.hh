// What the index room needs from an sstable's components: the summary with tokens (index_summary) and the parser of
// Index.db pages into partition_index_page (the entry format is the sstables room's, index/ only searches).
#pragma once

#include "index/index_reader.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/summary.hh"
#include "sstables/version.hh"

#include <string>

namespace reef::sstables {

// A partition key's bytes decorated with their token (token: the sstable's partitioner; empty is Murmur3).
dht::decorated_key decorate_key(std::string key, const mx_fragment_consumer::token_function& token = {});

// The summary's points decorated with their tokens (token: the sstable's partitioner; empty is Murmur3);
// index_file_size ends the last page.
index::index_summary make_index_summary(const summary& s, uint64_t index_file_size, uint64_t data_length,
                                        const mx_fragment_consumer::token_function& token = {});

// Parses one page of version v's Index.db (file names it in errors), keys decorated by token (empty: Murmur3).
index::page_parser make_index_page_parser(sstable_version v, std::string file,
                                          mx_fragment_consumer::token_function token = {});

} // namespace reef::sstables
