// The swap log: writing it, committing it, finishing or aborting a swap, and recovery at start. See swap_log.hh.
#include "sstables/swap_log.hh"

#include "runtime/blocking.hh"
#include "runtime/file.hh"
#include "runtime/log.hh"
#include "sstables/sstable.hh"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace reef::sstables {

namespace {

logger slog("sstable_swap");

constexpr std::string_view txn_suffix = ".txn";
constexpr std::string_view log_suffix = ".log";
constexpr std::string_view tmp_suffix = ".tmp";

// The TOC.txt's file name, without its directory: the log names sstables wherever they are.
std::string toc_name(const descriptor& d) {
    return std::filesystem::path(d.filename(component_type::toc)).filename().string();
}

// A small file written and fsynced (blocking: run off the shard).
void write_durably(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::system_error(errno, std::generic_category(), "creating " + path);
    }
    size_t done = 0;
    while (done < text.size()) {
        auto n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            int e = errno;
            ::close(fd);
            throw std::system_error(e, std::generic_category(), "writing " + path);
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0) {
        int e = errno;
        ::close(fd);
        throw std::system_error(e, std::generic_category(), "fsync of " + path);
    }
    ::close(fd);
}

struct parsed_log {
    std::vector<std::string> inputs, outputs;
};

// "input <TOC name>" and "output <TOC name>" lines, then "end": a log without its end line is not ours.
parsed_log parse_log(const std::string& text, const std::string& path) {
    parsed_log out;
    size_t pos = 0;
    bool ended = false;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string::npos) {
            throw std::runtime_error(path + ": offset " + std::to_string(pos) + ": a line without its newline");
        }
        auto line = text.substr(pos, nl - pos);
        auto at = pos;
        pos = nl + 1;
        if (ended) {
            throw std::runtime_error(path + ": offset " + std::to_string(at) + ": text after the end line");
        }
        auto name_of = [&](std::string_view prefix) {
            auto name = line.substr(prefix.size());
            if (name.empty() || name.find('/') != std::string::npos || !name.ends_with("-TOC.txt")) {
                throw std::runtime_error(path + ": offset " + std::to_string(at) + ": expected a TOC.txt file name, found '" +
                                         name + "'");
            }
            return name;
        };
        if (line == "end") {
            ended = true;
        } else if (line.starts_with("input ")) {
            out.inputs.push_back(name_of("input "));
        } else if (line.starts_with("output ")) {
            out.outputs.push_back(name_of("output "));
        } else {
            throw std::runtime_error(path + ": offset " + std::to_string(at) + ": expected 'input', 'output' or 'end', found '" +
                                     line + "'");
        }
    }
    if (!ended) {
        throw std::runtime_error(path + ": no end line (the log is cut short)");
    }
    return out;
}

// Deletes the sstable whose TOC.txt is named `name` from each of `dirs` it has files in (its deletion is
// idempotent: a crash during it is finished by the next).
future<> delete_everywhere(const std::vector<std::string>& dirs, const std::string& name) {
    for (auto& dir : dirs) {
        auto d = descriptor::from_path(dir + "/" + name);
        co_await delete_sstable_files(d);
    }
}

} // namespace

std::string swap_log_directory(const std::string& dir) {
    return dir + "/pending_delete";
}

void sstable_swap::step(const std::string& name) const {
    if (_hook) {
        _hook(name);
    }
}

future<sstable_swap> sstable_swap::begin(std::string dir, std::vector<std::string> dirs, std::string id,
                                         std::vector<descriptor> inputs, std::vector<descriptor> outputs, hook h) {
    sstable_swap s;
    s._dir = swap_log_directory(dir);
    s._dirs = std::move(dirs);
    s._path = s._dir + "/swap-" + id + std::string(txn_suffix);
    s._inputs = std::move(inputs);
    s._outputs = std::move(outputs);
    s._hook = std::move(h);
    std::string text;
    for (auto& d : s._inputs) {
        text += "input " + toc_name(d) + "\n";
    }
    for (auto& d : s._outputs) {
        text += "output " + toc_name(d) + "\n";
    }
    text += "end\n";
    auto tmp = s._path + std::string(tmp_suffix);
    const std::string& final_path = s._path;
    const std::string& log_dir = s._dir;
    auto write = [&] {
        std::filesystem::create_directories(log_dir);
        write_durably(tmp, text);
        std::filesystem::rename(tmp, final_path);
    };
    co_await run_blocking(write);
    co_await sync_directory(dir);
    co_await sync_directory(s._dir);
    s.step("logged");
    co_return s;
}

future<> sstable_swap::commit() {
    auto committed = _path.substr(0, _path.size() - txn_suffix.size()) + std::string(log_suffix);
    co_await rename_file(_path, committed);
    co_await sync_directory(_dir);
    _path = committed;
    step("committed");
}

future<> sstable_swap::finish() {
    for (auto& d : _inputs) {
        co_await delete_everywhere(_dirs, toc_name(d));
        step("input deleted");
    }
    co_await remove_file(_path);
    co_await sync_directory(_dir);
    step("done");
}

future<> sstable_swap::abort() {
    for (auto& d : _outputs) {
        co_await delete_everywhere(_dirs, toc_name(d));
    }
    co_await remove_file(_path);
    co_await sync_directory(_dir);
}

future<swap_recovery> recover_swaps(std::string dir, std::vector<std::string> dirs,
                                    std::function<bool(const std::string& id)> owned) {
    swap_recovery r;
    auto log_dir = swap_log_directory(dir);
    if (!co_await file_exists(log_dir)) {
        co_return r;
    }
    const std::string& ld = log_dir;
    auto list = [&ld] {
        std::vector<std::string> names;
        for (auto& e : std::filesystem::directory_iterator(ld)) {
            names.push_back(e.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    };
    auto names = co_await run_blocking(list);
    for (auto& name : names) {
        auto path = log_dir + "/" + name;
        std::string_view base = name;
        bool tmp = base.ends_with(tmp_suffix);
        if (tmp) {
            base.remove_suffix(tmp_suffix.size());
        }
        bool txn = base.ends_with(txn_suffix), committed = base.ends_with(log_suffix);
        if (!base.starts_with("swap-") || (!txn && !committed)) {
            slog.warn("{}: not a swap log; left alone", path);
            continue;
        }
        auto id = std::string(base.substr(5, base.size() - 5 - 4));
        if (owned && !owned(id)) {
            continue;
        }
        if (tmp) {
            // Its rename never happened: no output was committed under it.
            co_await remove_file(path);
            ++r.temporary;
            slog.info("{}: removed an unfinished swap log (the swap had not started)", path);
            continue;
        }
        auto text = co_await read_entire_file(path);
        auto log = parse_log(text, path);
        auto& victims = committed ? log.inputs : log.outputs;
        for (auto& v : victims) {
            co_await delete_everywhere(dirs, v);
        }
        co_await remove_file(path);
        co_await sync_directory(log_dir);
        if (committed) {
            ++r.completed;
            slog.info("{}: completed a committed swap: deleted its {} inputs, kept its {} outputs", path,
                      log.inputs.size(), log.outputs.size());
        } else {
            ++r.rolled_back;
            slog.info("{}: rolled back an uncommitted swap: deleted its {} outputs, kept its {} inputs", path,
                      log.outputs.size(), log.inputs.size());
        }
    }
    co_return r;
}

} // namespace reef::sstables
