// Summary points and index pages for the index room. See index_pages.hh.
#include "sstables/index_pages.hh"

#include "sstables/byte_reader.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "utils/vint.hh"

#include <memory>

namespace reef::sstables {

dht::decorated_key decorate_key(std::string key, const mx_fragment_consumer::token_function& token) {
    partition_key k(std::move(key));
    if (!token) {
        return dht::decorated_key(std::move(k));
    }
    auto t = token(to_bytes_view(k.view()));
    return dht::decorated_key(t, std::move(k));
}

index::index_summary make_index_summary(const summary& s, uint64_t index_file_size, uint64_t data_length,
                                        const mx_fragment_consumer::token_function& token) {
    index::index_summary out;
    out.index_file_size = index_file_size;
    out.data_length = data_length;
    out.points.reserve(s.entries.size());
    out.tokens.reserve(s.entries.size());
    for (auto& e : s.entries) {
        out.points.push_back({decorate_key(e.key, token), e.index_position});
        out.tokens.push_back(out.points.back().key.get_token());
    }
    return out;
}

index::page_parser make_index_page_parser(sstable_version v, std::string file,
                                          mx_fragment_consumer::token_function token) {
    // Only where each entry starts: the page is checked whole here (key, position and promoted index within its
    // bytes), so that reading an entry in place needs no check; the promoted index is parsed (and checked) by the
    // read that uses it (parse_promoted_index). Each key is hashed here, once: a lookup compares the tokens' high
    // halves and touches the few keys that tie.
    auto parse = [file = std::move(file), token = std::move(token)](std::string_view bytes, uint64_t base_offset) {
        if (bytes.size() > UINT32_MAX) {
            throw malformed_sstable_exception(file, base_offset, "an index page of " + std::to_string(bytes.size()) +
                                                                     " bytes (at most 2^32 - 1)");
        }
        index::partition_index_page page;
        page.bytes.assign(bytes);
        page.base_offset = base_offset;
        page.token = token;
        // Entries take at least 4 bytes (key length, one-byte position and promoted index size).
        page.entry_offsets.reserve(bytes.size() / 20 + 1);
        page.token_high.reserve(bytes.size() / 20 + 1);
        byte_reader in(file, byte_reader::to_bytes(std::string_view(page.bytes)), base_offset);
        while (!in.at_end()) {
            page.entry_offsets.push_back(uint32_t(in.position()));
            auto key_len = in.read_be<uint16_t>("a partition key length");
            in.read_bytes(key_len, "a partition key");
            page.token_high.push_back(page.token_high_of(page.token_of(page.size() - 1)));
            in.read_unsigned_vint("a Data.db position");
            auto promoted_at = in.offset();
            auto promoted_len = in.read_unsigned_vint("a promoted index size");
            if (promoted_len > in.remaining()) {
                in.fail_at(promoted_at, "a promoted index of " + std::to_string(promoted_len) + " bytes, past the page's end (" +
                                            std::to_string(in.remaining()) + " bytes left)");
            }
            in.read_bytes(promoted_len, "a promoted index");
        }
        page.entry_offsets.shrink_to_fit();
        page.token_high.shrink_to_fit();
        return page;
    };
    return std::make_shared<const index::page_parse_function>(std::move(parse));
}

} // namespace reef::sstables
