// A shard's commitlog: segments, switching, back-pressure, discards, the periodic sync. See commitlog.hh.
#include "commitlog/commitlog.hh"

#include "commitlog/segment.hh"
#include "commitlog/segment_format.hh"
#include "runtime/blocking.hh"
#include "runtime/file.hh"
#include "runtime/log.hh"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace reef::commitlog {

static logger cllog("commitlog");

sync_mode parse_sync_mode(std::string_view s) {
    if (s == "periodic") {
        return sync_mode::periodic;
    }
    if (s == "batch") {
        return sync_mode::batch;
    }
    throw std::invalid_argument(fmt::format("commitlog_sync: '{}' is neither 'periodic' nor 'batch'", s));
}

namespace {

struct existing_files {
    uint64_t largest_id = 0;              // of the shard's segments (0 if none)
    std::vector<std::string> recycled;    // the shard's recycled files, oldest first
};

existing_files list_existing(const std::string& dir, unsigned shard) {
    existing_files out;
    std::vector<std::pair<uint64_t, std::string>> recycled;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        auto name = e.path().filename().string();
        if (auto id = parse_segment_file_name(name); id && id->shard == shard) {
            out.largest_id = std::max(out.largest_id, id->segment_id);
        } else if (auto r = parse_recycled_file_name(name); r && r->shard == shard) {
            recycled.emplace_back(r->segment_id, e.path().string());
            out.largest_id = std::max(out.largest_id, r->segment_id);
        }
    }
    std::sort(recycled.begin(), recycled.end());
    for (auto& [id, p] : recycled) {
        out.recycled.push_back(std::move(p));
    }
    return out;
}

} // namespace

replay_position commitlog::last_position() const noexcept {
    if (_active) {
        return _active->last_position();
    }
    // Every segment so far has a smaller id; the next one's first entry is past its header.
    return replay_position{_next_id, 0};
}

future<std::unique_ptr<commitlog>> commitlog::create(commitlog_config cfg, unsigned shard) {
    if (cfg.commitlog_directory.empty()) {
        throw std::invalid_argument("commitlog_directory is not set");
    }
    if (cfg.segment_size() < 64 * 1024) {
        throw std::invalid_argument(fmt::format("commitlog segment size {} bytes: at least 64 KiB", cfg.segment_size()));
    }
    if (cfg.segment_size() > (uint64_t(1) << 31)) {
        throw std::invalid_argument(fmt::format("commitlog_segment_size_in_mb {}: at most 2048", cfg.commitlog_segment_size_in_mb));
    }
    if (cfg.commitlog_sync == sync_mode::periodic && cfg.commitlog_sync_period_in_ms == 0) {
        throw std::invalid_argument("commitlog_sync_period_in_ms must be above 0");
    }
    const std::string& dir = cfg.commitlog_directory;
    auto found = co_await run_blocking([&dir, shard] {
        std::filesystem::create_directories(dir);
        return list_existing(dir, shard);
    });
    auto now_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count());
    std::unique_ptr<commitlog> log(new commitlog(std::move(cfg), shard, std::max(found.largest_id + 1, now_us)));
    for (auto& p : found.recycled) {
        if (log->_recycled.size() < log->_cfg.max_recycled_segments) {
            log->_recycled.push_back(std::move(p));
        } else {
            co_await remove_file(std::move(p));
        }
    }
    co_return log;
}

commitlog::commitlog(commitlog_config cfg, unsigned shard, uint64_t first_id)
    : _cfg(std::move(cfg)), _shard(shard), _next_id(first_id), _segment_size(_cfg.segment_size()) {
    if (_cfg.commitlog_sync == sync_mode::periodic) {
        _sync_timer.set_callback([this] {
            if (!_syncing && !_closed && _gate.try_enter()) {
                _syncing = true;
                spawn([this] { return periodic_sync(); });
            }
        });
        _sync_timer.arm_periodic(std::chrono::milliseconds(_cfg.commitlog_sync_period_in_ms));
    }
}

commitlog::~commitlog() = default;

future<> commitlog::periodic_sync() {
    // Entered the gate in the timer's callback.
    auto seg = _active;
    if (seg) {
        try {
            co_await seg->sync();
        } catch (const std::exception& e) {
            cllog.error("periodic sync of {} failed: {}", seg->path(), e.what());
        }
    }
    _syncing = false;
    _gate.leave();
}

future<replay_position> commitlog::add(const table_id& table, bytes_view data) {
    return add(table, data, nullptr);
}

future<replay_position> commitlog::add(const table_id& table, bytes_view data,
                                       std::function<void(replay_position)> on_position) {
    size_t n = entry_size(data.size());
    if (n > _segment_size / 2) {
        throw std::invalid_argument(fmt::format("commitlog entry of {} bytes: more than half a segment ({} bytes)", n,
                                                _segment_size));
    }
    if (_closed) {
        throw std::runtime_error("commitlog::add: the commitlog is closed");
    }
    auto holder = _gate.hold();
    while (true) {
        if (_closed) {
            throw std::runtime_error("commitlog::add: the commitlog is closed");
        }
        if (_switching) {
            co_await _switched.wait();
            continue;
        }
        if (_active && _active->fits(n)) {
            break;
        }
        co_await switch_segment();
    }
    auto seg = _active;
    auto pos = seg->append(table, data);
    if (on_position) {
        on_position(pos);
    }
    co_await seg->wait_acknowledged(pos);
    co_return pos;
}

future<> commitlog::switch_segment() {
    _switching = true;
    std::exception_ptr ex;
    try {
        co_await do_switch_segment();
    } catch (...) {
        ex = std::current_exception();
    }
    _switching = false;
    _switched.broadcast();
    if (ex) {
        std::rethrow_exception(ex);
    }
}

