// `reef sstable <verb> [options] <sstable>...`: tools that work on sstable files (ScyllaDB's scylla-sstable):
// each verb names its sstables by any of their component paths and prints its result (JSON) on stdout.
#pragma once

namespace reef::tools {

// argv[0] is "sstable"; argv[1] the verb.
int sstable_main(int argc, char** argv);

} // namespace reef::tools
