// Summary points and index pages for the index room. See index_pages.hh.
#include "sstables/index_pages.hh"

#include "sstables/index_entry.hh"
#include "utils/vint.hh"

namespace reef::sstables {

namespace {

dht::decorated_key decorate(partition_key k, const mx_fragment_consumer::token_function& token) {
    if (!token) {
        return dht::decorated_key(std::move(k));
    }
    auto t = token(to_bytes_view(k.view()));
    return dht::decorated_key(t, std::move(k));
}

} // namespace

index::index_summary make_index_summary(const summary& s, uint64_t index_file_size, uint64_t data_length,
                                        const mx_fragment_consumer::token_function& token) {
    index::index_summary out;
    out.index_file_size = index_file_size;
    out.data_length = data_length;
    out.points.reserve(s.entries.size());
    for (auto& e : s.entries) {
        out.points.push_back({decorate(partition_key(e.key), token), e.index_position});
    }
    return out;
}

index::page_parser make_index_page_parser(sstable_version v, std::string file,
                                          mx_fragment_consumer::token_function token) {
    return [v, file = std::move(file), token = std::move(token)](std::string_view bytes, uint64_t base_offset) {
        auto entries = parse_index_entries(bytes, v, file, base_offset);
        index::partition_index_page page;
        page.entries.reserve(entries.size());
        for (size_t i = 0; i < entries.size(); ++i) {
            auto& e = entries[i];
            uint64_t begin = e.index_position - base_offset;
            uint64_t end = i + 1 < entries.size() ? entries[i + 1].index_position - base_offset : bytes.size();
            // The key (2-byte length), then the position as a vint; the rest is the promoted index as stored.
            uint64_t head = 2 + e.key.size() + utils::unsigned_vint_size(e.data_position);
            auto key = decorate(std::move(e.key), token);
            page.entries.push_back({std::move(key), e.data_position, std::string(bytes.substr(begin + head, end - begin - head)),
                                    base_offset + begin + head});
        }
        return page;
    };
}

} // namespace reef::sstables
