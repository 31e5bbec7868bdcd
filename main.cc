// The reef binary: `reef <subcommand> [options]`. With no subcommand (or options only) it runs the node, as
// `reef server` does; `reef help` lists the subcommands, `reef --version` prints the build's version and its
// allocator.
#include "node/node.hh"
#include "reef_version.hh"
#include "runtime/memory.hh"
#include "test/drivers/drivers.hh"
#include "test/perf/perf.hh"
#include "tools/nodetool.hh"
#include "tools/sstable_tool.hh"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

struct subcommand {
    const char* name;
    const char* help;
    int (*main)(int argc, char** argv);
};

constexpr const char* version_text = "reef " REEF_VERSION " (commit " REEF_COMMIT ")";

int server_main(int argc, char** argv) {
    return reef::node::node_main(argc, argv, REEF_VERSION);
}

const subcommand subcommands[] = {
    {"server", "run the node (what `reef` with no subcommand does; `reef server --help`)", server_main},
    {"perf-runtime", "benchmark of the shard runtime: coroutine calls, cross-shard calls, file reads",
     reef::perf::perf_runtime_main},
    {"perf-memtable", "benchmark of the memtable: inserts, bytes per row, full scans, single-partition reads",
     reef::perf::perf_memtable_main},
    {"perf-checked-read", "benchmark of Data.db's checked sources: scans and range reads per compressor",
     reef::perf::perf_checked_read_main},
    {"perf-compacting", "benchmark of the compacting reader: query and compaction modes over in-memory data",
     reef::perf::perf_compacting_main},
    {"perf-cache", "benchmark of the index caches: cached_file scans and random reads, partition_index_cache lookups",
     reef::perf::perf_cache_main},
    {"perf-sstable-scan", "benchmark of sstable full scans from memory: rows/s and MB/s per core, uncompressed and LZ4",
     reef::perf::perf_sstable_scan_main},
    {"perf-fast-forward", "ScyllaDB's perf_fast_forward: skips and slices through one large partition and many\n"
     "                     small ones, read from an sstable (--populate first)",
     reef::perf::perf_fast_forward_main},
    {"perf-delete-range", "RocksDB's DeleteRange workload (wide-column form) on Reef and RocksDB: ops/s, row counts,\n"
     "                     reef/rocksdb per phase",
     reef::perf::perf_delete_range_main},
    {"perf-sstable-write", "benchmark of memtable flushes to disk: rows/s and MB/s, uncompressed and LZ4,\n"
     "                     against plain write + fsync",
     reef::perf::perf_sstable_write_main},
    {"perf-commitlog", "benchmark of the commitlog: batch-mode entries/s with 1, 16 and 128 writers against write +\n"
     "                     fdatasync, periodic-mode MB/s against sequential writes",
     reef::perf::perf_commitlog_main},
    {"perf-multiget", "RocksDB's MultiGet experiment on Reef and RocksDB: µs per key of single gets, unbatched and\n"
     "                     batched multi-gets by batch size and key stride",
     reef::perf::perf_multiget_main},
    {"perf-compaction", "benchmark of major compaction: MB/s against a plain read-then-write copy, point-read\n"
     "                     p50/p99 during a compaction against none, write amplification of a sustained load",
     reef::perf::perf_compaction_main},
    {"crash-writer", "the crash test's driver: random writes acknowledged into an ack file until killed, and\n"
     "                     --verify against it (test/suites/crash_test.py)",
     reef::drivers::crash_writer_main},
    {"sstable", "tools for sstable files: dump-data, dump-index, dump-summary, dump-statistics,\n"
     "                     dump-compression-info, validate-checksums, validate, write, upgrade\n"
     "                     (`reef sstable --help`)",
     reef::tools::sstable_main},
    {"nodetool", "ScyllaDB's nodetool over a node's REST API: info, status, tablestats, flush, compact, snapshot,\n"
     "                     listsnapshots, drain, ... (`reef nodetool help`)",
     reef::tools::nodetool_main},
};

void usage(FILE* out) {
    std::fprintf(out, "usage: reef <subcommand> [options]\n\nsubcommands:\n");
    for (auto& s : subcommands) {
        std::fprintf(out, "  %-18s %s\n", s.name, s.help);
    }
    std::fprintf(out, "\n`reef <subcommand> --help` lists a subcommand's options. With no subcommand reef runs\n"
                      "the node: `reef [options]` is `reef server [options]`. `reef --version` prints the version.\n");
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        return server_main(argc, argv);
    }
    std::string_view cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        usage(stdout);
        return 0;
    }
    if (cmd == "--version") {
        std::printf("%s\nallocator: %s\n", version_text, reef::memory::allocator_name().c_str());
        return 0;
    }
    if (cmd.starts_with("-")) {
        return server_main(argc, argv);  // `reef --smp 2 ...`: the node's options, as `scylla --smp 2`
    }
    for (auto& s : subcommands) {
        if (cmd == s.name) {
            return s.main(argc - 1, argv + 1);
        }
    }
    std::fprintf(stderr, "reef: unknown subcommand '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
