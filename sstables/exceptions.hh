// The errors the sstable room throws: each names the file, the byte offset and what was expected there,
// so that a corrupt or truncated sstable is reported, never crashed on.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace reef::sstables {

class malformed_sstable_exception : public std::runtime_error {
public:
    // "<file>: at offset <offset>: <what>"
    malformed_sstable_exception(std::string_view file, uint64_t offset, const std::string& what)
        : std::runtime_error(std::string(file) + ": at offset " + std::to_string(offset) + ": " + what), _file(file),
          _offset(offset) {}
    // For problems that have no single offset (a missing component, a bad TOC).
    malformed_sstable_exception(std::string_view file, const std::string& what)
        : std::runtime_error(std::string(file) + ": " + what), _file(file) {}

    const std::string& file() const noexcept { return _file; }
    uint64_t offset() const noexcept { return _offset; }

private:
    std::string _file;
    uint64_t _offset = 0;
};

} // namespace reef::sstables
