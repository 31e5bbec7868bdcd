// tmpdir: a scratch directory, on a real disk unless asked otherwise (/var/tmp, so O_DIRECT
// is honoured), removed with everything in it when the object goes away.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace reef::testing {

class tmpdir {
public:
    // under: the directory it is made in (/dev/shm: a test of reads from memory).
    explicit tmpdir(const std::string& under = "/var/tmp") {
        std::string tmpl = under + "/reef-test-XXXXXX";
        if (!::mkdtemp(tmpl.data())) {
            throw std::runtime_error("mkdtemp " + tmpl + " failed");
        }
        _path = tmpl;
    }
    tmpdir(const tmpdir&) = delete;
    ~tmpdir() {
        std::error_code ec;
        std::filesystem::remove_all(_path, ec);
    }
    const std::string& path() const noexcept { return _path; }

private:
    std::string _path;
};

} // namespace reef::testing