future<> commitlog::do_switch_segment() {
    if (auto old = std::exchange(_active, nullptr)) {
        co_await old->close();
        co_await delete_clean_segments();
    }
    // Back-pressure: one more segment must fit in the total space, unless there is nothing to free.
    uint64_t total = _cfg.total_space();
    while (!_segments.empty() && (_segments.size() + 1) * _segment_size > total) {
        if (_closed) {
            throw std::runtime_error("commitlog closed while waiting for space");
        }
        auto oldest = _segments.front();
        if (oldest->dirty().empty()) {
            co_await delete_clean_segments();
            continue;
        }
        ++_stats.space_waits;
        if (_last_flush_request != oldest->id()) {
            _last_flush_request = oldest->id();
            std::vector<table_id> tables;
            for (auto& [t, off] : oldest->dirty()) {
                tables.push_back(t);
            }
            cllog.debug("over {} bytes in {} segments: asking to flush {} tables pinning {}", total, _segments.size(),
                        tables.size(), oldest->path());
            ++_stats.flush_requests;
            if (_cfg.request_flush) {
                _cfg.request_flush(std::move(tables), oldest->last_position());
            }
        }
        co_await _space_freed.wait();
    }
    if (_closed) {
        throw std::runtime_error("commitlog closed while switching segments");
    }
    uint64_t id = _next_id++;  // apart from the co_await, which clang reads as two modifications
    auto seg = co_await new_segment(id);
    _segments.push_back(seg);
    _active = std::move(seg);
}

future<std::shared_ptr<segment>> commitlog::new_segment(uint64_t id) {
    auto path = _cfg.commitlog_directory + "/" + segment_file_name(_shard, id);
    while (!_recycled.empty()) {
        auto from = std::move(_recycled.front());
        _recycled.pop_front();
        std::exception_ptr ex;
        try {
            co_return co_await segment::reuse(from, path, _shard, id, _segment_size, _cfg.commitlog_sync,
                                              _cfg.periodic_direct_writes, _stats);
        } catch (...) {
            ex = std::current_exception();
        }
        // A recycled file that cannot be reused (it was removed, the disk refuses it) goes; a new file is made.
        try {
            std::rethrow_exception(ex);
        } catch (const std::exception& e) {
            cllog.warn("cannot reuse {} as {}: {}; creating a new segment", from, path, e.what());
        }
        try {
            co_await remove_file(from);
        } catch (...) {
        }
        co_await run_blocking([&path] { std::filesystem::remove(path); });  // renamed before the failure, if so
    }
    co_return co_await segment::create(std::move(path), _shard, id, _segment_size, _cfg.commitlog_sync,
                                       _cfg.periodic_direct_writes, _stats);
}

future<> commitlog::discard_completed_segments(const table_id& table, replay_position up_to) {
    for (auto& s : _segments) {
        s->mark_clean(table, up_to);
    }
    co_await delete_clean_segments();
}

future<> commitlog::delete_clean_segments() {
    std::vector<std::shared_ptr<segment>> gone;
    for (auto it = _segments.begin(); it != _segments.end();) {
        auto& s = *it;
        if (s != _active && s->closed() && s->dirty().empty()) {
            gone.push_back(s);
            it = _segments.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& s : gone) {
        co_await retire(s);
    }
    if (!gone.empty()) {
        _space_freed.broadcast();
    }
}

future<> commitlog::retire(std::shared_ptr<segment> s) {
    // The reserve's files count against the total space as segments do.
    bool keep = !_closed && _recycled.size() < _cfg.max_recycled_segments &&
                (_segments.size() + _recycled.size() + 1) * _segment_size <= _cfg.total_space();
    if (keep) {
        auto to = _cfg.commitlog_directory + "/" + recycled_file_name(_shard, s->id());
        co_await rename_file(s->path(), to);
        _recycled.push_back(std::move(to));
        cllog.debug("recycled {}", s->path());
        co_return;
    }
    co_await remove_file(s->path());
    ++_stats.segments_deleted;
    cllog.debug("deleted {}", s->path());
}

future<> commitlog::close() {
    if (_closed) {
        co_return;
    }
    _closed = true;
    _sync_timer.cancel();
    _space_freed.broadcast();
    _switched.broadcast();
    co_await _switched.wait([this] { return !_switching; });
    std::exception_ptr ex;
    if (auto seg = std::exchange(_active, nullptr)) {
        try {
            co_await seg->close();
        } catch (...) {
            ex = std::current_exception();
        }
    }
    // What no table pins holds nothing to replay (after a clean stop: every segment).
    if (!ex) {
        try {
            co_await delete_clean_segments();
            while (!_recycled.empty()) {
                auto p = std::move(_recycled.front());
                _recycled.pop_front();
                co_await remove_file(std::move(p));
            }
        } catch (...) {
            ex = std::current_exception();
        }
    }
    co_await _gate.close();
    if (ex) {
        std::rethrow_exception(ex);
    }
}

std::vector<std::string> commitlog::segment_paths() const {
    std::vector<std::string> out;
    for (auto& s : _segments) {
        out.push_back(s->path());
    }
    return out;
}

std::vector<std::vector<table_id>> commitlog::dirty_tables() const {
    std::vector<std::vector<table_id>> out;
    for (auto& s : _segments) {
        auto& v = out.emplace_back();
        for (auto& [t, off] : s->dirty()) {
            v.push_back(t);
        }
    }
    return out;
}

} // namespace reef::commitlog
