// A commitlog segment being written: write cycles, acknowledgements, dirty tables. See segment.hh.
#include "commitlog/segment.hh"

#include "commitlog/commitlog.hh"
#include "commitlog/segment_format.hh"

#include "runtime/blocking.hh"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace reef::commitlog {

namespace {
uint64_t align_up(uint64_t v, uint64_t a) noexcept { return (v + a - 1) / a * a; }

// Through the page cache, a block is the page the kernel writes back whole.
constexpr size_t page_cache_block = 4096;

// Periodic mode acknowledges a write once the kernel has it (FORMAT.md, "Writes"): through the page cache, so
// that a disk busy with flushes and compactions does not hold writers up; batch mode waits for the disk anyway.
future<file> open_segment_file(const std::string& path, sync_mode mode, bool direct_in_periodic) {
    if (mode == sync_mode::periodic && !direct_in_periodic) {
        return open_file_buffered(path, open_flags::wo);
    }
    return open_file_dma(path, open_flags::wo);
}
} // namespace

segment::segment(std::string path, file f, uint64_t id, uint64_t size_limit, sync_mode mode, commitlog_stats& stats)
    : _path(std::move(path)), _file(std::move(f)), _id(id), _size_limit(size_limit), _mode(mode), _stats(stats),
      _block(_file.is_direct() ? std::max<size_t>(512, _file.disk_write_dma_alignment()) : page_cache_block) {}

future<std::shared_ptr<segment>> segment::create(std::string path, unsigned shard, uint64_t id, uint64_t size_limit,
                                                 sync_mode mode, bool direct_in_periodic, commitlog_stats& stats) {
    // Preallocated to its full size: a direct write inside the file's allocated size needs no size or block
    // allocation, so fdatasync commits less metadata (on ext4, 10 to 100 times more syncs per second than
    // appending; FORMAT.md). The directory is synced so that the new file survives a power failure.
    const std::string& p = path;
    co_await run_blocking([&p, size_limit] {
        int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            throw std::system_error(errno, std::system_category(), "commitlog: create " + p);
        }
        int rc = ::posix_fallocate(fd, 0, off_t(size_limit));
        ::close(fd);
        if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
            throw std::system_error(rc, std::system_category(), "commitlog: preallocate " + p);
        }
    });
    co_await sync_directory(std::filesystem::path(path).parent_path().string());
    auto f = co_await open_segment_file(path, mode, direct_in_periodic);
    std::shared_ptr<segment> s(new segment(std::move(path), std::move(f), id, size_limit, mode, stats));
    s->_pending = make_segment_header(shard, id);
    ++stats.segments_created;
    co_return s;
}

future<std::shared_ptr<segment>> segment::reuse(std::string recycled_path, std::string path, unsigned shard,
                                                uint64_t id, uint64_t size_limit, sync_mode mode,
                                                bool direct_in_periodic, commitlog_stats& stats) {
    auto f = co_await open_segment_file(recycled_path, mode, direct_in_periodic);
    std::shared_ptr<segment> s(new segment(path, std::move(f), id, size_limit, mode, stats));
    std::exception_ptr ex;
    try {
        // The header's block, written and synced under the recycled name: the older life's entries after it fail
        // their CRCs (seeded with the old id) and the end marker will close the new life's data.
        auto header = make_segment_header(shard, id);
        auto buf = s->_file.allocate_aligned_buffer(s->_block);
        std::memset(buf.get_write(), 0, s->_block);
        std::memcpy(buf.get_write(), header.data(), header.size());
        co_await s->_file.dma_write(0, buf.get(), s->_block);
        co_await s->_file.flush();
        co_await rename_file(recycled_path, path);
        co_await sync_directory(std::filesystem::path(path).parent_path().string());
    } catch (...) {
        ex = std::current_exception();
    }
    if (ex) {
        co_await s->_file.close();
        std::rethrow_exception(ex);
    }
    s->_pending_start = s->_acknowledged = s->_synced = s->_block;
    ++stats.segments_recycled;
    co_return s;
}

