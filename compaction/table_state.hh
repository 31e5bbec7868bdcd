// table_state: what compaction needs of a table (db/table implements it): its sstable set, the purge bound, a
// writer for new sstables, and the one crash-safe swap of inputs for outputs. The manager never touches a table otherwise.
#pragma once

#include "mutation/token.hh"
#include "mutation/tombstone.hh"
#include "reader/mutation_reader.hh"
#include "runtime/future.hh"
#include "schema/schema.hh"
#include "sstables/sstable.hh"
#include "sstables/swap_log.hh"
#include "sstables/writer.hh"

#include <vector>

namespace reef::compaction {

class table_state {
public:
    virtual ~table_state() = default;
    virtual const schema_ptr& schema() const noexcept = 0;
    // The table's sstables now; changed only by flushes and replace_sstables.
    virtual const std::vector<sstables::shared_sstable>& sstable_set() const noexcept = 0;
    // The least write timestamp the memtables may hold (and, with a commitlog, its segments not discarded);
    // INT64_MAX when they hold nothing.
    virtual write_time::timestamp_type min_memtable_timestamp() const noexcept = 0;
    // The max-purgeable rule: the least min timestamp of what, outside `compacting`, may hold data of k (the
    // memtables holding k, the sstables whose bloom filter admits k, the commitlog's unflushed segments). A
    // tombstone or expired cell of k at or above it stays.
    virtual write_time::timestamp_type max_purgeable(const dht::decorated_key& k,
                                                     const std::vector<sstables::shared_sstable>& compacting) const = 0;
    // A descriptor for a new sstable of the table (the next generation).
    virtual sstables::descriptor new_sstable_descriptor() = 0;
    // Writes an sstable (sstables::write_sstable unless tests inject failures); a failure removes what it wrote.
    virtual future<sstables::written_sstable> write_sstable(mutation_reader& r, sstables::descriptor d,
                                                            sstables::writer_options o) = 0;
    // Step 1 of the crash-safe swap (sstables/swap_log.hh): records that `inputs` will be replaced by `outputs`
    // before any output is committed, in the table's directory.
    virtual future<sstables::sstable_swap> begin_swap(const std::vector<sstables::shared_sstable>& inputs,
                                                      const std::vector<sstables::descriptor>& outputs) = 0;
    // THE swap, once the log is committed: in one step (no suspension before it is done) `outputs` (opened) join
    // the set and `inputs` leave it; the row cache is kept (the data is the same) unless `may_have_purged`; then
    // the inputs are closed once their readers are. The log's finish() deletes their files.
    virtual future<> replace_sstables(std::vector<sstables::shared_sstable> inputs,
                                      std::vector<sstables::shared_sstable> outputs, bool may_have_purged) = 0;
};

} // namespace reef::compaction
