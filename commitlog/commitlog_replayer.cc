// Commitlog replay: segments in id order, entries through scan_segment. See commitlog_replayer.hh.
#include "commitlog/commitlog_replayer.hh"

#include "commitlog/segment_format.hh"
#include "runtime/blocking.hh"
#include "runtime/file.hh"
#include "runtime/log.hh"
#include "runtime/reactor.hh"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

namespace reef::commitlog {

static logger rplog("commitlog_replayer");

namespace {
// Padding runs end at boundaries of the smallest write alignment (FORMAT.md).
constexpr size_t min_block = 512;
} // namespace

future<std::vector<std::string>> commitlog_replayer::list_segments(std::string directory, unsigned shard) {
    const std::string& dir = directory;
    auto found = co_await run_blocking([&dir, shard] {
        std::vector<std::pair<uint64_t, std::string>> out;
        for (auto& e : std::filesystem::directory_iterator(dir)) {
            if (auto id = parse_segment_file_name(e.path().filename().string()); id && id->shard == shard) {
                out.emplace_back(id->segment_id, e.path().string());
            }
        }
        std::sort(out.begin(), out.end());
        return out;
    });
    std::vector<std::string> paths;
    for (auto& [id, p] : found) {
        paths.push_back(std::move(p));
    }
    co_return paths;
}

future<replay_stats> commitlog_replayer::replay(std::string directory, unsigned shard, callback cb) {
    auto paths = co_await list_segments(std::move(directory), shard);
    co_return co_await replay_files(std::move(paths), std::move(cb));
}

future<replay_stats> commitlog_replayer::replay_files(std::vector<std::string> paths, callback cb) {
    replay_stats stats;
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::string& path = paths[i];
        auto name = std::filesystem::path(path).filename().string();
        auto id = parse_segment_file_name(name);
        if (!id) {
            throw segment_format_error(fmt::format("commitlog segment {}: not a segment file name", path));
        }
        if (id->version != format_version) {
            throw segment_format_error(fmt::format("commitlog segment {}: format version {} in its name (this build reads {})",
                                                   path, id->version, format_version));
        }
        auto contents = co_await read_entire_file(path);
        bytes_view file(reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
        std::vector<segment_entry> entries;
        bool last = i + 1 == paths.size();
        auto seg = scan_segment(
            path, id->segment_id, file, min_block, last, [&](const segment_entry& e) { entries.push_back(e); },
            [&](size_t offset, const std::string& what) {
                rplog.warn("commitlog segment {} offset {}: {}", path, offset, what);
            });
        ++stats.segments;
        stats.corrupt += seg.corrupt;
        stats.bytes += seg.bytes;
        if (seg.torn_tail) {
            ++stats.torn_tails;
            rplog.info("commitlog segment {}: torn tail after {} entries (a write in flight at a crash)", path, seg.entries);
        }
        size_t n = 0;
        for (auto& e : entries) {
            replay_entry re{e.table, e.position, e.data};
            bool applied = co_await cb(re);
            ++(applied ? stats.replayed : stats.skipped);
            if (++n % 64 == 0) {
                co_await yield();  // ready callbacks would grow the stack in debug builds (coroutine rule 5)
            }
        }
    }
    co_return stats;
}

} // namespace reef::commitlog
