// partition_index_page's in-place search: pages of random entries, parsed as Index.db stores them, searched for random
// keys and batches; compare(), entry_lower_bound() and find_entries() against the ring order of decorated keys. A
// partitioner of few tokens makes the tokens' high halves and whole tokens tie often, where the search must fall back
// to the token, then the bytes.
#include "index/partition_index_page.hh"
#include "sstables/index_pages.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/test_rng.hh"
#include "utils/vint.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>

using namespace reef;

namespace {

// A token of few values: the high half from the first byte, the low half from the second (both may tie).
dht::token few_tokens(bytes_view key) {
    int64_t high = key.empty() ? -2 : int64_t(key[0] % 4) - 2;
    int64_t low = key.size() < 2 ? 0 : int64_t(key[1] % 3);
    return dht::token(high * (int64_t(1) << 32) + low);
}

dht::decorated_key decorate(const std::string& key, bool murmur3) {
    if (murmur3) {
        return dht::decorated_key(partition_key(key));
    }
    auto t = few_tokens(bytes_view(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
    return dht::decorated_key(t, partition_key(key));
}

// The bytes of mc..oa Index.db entries with no promoted index: key length, key, position, promoted index size 0.
std::string page_bytes(const std::vector<dht::decorated_key>& keys) {
    std::string out;
    uint64_t position = 0;
    for (auto& k : keys) {
        auto key = k.key().view();
        out.push_back(char(key.size() >> 8));
        out.push_back(char(key.size() & 0xff));
        out.append(key);
        std::byte v[9];
        size_t n = utils::encode_unsigned_vint(position, v);
        out.append(reinterpret_cast<const char*>(v), n);
        out.push_back(0);
        position += 100 + key.size();
    }
    return out;
}

std::string random_key(std::mt19937_64& rng, bool murmur3) {
    size_t len = murmur3 ? 16 : 1 + rng() % 4;
    std::string k(len, '\0');
    for (auto& c : k) {
        // Few byte values when tokens are few: equal keys, and keys equal in a prefix, are frequent.
        c = char(murmur3 ? rng() : rng() % 6);
    }
    return k;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_page_search_matches_ring_order) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    size_t ties = 0;
    for (int round = 0; round < 200; ++round) {
        bool murmur3 = round % 2 == 0;
        std::vector<dht::decorated_key> keys;
        size_t n = rng() % 150;
        for (size_t i = 0; i < n; ++i) {
            keys.push_back(decorate(random_key(rng, murmur3), murmur3));
        }
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        auto parse = murmur3 ? sstables::make_index_page_parser(sstables::sstable_version::me, "test-Index.db")
                             : sstables::make_index_page_parser(sstables::sstable_version::me, "test-Index.db", few_tokens);
        auto bytes = page_bytes(keys);
        auto page = (*parse)(bytes, 0);
        BOOST_REQUIRE_EQUAL(page.size(), keys.size());
        for (size_t i = 0; i < keys.size(); ++i) {
            BOOST_REQUIRE_EQUAL(page.token_high[i], index::partition_index_page::token_high_of(keys[i].get_token()));
            BOOST_REQUIRE(page.key(i) == keys[i]);
        }
        for (int q = 0; q < 50; ++q) {
            // A key of the page or another one.
            auto k = !keys.empty() && rng() % 2 ? keys[rng() % keys.size()] : decorate(random_key(rng, murmur3), murmur3);
            for (size_t i = 0; i < keys.size(); ++i) {
                auto want = keys[i] <=> k;
                BOOST_REQUIRE_MESSAGE(page.compare(i, k) == want, "seed " << seed << " round " << round << " entry " << i);
                ties += want != 0 && page.token_high[i] == index::partition_index_page::token_high_of(k.get_token());
            }
            size_t from = keys.empty() ? 0 : rng() % (keys.size() + 1);
            size_t want = std::lower_bound(keys.begin() + from, keys.end(), k) - keys.begin();
            BOOST_REQUIRE_EQUAL(index::entry_lower_bound(page, k, from), want);
        }
        // A batch (ascending, distinct), keys of the page and others, found together.
        std::vector<dht::decorated_key> batch;
        for (size_t q = rng() % 40; q > 0; --q) {
            batch.push_back(!keys.empty() && rng() % 2 ? keys[rng() % keys.size()]
                                                        : decorate(random_key(rng, murmur3), murmur3));
        }
        std::sort(batch.begin(), batch.end());
        batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
        std::vector<size_t> at;
        index::find_entries(page, batch, at);
        BOOST_REQUIRE_EQUAL(at.size(), batch.size());
        for (size_t j = 0; j < batch.size(); ++j) {
            size_t want = std::find(keys.begin(), keys.end(), batch[j]) - keys.begin();
            BOOST_REQUIRE_MESSAGE(at[j] == want, "seed " << seed << " round " << round << " batch key " << j);
        }
    }
    // The few-token partitioner made the search decide past the high halves, many times.
    BOOST_REQUIRE_GT(ties, 1000u);
}