replay_position segment::append(const table_id& table, bytes_view data) {
    uint64_t at = next_offset();
    size_t n = entry_size(data.size());
    size_t old = _pending.size();
    _pending.resize(old + n);
    write_entry(_pending.data() + old, _id, table, data);
    _dirty[table] = uint32_t(at);
    _last_offset = uint32_t(at);
    ++_pending_entries;
    _pending_data += data.size();
    return {_id, uint32_t(at)};
}

future<> segment::wait_acknowledged(replay_position pos) {
    if (!_cycle_running && !_pending.empty()) {
        _cycle_running = true;
        spawn([this] { return run_cycles(); });
    }
    co_await _cycle_done.wait([&] { return _acknowledged > pos.offset || _error; });
    if (_acknowledged <= pos.offset) {
        std::rethrow_exception(_error);
    }
}

// One cycle at a time: entries appended while a cycle is in flight wait for the next, which takes them all
// (group commit). Cycles complete, and so acknowledge, in offset order.
future<> segment::run_cycles() {
    while (!_pending.empty() && !_error) {
        bytes data = std::move(_pending);
        _pending = bytes();
        uint64_t start = _pending_start;
        uint64_t end = start + data.size();
        uint64_t len = align_up(data.size(), _block);
        _pending_start = start + len;
        size_t entries = std::exchange(_pending_entries, 0);
        size_t data_bytes = std::exchange(_pending_data, 0);
        auto buf = _file.allocate_aligned_buffer(len);
        std::memcpy(buf.get_write(), data.data(), data.size());
        std::memset(buf.get_write() + data.size(), 0, len - data.size());
        std::exception_ptr ex;
        try {
            co_await _file.dma_write(start, buf.get(), len);
            ++_stats.writes;
            _stats.bytes_written += len;
            if (_mode == sync_mode::batch) {
                co_await _file.flush();
                ++_stats.syncs;
                _synced = end;
            }
        } catch (...) {
            ex = std::current_exception();
        }
        if (ex) {
            _error = ex;
        } else {
            _acknowledged = end;
            _stats.entries += entries;
            _stats.bytes += data_bytes;
        }
        _cycle_done.broadcast();
    }
    _cycle_running = false;
    _cycle_done.broadcast();
}

future<> segment::sync() {
    if (_closed || _synced >= _acknowledged || !_syncs.try_enter()) {
        co_return;
    }
    uint64_t upto = _acknowledged;
    std::exception_ptr ex;
    try {
        co_await _file.flush();
        ++_stats.syncs;
        _synced = std::max(_synced, upto);
    } catch (...) {
        ex = std::current_exception();
    }
    _syncs.leave();
    if (ex) {
        std::rethrow_exception(ex);
    }
}

future<> segment::close() {
    if (!_closing && !_error) {
        // The end marker: replay stops here quietly, whatever a recycled file holds after it.
        size_t old = _pending.size();
        _pending.resize(old + marker_size);
        write_entry(_pending.data() + old, _id, end_marker_table_id, bytes_view());
    }
    _closing = true;
    if (!_cycle_running && !_pending.empty() && !_error) {
        _cycle_running = true;
        spawn([this] { return run_cycles(); });
    }
    co_await _cycle_done.wait([&] { return !_cycle_running; });
    co_await _syncs.close();
    std::exception_ptr ex = _error;
    if (!ex && _synced < _acknowledged) {
        try {
            co_await _file.flush();
            ++_stats.syncs;
            _synced = _acknowledged;
        } catch (...) {
            ex = std::current_exception();
        }
    }
    co_await _file.close();
    _closed = true;
    if (ex) {
        std::rethrow_exception(ex);
    }
}

void segment::mark_clean(const table_id& table, replay_position up_to) {
    auto it = _dirty.find(table);
    if (it == _dirty.end()) {
        return;
    }
    if (_id < up_to.segment_id || (_id == up_to.segment_id && it->second <= up_to.offset)) {
        _dirty.erase(it);
    }
}

} // namespace reef::commitlog
