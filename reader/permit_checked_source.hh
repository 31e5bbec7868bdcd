// permit_checked_source: a data source that checks its read's deadline before each read it passes on and charges
// the buffer it last handed out to the read's permit. What a reader wraps its file sources in.
#pragma once

#include "reader/reader_permit.hh"
#include "runtime/input_stream.hh"

#include <concepts>
#include <string>
#include <string_view>

namespace reef {

// Before every get() and skip() of src, permit.check_timeout(file) (read_timeout_error naming file once the
// deadline has passed: no new read starts). The last buffer returned stays charged to the permit (its size)
// until the next one replaces it or the source is closed: a parser holds one input buffer at a time. file is not
// copied: it must outlive the source (a temporary cannot).
data_source make_permit_checked_source(data_source src, reader_permit permit, std::string_view file);
template <typename S>
    requires std::same_as<S, std::string>
data_source make_permit_checked_source(data_source src, reader_permit permit, S&& file) = delete;

} // namespace reef
