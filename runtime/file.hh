// file: direct (O_DIRECT) file I/O on the shard's backend, with aligned buffers,
// per-shard I/O counters, and errors that name the file, the offset and the operation.
#pragma once

#include "runtime/future.hh"
#include "runtime/io_backend.hh"
#include "runtime/temporary_buffer.hh"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

namespace reef {

enum class open_flags : int {
    ro = 00,         // O_RDONLY
    wo = 01,         // O_WRONLY
    rw = 02,         // O_RDWR
    create = 0100,   // O_CREAT
    exclusive = 0200,// O_EXCL
    truncate = 01000,// O_TRUNC
};
inline open_flags operator|(open_flags a, open_flags b) { return open_flags(int(a) | int(b)); }

namespace internal {
struct file_impl;
}

// The reads issued on one open file (all its copies), for per-file figures (`reef sstable query --stats`); the
// shard's totals are engine().io(). bytes: the lengths of the reads submitted (aligned, read-ahead included).
struct file_io_counters {
    uint64_t reads = 0;
    uint64_t bytes = 0;
};

// A handle to an open file; copies share the descriptor. Reads and writes
// given to dma_read/dma_write must be aligned: offset and length to
// disk_*_dma_alignment(), memory to memory_dma_alignment(). The
// temporary_buffer forms align internally and accept any range.
class file {
public:
    file() noexcept = default;

    explicit operator bool() const noexcept { return bool(_impl); }
    const std::string& path() const noexcept;
    // False where the filesystem refused O_DIRECT (the page cache is used).
    bool is_direct() const noexcept;
    uint64_t memory_dma_alignment() const noexcept;
    uint64_t disk_read_dma_alignment() const noexcept;
    uint64_t disk_write_dma_alignment() const noexcept;

    // Reads up to len bytes at pos into buf; fewer only at end of file.
    future<size_t> dma_read(uint64_t pos, char* buf, size_t len);
    // Reads [pos, pos + len), fewer bytes only at end of file.
    future<temporary_buffer> dma_read(uint64_t pos, size_t len);
    // Like dma_read, but a short read is an error naming the file and range.
    future<temporary_buffer> dma_read_exactly(uint64_t pos, size_t len);
    // Writes all len bytes at pos (continuing short writes).
    future<size_t> dma_write(uint64_t pos, const char* buf, size_t len);

    // Makes written data durable (fdatasync).
    future<> flush();
    future<uint64_t> size();
    future<> truncate(uint64_t length);
    // Closes the descriptor once; later operations throw.
    future<> close();

    // Low level, for streams that keep several reads in flight: submits one
    // aligned read whose result goes to c->complete() (bytes or -errno), before this returns for a file on tmpfs
    // or ramfs (read at once: a copy from memory). The caller keeps buf and c alive until then and counts bytes_read
    // when it completes.
    void submit_read(uint64_t pos, char* buf, size_t len, io_completion* c) const;

    const file_io_counters& io_counters() const noexcept;
    // An aligned buffer of at least size bytes, suitable for this file.
    temporary_buffer allocate_aligned_buffer(size_t size) const;

private:
    explicit file(std::shared_ptr<internal::file_impl> impl) noexcept : _impl(std::move(impl)) {}
    friend future<file> open_file_dma(std::string path, open_flags flags, mode_t mode);
    friend future<file> open_file_buffered(std::string path, open_flags flags, mode_t mode);
    std::shared_ptr<internal::file_impl> _impl;
};

// Opens path for direct I/O (O_DIRECT, falling back to buffered I/O where
// the filesystem refuses it, e.g. some tmpfs). Throws std::system_error
// naming the path. A file on tmpfs or ramfs is opened buffered (it is memory), and its reads are done on the shard
// at once (pread), not through the backend. Reads of a file opened read-only do not update its access time
// (O_NOATIME, where the process owns the file or may act as its owner).
future<file> open_file_dma(std::string path, open_flags flags, mode_t mode = 0644);
// Opens path for I/O through the page cache: a write returns once the kernel holds the bytes (a process crash
// keeps them; flush() makes them durable), however busy the disk. is_direct() is false.
future<file> open_file_buffered(std::string path, open_flags flags, mode_t mode = 0644);

// Directory and file-name operations, run off the shard's thread.
// The whole file's bytes (for small files: component metadata, TOC).
future<std::string> read_entire_file(std::string path);
future<bool> file_exists(std::string path);
future<> remove_file(std::string path);
future<> rename_file(std::string from, std::string to);
future<> make_directory(std::string path, mode_t mode = 0755);
// fsync of a directory: makes renames and creations in it durable.
future<> sync_directory(std::string path);

} // namespace reef
