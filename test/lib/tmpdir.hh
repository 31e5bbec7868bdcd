// tmpdir: a scratch directory on a real disk (/var/tmp, so O_DIRECT is honoured),
// removed with everything in it when the object goes away.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace reef::testing {

class tmpdir {
public:
    tmpdir() {
        std::string tmpl = "/var/tmp/reef-test-XXXXXX";
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
