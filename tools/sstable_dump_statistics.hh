// The JSON of `reef sstable dump-statistics`: {"sstables": {"<Data.db path>": {...}}} with everything
// Statistics.db holds: its table of contents, validation, compaction, stats and serialization header parts.
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <string>
#include <vector>

namespace reef::tools {

future<std::string> dump_statistics_json(std::vector<sstables::descriptor> sstables);

} // namespace reef::tools
