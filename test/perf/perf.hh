// Entry points of the benchmarks built into the reef binary (`reef perf-*`).
// Each parses its own options and returns the process exit status.
#pragma once

namespace reef::perf {

int perf_runtime_main(int argc, char** argv);
int perf_memtable_main(int argc, char** argv);
int perf_checked_read_main(int argc, char** argv);
int perf_compacting_main(int argc, char** argv);
int perf_cache_main(int argc, char** argv);
int perf_sstable_scan_main(int argc, char** argv);
int perf_fast_forward_main(int argc, char** argv);
int perf_delete_range_main(int argc, char** argv);
int perf_sstable_write_main(int argc, char** argv);
int perf_commitlog_main(int argc, char** argv);
int perf_multiget_main(int argc, char** argv);
int perf_compaction_main(int argc, char** argv);

} // namespace reef::perf
