// The JSON of `reef sstable dump-index`, `dump-summary` and `dump-compression-info`: one document per run,
// {"sstables": {"<Data.db path>": <what that sstable's component holds>}}, in the shape ScyllaDB's
// scylla-sstable prints for the same verbs, keys decoded with the serialization header's types when
// Statistics.db can be read.
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <string>
#include <vector>

namespace reef::tools {

future<std::string> dump_index_json(std::vector<sstables::descriptor> sstables);
future<std::string> dump_summary_json(std::vector<sstables::descriptor> sstables);
future<std::string> dump_compression_info_json(std::vector<sstables::descriptor> sstables);

} // namespace reef::tools
