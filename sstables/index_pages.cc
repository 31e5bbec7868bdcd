// Summary points and index pages for the index room. See index_pages.hh.
#include "sstables/index_pages.hh"

#include "sstables/index_entry.hh"
#include "utils/vint.hh"

namespace reef::sstables {

index::index_summary make_index_summary(const summary& s, uint64_t index_file_size, uint64_t data_length) {
    index::index_summary out;
    out.index_file_size = index_file_size;
    out.data_length = data_length;
    out.points.reserve(s.entries.size());
    for (auto& e : s.entries) {
        out.points.push_back({dht::decorated_key(partition_key(e.key)), e.index_position});
    }
    return out;
}

index::page_parser make_index_page_parser(sstable_version v, std::string file) {
    return [v, file = std::move(file)](std::string_view bytes, uint64_t base_offset) {
        auto entries = parse_index_entries(bytes, v, file, base_offset);
        index::partition_index_page page;
        page.entries.reserve(entries.size());
        for (size_t i = 0; i < entries.size(); ++i) {
            auto& e = entries[i];
            uint64_t begin = e.index_position - base_offset;
            uint64_t end = i + 1 < entries.size() ? entries[i + 1].index_position - base_offset : bytes.size();
            // The key (2-byte length), then the position as a vint; the rest is the promoted index as stored.
            uint64_t head = 2 + e.key.size() + utils::unsigned_vint_size(e.data_position);
            auto key = dht::decorated_key(std::move(e.key));
            page.entries.push_back({std::move(key), e.data_position, std::string(bytes.substr(begin + head, end - begin - head))});
        }
        return page;
    };
}

} // namespace reef::sstables
