// write_memtable_sstable: a memtable written whole as one `me` sstable in a test's scratch directory, for the tests
// that open what they wrote. Promises the descriptor of the written sstable (generation 1).
#pragma once

#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/tmpdir.hh"

#include <cstdint>
#include <memory>

namespace reef::testing {

// min_index_interval: the summary's sampling (1: an entry per partition).
inline future<sstables::descriptor> write_memtable_sstable(const tmpdir& dir, const schema_ptr& s,
                                                           const std::shared_ptr<memtable>& mt,
                                                           uint32_t min_index_interval) {
    sstables::writer_options o;
    o.min_index_interval = min_index_interval;
    sstables::descriptor d{dir.path(), sstables::sstable_version::me, "1", "big"};
    auto w = make_memtable_reader(mt, s, read_options{});
    co_await sstables::write_sstable(w, s, d, o);
    co_await w.close();
    co_return d;
}

} // namespace reef::testing
