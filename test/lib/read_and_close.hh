// read_and_close: a reader read to its end (its stream validated) and closed whatever happened, the way most
// sstable tests read.
#pragma once

#include "runtime/with_closeable.hh"
#include "test/lib/mutation_model.hh"

#include <vector>

namespace reef::testing {

// Everything r gives (validated), then r closed, whatever happened.
inline future<std::vector<mutation_fragment>> read_and_close(mutation_reader r, bool reversed = false) {
    return with_closeable(std::move(r), [reversed](mutation_reader& r) { return read_validated(r, reversed); });
}

} // namespace reef::testing
