// swap_log: the crash-safe replacement of sstables by others (a compaction's swap) through a log file in the
// table's directory; a crash at any point leaves, once recover_swaps has run, the inputs or the outputs, never both.
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace reef::sstables {

// The protocol (FORMAT.md, "Crash-safe swaps"): Cassandra's transaction log (ADD and REMOVE records, then
// COMMIT) with ScyllaDB's pending-delete log as its committed form.
//   1. begin: `<dir>/pending_delete/swap-<id>.txn` lists the inputs' and the outputs' TOC.txt names (written as
//      .tmp, fsynced, renamed, the directory fsynced), before any output is committed.
//   2. the caller writes the outputs (each committed by its TOC.txt rename) and deletes an empty one.
//   3. commit: .txn renamed to .log and the directory fsynced: from here the swap is decided.
//   4. finish: every input deleted (delete_sstable_files, in whichever directory it is), then the log removed.
// abort (instead of 3): the outputs deleted, then the log removed.
// recover_swaps at start: a .txn is rolled back (outputs deleted), a .log rolled forward (inputs deleted).
class sstable_swap {
public:
    // Called after each step with its name ("logged", the caller's "outputs written", "committed", "input
    // deleted" per input, "done"): tests
    // throw injected_crash from it to leave the files as a crash at that point would.
    using hook = std::function<void(const std::string& step)>;

    // Step 1. `dir`: the table's first directory (the log's home); `dirs`: every directory of the table (where
    // the inputs and outputs may be). `id` names the log: the owner decides which logs it recovers by it.
    static future<sstable_swap> begin(std::string dir, std::vector<std::string> dirs, std::string id,
                                      std::vector<descriptor> inputs, std::vector<descriptor> outputs,
                                      hook h = {});
    sstable_swap(sstable_swap&&) noexcept = default;
    sstable_swap& operator=(sstable_swap&&) noexcept = default;

    future<> commit();
    future<> finish();
    // Before commit only.
    future<> abort();

    const std::string& log_path() const noexcept { return _path; }
    // Calls the hook: the caller's own steps too ("outputs written").
    void step(const std::string& name) const;

private:
    sstable_swap() = default;

    std::string _dir;
    std::vector<std::string> _dirs;
    std::string _path;  // the .txn, then the .log
    std::vector<descriptor> _inputs;
    std::vector<descriptor> _outputs;
    hook _hook;
};

// Thrown by a test's hook: the code that sees it leaves everything as it is (no rollback), as a crash would.
struct injected_crash : std::runtime_error {
    injected_crash() : std::runtime_error("injected crash") {}
};

// The subdirectory of a table directory holding its swap logs.
std::string swap_log_directory(const std::string& dir);

struct swap_recovery {
    unsigned rolled_back = 0;   // .txn: outputs deleted
    unsigned completed = 0;     // .log: inputs deleted
    unsigned temporary = 0;     // .tmp logs removed (a begin that did not finish: nothing was committed)
};

// Completes or rolls back the swaps whose logs `dir`'s pending_delete/ holds (only those whose id `owned` accepts,
// all when empty), deleting sstables in any of `dirs`; logs what it does. Run before the sstables are loaded (and
// before remove_partial_sstables, which then removes the deletions' own leftovers). A log that cannot be parsed
// is an error naming it (std::runtime_error): nothing is guessed.
future<swap_recovery> recover_swaps(std::string dir, std::vector<std::string> dirs,
                                    std::function<bool(const std::string& id)> owned = {});

} // namespace reef::sstables
