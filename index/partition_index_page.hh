// partition_index_page: one summary page of Index.db as partition_index_cache holds it: the page's bytes as stored
// where each entry starts in them and the high half of its token (8 bytes an entry); keys and positions are read in
// place on demand.
#pragma once

#include "mutation/token.hh"
#include "utils/vint.hh"

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reef::index {

// A page of mc..oa entries, each `key length (2 bytes, big-endian), key, Data.db position (unsigned vint),
// promoted index size (unsigned vint) and body`, checked whole by the parser that built it: the accessors decode
// without checks. A page costs its bytes and 8 bytes an entry (not a parsed entry each), so that a shard's cache
// budget holds about twice the pages. The parser hashes each key once: a search then compares the tokens' high
// halves, side by side, and touches an entry's key only on a tie (a page's bytes are mostly cold in the CPU's cache).
struct partition_index_page {
    using token_function = std::function<dht::token(std::span<const uint8_t> key)>;  // sstables' bytes_view

    std::string bytes;                  // the page's Index.db bytes
    uint64_t base_offset = 0;           // where they start in Index.db
    std::vector<uint32_t> entry_offsets;  // where each entry starts in bytes
    std::vector<int32_t> token_high;      // each entry's token's high 32 bits (token_high_of)
    token_function token;               // the partitioner's token of a key; empty: Murmur3

    size_t size() const noexcept { return entry_offsets.size(); }
    bool empty() const noexcept { return entry_offsets.empty(); }

    std::string_view key_bytes(size_t i) const noexcept {
        size_t at = entry_offsets[i];
        size_t len = size_t(uint8_t(bytes[at])) << 8 | uint8_t(bytes[at + 1]);
        return std::string_view(bytes).substr(at + 2, len);
    }
    dht::token token_of(size_t i) const {
        auto k = key_bytes(i);
        return token ? token(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(k.data()), k.size()))
                     : dht::murmur3_token(k);
    }
    uint64_t data_position(size_t i) const noexcept {
        auto k = key_bytes(i);
        return decode_at(size_t(k.data() + k.size() - bytes.data()), nullptr);
    }
    // The entry's bytes after the key and the Data.db position (the promoted index's length and body) as stored:
    // decoded only by a read that skips inside the partition.
    std::string_view promoted_index(size_t i) const noexcept {
        size_t at = promoted_offset(i);
        size_t end = i + 1 < size() ? entry_offsets[i + 1] : bytes.size();
        return std::string_view(bytes).substr(at, end - at);
    }
    // Where entry i's promoted index bytes are in Index.db (for errors).
    uint64_t promoted_index_position(size_t i) const noexcept { return base_offset + promoted_offset(i); }

    // The high half of a token: ordered as the tokens are, where they differ there.
    static int32_t token_high_of(dht::token t) noexcept { return int32_t(t.value() >> 32); }

    // Entry i's key against k, in ring order (token, then the key's bytes unsigned, shorter first). The key is
    // hashed only when the high halves tie and the bytes differ (equal keys have equal tokens).
    std::strong_ordering compare(size_t i, const dht::decorated_key& k) const {
        if (auto c = token_high[i] <=> token_high_of(k.get_token()); c != 0) {
            return c;
        }
        auto a = key_bytes(i);
        auto b = k.key().view();
        if (a == b) {
            return std::strong_ordering::equal;
        }
        if (auto c = token_of(i) <=> k.get_token(); c != 0) {
            return c;
        }
        size_t n = std::min(a.size(), b.size());
        int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
        if (c != 0) {
            return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
        }
        return a.size() <=> b.size();
    }
    // The first entry of [from, size()) whose token's high half is not below k's: where k's entry is, or close
    // before it on a tie of high halves. Reads only token_high.
    size_t token_lower_bound(const dht::decorated_key& k, size_t from = 0) const noexcept {
        auto h = token_high_of(k.get_token());
        return size_t(std::lower_bound(token_high.begin() + from, token_high.end(), h) - token_high.begin());
    }
    // Asks the CPU for the bytes a lookup of entry i reads: its key (a compare on a tie), its Data.db position and
    // the next entry's (where the partition ends).
    void prefetch_entry(size_t i) const noexcept {
        if (i < size()) {
            const char* at = bytes.data() + entry_offsets[i];
            __builtin_prefetch(at);
            __builtin_prefetch(at + 48);
        }
    }
    // Entry i's key, decorated (a copy).
    dht::decorated_key key(size_t i) const { return dht::decorated_key(token_of(i), partition_key(key_bytes(i))); }

    // What the page costs in memory (charged to the cache's budget).
    size_t memory_usage() const noexcept {
        return sizeof(*this) + bytes.capacity() + entry_offsets.capacity() * sizeof(uint32_t) +
               token_high.capacity() * sizeof(int32_t);
    }

private:
    size_t promoted_offset(size_t i) const noexcept {
        auto k = key_bytes(i);
        size_t after = 0;
        decode_at(size_t(k.data() + k.size() - bytes.data()), &after);
        return after;
    }
    // The unsigned vint at `at` (checked by the parser); *end: where it ends.
    uint64_t decode_at(size_t at, size_t* end) const noexcept {
        auto r = utils::try_decode_unsigned_vint(std::span<const char>(bytes.data() + at, bytes.size() - at));
        if (end) {
            *end = at + (r ? r->length : 0);
        }
        return r ? r->value : 0;
    }
};

// The first entry of page for which skip(its decorated key) is false; skip must be true on a prefix of the entries.
// Each key it asks about is decorated (a copy): for predicates the page cannot compare in place.
template <typename Skip>
size_t entry_partition_point(const partition_index_page& page, Skip&& skip) {
    size_t lo = 0, hi = page.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (skip(page.key(mid))) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The first entry of [from, page.size()) not before k (page.size() when none is), compared in place.
inline size_t entry_lower_bound(const partition_index_page& page, const dht::decorated_key& k, size_t from = 0) {
    size_t lo = from, hi = page.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (page.compare(mid, k) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Where each of keys (ascending, distinct) has its entry in page: out[j] is the entry's index, or page.size() when
// the page has none. A batch's entries are fetched together: a search of the high halves finds each key's start and
// prefetches its entry, then one pass compares. Every entry before a start has a smaller high half, and every one
// before the previous key's entry a smaller key: the start is the key's entry or the one after it, unless the high
// halves tie with a smaller key, the one case searched further.
inline void find_entries(const partition_index_page& page, std::span<const dht::decorated_key> keys,
                         std::vector<size_t>& out) {
    out.clear();
    size_t e = 0;
    for (auto& k : keys) {
        e = page.token_lower_bound(k, e);
        out.push_back(e);
        page.prefetch_entry(e);
    }
    auto compare_at = [&](size_t at, const dht::decorated_key& k) {
        return at < page.size() ? page.compare(at, k) : std::strong_ordering::greater;
    };
    e = 0;
    for (size_t j = 0; j < keys.size(); ++j) {
        e = std::max(e, out[j]);
        auto c = compare_at(e, keys[j]);
        if (c < 0) {
            e = entry_lower_bound(page, keys[j], e + 1);
            c = compare_at(e, keys[j]);
        }
        out[j] = c == 0 ? e : page.size();
    }
}

} // namespace reef::index
