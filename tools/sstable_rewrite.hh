// `reef sstable rewrite`: reads sstables with Reef's reader and writes each again with Reef's writer, as `me`,
// into another directory (same generation): the tool that puts our writer's output in front of other tools.
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <string>
#include <vector>

namespace reef::tools {

struct rewrite_options {
    std::string out_dir;
    bool uncompressed = false;
};

// Writes each sstable into opts.out_dir; returns one line per sstable written (its Data.db path).
future<std::string> rewrite_sstables(std::vector<sstables::descriptor> sstables, rewrite_options opts);

} // namespace reef::tools
