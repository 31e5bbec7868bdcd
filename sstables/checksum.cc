// CRC.db and Digest.crc32. See checksum.hh and FORMAT.md.
#include "sstables/checksum.hh"

#include "runtime/input_stream.hh"
#include "sstables/byte_reader.hh"
#include "utils/crc32.hh"

#include <fmt/format.h>

namespace reef::sstables {

crc_component parse_crc_component(std::string_view bytes, const std::string& file, uint64_t data_size) {
    byte_reader in(file, byte_reader::to_bytes(bytes));
    crc_component c;
    auto size = in.read_i32("the chunk size");
    if (size <= 0) {
        in.fail_at(0, "expected a positive chunk size, found " + std::to_string(size));
    }
    c.chunk_size = uint32_t(size);
    uint64_t chunks = (data_size + c.chunk_size - 1) / c.chunk_size;
    if (in.remaining() != chunks * 4) {
        in.fail("expected " + std::to_string(chunks) + " checksums (" + std::to_string(chunks * 4) + " bytes) for " +
                std::to_string(data_size) + " bytes of Data.db, found " + std::to_string(in.remaining()) + " bytes");
    }
    c.checksums.reserve(chunks);
    while (!in.at_end()) {
        c.checksums.push_back(in.read_be<uint32_t>("a chunk checksum"));
    }
    return c;
}

std::string serialize_crc_component(const crc_component& c) {
    std::string out(4 + 4 * c.checksums.size(), '\0');
    utils::write_be_unchecked<uint32_t>(out.data(), c.chunk_size);
    for (size_t i = 0; i < c.checksums.size(); ++i) {
        utils::write_be_unchecked<uint32_t>(out.data() + 4 + 4 * i, c.checksums[i]);
    }
    return out;
}

uint32_t parse_digest(std::string_view text, const std::string& file) {
    size_t b = 0, e = text.size();
    auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    while (b < e && space(text[b])) {
        ++b;
    }
    while (e > b && space(text[e - 1])) {
        --e;
    }
    uint64_t v = 0;
    if (b == e) {
        throw malformed_sstable_exception(file, b, "expected a decimal CRC32, found nothing");
    }
    for (size_t i = b; i < e; ++i) {
        if (text[i] < '0' || text[i] > '9' || i - b >= 10) {
            throw malformed_sstable_exception(file, i, "expected a decimal CRC32 (at most 10 digits)");
        }
        v = v * 10 + uint64_t(text[i] - '0');
    }
    if (v > 0xffffffffu) {
        throw malformed_sstable_exception(file, b, "expected a CRC32 below 2^32, found " + std::to_string(v));
    }
    return uint32_t(v);
}

future<uint32_t> file_crc32(std::string path) {
    uint32_t crc = 0;
    file_input_stream_options opts;
    opts.buffer_size = 128 * 1024;
    opts.read_ahead = 2;
    co_await for_each_file_buffer(std::move(path), opts, [&](const temporary_buffer& buf) {
        crc = utils::crc32_update(crc, std::span<const char>(buf.get(), buf.size()));
    });
    co_return crc;
}

future<> verify_digest(std::string data_file, uint32_t expected) {
    auto crc = co_await file_crc32(data_file);
    if (crc != expected) {
        auto f = co_await open_file_dma(data_file, open_flags::ro);
        auto size = co_await f.size();
        co_await f.close();
        throw malformed_sstable_exception(data_file, size,
                                          fmt::format("expected the file's CRC32 to be {} (Digest.crc32), computed {}",
                                                      expected, crc));
    }
}

} // namespace reef::sstables
