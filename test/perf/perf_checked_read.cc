// reef perf-checked-read: what reading Data.db through its checked sources costs: a sequential scan (MB/s of
// uncompressed output) and random small range reads (ranges/s), for each compressor and for CRC.db-checked
// uncompressed data, next to the plain file stream. The files are written here from semi-compressible text.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/file.hh"
#include "runtime/input_stream.hh"
#include "runtime/program_options.hh"
#include "runtime/reactor.hh"
#include "sstables/checked_data_source.hh"
#include "sstables/compressor.hh"
#include "utils/big_endian.hh"
#include "utils/crc32.hh"

#include <chrono>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <random>

namespace reef::perf {

namespace {

using namespace reef::sstables;


// Words from a small vocabulary with numbers: compresses about as well as typical cell data.
std::string make_content(uint64_t size) {
    static const char* words[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
                                  "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"};
    std::mt19937_64 rng(1);
    std::string s;
    s.reserve(size + 32);
    while (s.size() < size) {
        s += words[rng() % 16];
        s += ' ';
        s += std::to_string(rng() % 100000);
        s += rng() % 8 ? ' ' : '\n';
    }
    s.resize(size);
    return s;
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

struct variant {
    std::string name;
    std::string path;
    uint64_t stored_size = 0;
    std::shared_ptr<const compression_info> ci;
    std::shared_ptr<const crc_component> crc;
};

variant write_compressed(const std::string& dir, const std::string& content, compression_algorithm a, uint32_t chunk) {
    compression_info ci;
    ci.compressor_class = std::string(compressor_class_name(a));
    ci.algorithm = a;
    ci.chunk_length = chunk;
    ci.data_length = content.size();
    std::string stored;
    for (uint64_t off = 0; off < content.size(); off += chunk) {
        ci.chunk_offsets.push_back(stored.size());
        auto z = compress_chunk(a, std::string_view(content).substr(off, chunk));
        stored += z;
        char crc[4];
        utils::write_be_unchecked<uint32_t>(crc, utils::crc32(std::span<const char>(z)));
        stored.append(crc, 4);
    }
    variant v;
    v.name = ci.compressor_class;
    v.path = dir + "/perf-" + v.name + "-Data.db";
    v.stored_size = stored.size();
    write_file(v.path, stored);
    v.ci = std::make_shared<compression_info>(std::move(ci));
    return v;
}

variant write_crc_checked(const std::string& dir, const std::string& content, uint32_t chunk) {
    crc_component c;
    c.chunk_size = chunk;
    for (uint64_t off = 0; off < content.size(); off += chunk) {
        c.checksums.push_back(utils::crc32(std::span<const char>(std::string_view(content).substr(off, chunk))));
    }
    variant v;
    v.name = "CRC.db-checked";
    v.path = dir + "/perf-uncompressed-Data.db";
    v.stored_size = content.size();
    write_file(v.path, content);
    v.crc = std::make_shared<crc_component>(std::move(c));
    return v;
}

data_source source_of(const variant& v, file f, uint64_t pos, uint64_t len) {
    if (v.ci) {
        return make_compressed_data_source(f, v.path, v.ci, v.stored_size, pos, len);
    }
    if (v.crc) {
        return make_crc_checked_data_source(f, v.path, v.crc, v.stored_size, pos, len);
    }
    return make_file_data_source(f, pos, len, file_input_stream_options{64 * 1024, 1});
}

} // namespace

int perf_checked_read_main(int argc, char** argv) {
    program_options::options opts("reef perf-checked-read",
                                  "Reads a Data.db through each checked source (LZ4, Snappy, Zstd, Deflate, CRC.db) "
                                  "and the plain file stream: scan MB/s and random range reads/s.");
    runtime_options rt;
    rt.add(opts);
    uint64_t size_mb = 0, chunk_kb = 0, ranges = 0, range_bytes = 0;
    std::string data_dir;
    opts.add("size-mb", "uncompressed size of each Data.db", &size_mb, uint64_t(64), uint64_t(1));
    opts.add("chunk-kb", "chunk length", &chunk_kb, uint64_t(16), uint64_t(1), uint64_t(1024));
    opts.add("ranges", "random range reads per source", &ranges, uint64_t(2000), uint64_t(1));
    opts.add("range-bytes", "bytes per random range read", &range_bytes, uint64_t(4096), uint64_t(1));
    opts.add("data-directory", "where the files go (a real disk: O_DIRECT)", &data_dir, "/var/tmp/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-checked-read", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    std::filesystem::create_directories(data_dir);
    auto content = make_content(size_mb << 20);
    uint32_t chunk = uint32_t(chunk_kb << 10);
    std::vector<variant> variants;
    variants.push_back(variant{"plain file stream", data_dir + "/perf-plain-Data.db", content.size(), nullptr, nullptr});
    write_file(variants.back().path, content);
    variants.push_back(write_crc_checked(data_dir, content, chunk));
    for (auto a : {compression_algorithm::lz4, compression_algorithm::snappy, compression_algorithm::zstd,
                   compression_algorithm::deflate}) {
        variants.push_back(write_compressed(data_dir, content, a, chunk));
    }
    fmt::print("reef perf-checked-read: {} MiB uncompressed, {} KiB chunks, {} random reads of {} bytes\n"
               "(O_DIRECT: every pass reads the disk; each figure is the better of two passes)\n\n",
               size_mb, chunk_kb, ranges, range_bytes);
    fmt::print("{:<20} {:>10} {:>12} {:>14} {:>12}\n", "source", "stored MiB", "scan MB/s", "ranges/s", "reads/scan");
    return run(cfg, [&]() -> future<int> {
        for (auto& v : variants) {
            auto f = co_await open_file_dma(v.path, open_flags::ro);
            double best_scan = 0, best_ranges = 0;
            uint64_t reads = 0;
            for (int pass = 0; pass < 2; ++pass) {
                auto before = engine().io().reads;
                auto start = clock_type::now();
                auto n = co_await drain(source_of(v, f, 0, content.size()));
                best_scan = std::max(best_scan, double(n) / 1e6 / seconds_since(start));
                reads = engine().io().reads - before;
                std::mt19937_64 rng(pass);
                start = clock_type::now();
                for (uint64_t i = 0; i < ranges; ++i) {
                    uint64_t pos = rng() % (content.size() - range_bytes);
                    co_await drain(source_of(v, f, pos, range_bytes));
                }
                best_ranges = std::max(best_ranges, double(ranges) / seconds_since(start));
            }
            co_await f.close();
            fmt::print("{:<20} {:>10.1f} {:>12.0f} {:>14.0f} {:>12}\n", v.name, double(v.stored_size) / (1 << 20),
                       best_scan, best_ranges, reads);
        }
        for (auto& v : variants) {
            std::filesystem::remove(v.path);
        }
        co_return 0;
    });
}

} // namespace reef::perf
