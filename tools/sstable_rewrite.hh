// `reef sstable upgrade` (and its older spelling `rewrite`): reads sstables of any version Reef reads (mc, md,
// me, na, nb) with Reef's reader and writes each again with Reef's writer as `me`: the same partitions, rows and
// tombstones, partitioner, encoding stats, bloom filter chance and compression (algorithm and chunk length).
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

// `rewrite`: each sstable into opts.out_dir, same generation, LZ4 (or uncompressed); one line per sstable
// written (its Data.db path).
future<std::string> rewrite_sstables(std::vector<sstables::descriptor> sstables, rewrite_options opts);

struct upgrade_options {
    // Where the `me` sstables go; empty: each beside its source (which stays; remove it once the new one is
    // in use).
    std::string output_dir;
    // Also rewrite sstables that are `me` already (skipped otherwise).
    bool all = false;
    // Data.db uncompressed (CRC.db) whatever the source's compression.
    bool uncompressed = false;
};

// `upgrade`: each sstable whose version is not `me` (every one with opts.all) written as `me`, keeping its
// generation when no sstable of the output directory has it, else the next free one. oa (Cassandra 5.0) is
// refused: its deletion times may lie past what me's signed 32-bit fields hold. One line per sstable: "source -> written Data.db", or why not.
future<std::string> upgrade_sstables(std::vector<sstables::descriptor> sstables, upgrade_options opts);

} // namespace reef::tools
