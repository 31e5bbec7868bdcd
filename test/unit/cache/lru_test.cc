// Tests of the intrusive LRU: random pins, unpins, touches and budgets checked against a
// model list (eviction order, memory sum, the budget whenever something can still be evicted).
#include "cache/lru.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <vector>

using namespace reef::cache;

namespace {

uint64_t seed_for_test() {
    if (const char* s = std::getenv("REEF_SEED")) {
        return std::stoull(s);
    }
    return std::random_device{}();
}

struct model;

struct item final : lru_item {
    model* m;
    int id;
    item(model* m, int id) : m(m), id(id) {}
    void on_evict() noexcept override;
};

// The expected state: items by id; the unpinned ones in LRU order (front = coldest).
struct model {
    std::map<int, std::unique_ptr<item>> items;
    std::map<int, size_t> sizes;
    std::list<int> order;
    std::vector<int> evicted;  // what the lru evicted, in order
    // Items whose eviction unpins another item (as an index page holding file pages).
    std::map<int, int> unpins_on_evict;
    std::map<int, int> pins;
    bool wrong_order = false;  // an eviction that did not take the coldest

    size_t total() const {
        size_t t = 0;
        for (auto& [id, s] : sizes) {
            t += s;
        }
        return t;
    }
};

void item::on_evict() noexcept {
    auto* mm = m;
    int me = id;
    mm->evicted.push_back(me);
    mm->wrong_order |= mm->order.empty() || mm->order.front() != me;
    mm->order.remove(me);
    mm->sizes.erase(me);
    auto dep = mm->unpins_on_evict.find(me);
    int other = dep == mm->unpins_on_evict.end() ? -1 : dep->second;
    mm->unpins_on_evict.erase(me);
    // Destroys this.
    auto self = std::move(mm->items[me]);
    mm->items.erase(me);
    self.reset();
    if (other >= 0 && mm->items.count(other) && --mm->pins[other] == 0) {
        // Reentrant: the running eviction must pick this up.
        mm->order.push_back(other);
        mm->items[other]->owner()->link(*mm->items[other]);
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_lru_eviction_order_and_budget) {
    uint64_t seed = seed_for_test();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 200; ++round) {
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
            model m;
            lru l(rng() % 5000);
            int next_id = 0;
            for (int step = 0; step < 300; ++step) {
                auto pick = [&]() -> int {
                    if (m.items.empty()) {
                        return -1;
                    }
                    auto it = m.items.begin();
                    std::advance(it, rng() % m.items.size());
                    return it->first;
                };
                switch (rng() % 8) {
                case 0:
                case 1: {  // a new item, pinned while it is filled, then released
                    int id = next_id++;
                    size_t sz = 1 + rng() % 700;
                    m.items[id] = std::make_unique<item>(&m, id);
                    m.sizes[id] = sz;
                    m.pins[id] = 1;
                    l.charge(*m.items[id], sz);
                    // As a cache does once the new item is pinned.
                    l.evict_to_budget();
                    if (rng() % 4 == 0) {
                        // Holds some other pinned item until evicted.
                        int other = pick();
                        if (other >= 0 && other != id && !m.unpins_on_evict.count(id)) {
                            bool linked = m.items[other]->is_linked();
                            ++m.pins[other];
                            l.unlink(*m.items[other]);
                            if (linked) {
                                m.order.remove(other);
                            }
                            m.unpins_on_evict[id] = other;
                        }
                    }
                    if (rng() % 3) {
                        m.pins[id] = 0;
                        m.order.push_back(id);
                        l.link(*m.items[id]);
                    }
                    break;
                }
                case 2: {  // a hit: pin and release
                    int id = pick();
                    if (id >= 0 && m.pins[id] == 0) {
                        l.unlink(*m.items[id]);
                        m.order.remove(id);
                        m.order.push_back(id);
                        l.link(*m.items[id]);
                    }
                    break;
                }
                case 3: {  // touch
                    int id = pick();
                    if (id >= 0 && m.items[id]->is_linked()) {
                        l.touch(*m.items[id]);
                        m.order.remove(id);
                        m.order.push_back(id);
                    }
                    break;
                }
                case 4: {  // release a pinned item
                    int id = pick();
                    if (id >= 0 && m.pins[id] > 0 && --m.pins[id] == 0) {
                        m.order.push_back(id);
                        l.link(*m.items[id]);
                    }
                    break;
                }
                case 5: {  // the owner destroys an item (pinned or not)
                    int id = pick();
                    if (id >= 0 && !m.unpins_on_evict.count(id)) {
                        bool held = false;
                        for (auto& [h, o] : m.unpins_on_evict) {
                            held |= o == id;
                        }
                        if (!held) {
                            m.order.remove(id);
                            m.sizes.erase(id);
                            m.items.erase(id);
                        }
                    }
                    break;
                }
                case 6:
                    l.set_budget(rng() % 5000);
                    break;
                case 7:
                    if (rng() % 10 == 0) {
                        l.evict_all();
                        BOOST_REQUIRE_EQUAL(l.linked_items(), 0u);
                    }
                    break;
                }
                // Everything evicted went coldest first: the model's order
                // holds exactly the linked items, in the lru's order.
                BOOST_REQUIRE(!m.wrong_order);
                BOOST_REQUIRE_EQUAL(l.memory_used(), m.total());
                BOOST_REQUIRE_EQUAL(l.charged_items(), m.items.size());
                BOOST_REQUIRE_EQUAL(l.linked_items(), m.order.size());
                for (int id : m.order) {
                    BOOST_REQUIRE(m.items[id]->is_linked());
                }
                if (l.linked_items() > 0) {
                    BOOST_REQUIRE_LE(l.memory_used(), l.budget());
                }
            }
            // Eviction order: drain and compare with the model's.
            std::vector<int> expected(m.order.begin(), m.order.end());
            size_t before = m.evicted.size();
            // Drop the reentrant links first so that the drain order is plain.
            m.unpins_on_evict.clear();
            l.evict_all();
            std::vector<int> got(m.evicted.begin() + before, m.evicted.end());
            BOOST_REQUIRE(got == expected);
            BOOST_REQUIRE_EQUAL(l.stats().evictions, m.evicted.size());
            m.items.clear();
            BOOST_REQUIRE_EQUAL(l.memory_used(), 0u);
        }
    }
}

BOOST_AUTO_TEST_CASE(test_lru_evicts_coldest_first) {
    struct counted final : lru_item {
        std::vector<int>* log;
        int id;
        void on_evict() noexcept override {
            log->push_back(id);
            delete this;
        }
    };
    std::vector<int> log;
    lru l(300);
    std::vector<counted*> items;
    for (int i = 0; i < 3; ++i) {
        auto* c = new counted;
        c->log = &log;
        c->id = i;
        l.charge(*c, 100);
        l.link(*c);
        items.push_back(c);
    }
    BOOST_CHECK(log.empty());
    l.touch(*items[0]);  // order now 1, 2, 0
    auto* c = new counted;
    c->log = &log;
    c->id = 3;
    l.charge(*c, 150);  // pinned: evicts nothing yet
    BOOST_CHECK(log.empty());
    l.evict_to_budget();  // 450 > 300: 1 and 2 go
    BOOST_CHECK((log == std::vector<int>{1, 2}));
    l.link(*c);
    BOOST_CHECK_EQUAL(l.memory_used(), 250u);
    l.evict_all();
    BOOST_CHECK((log == std::vector<int>{1, 2, 0, 3}));
    BOOST_CHECK_EQUAL(l.memory_used(), 0u);
}

namespace {

// An item that gives back `chunk` bytes per eviction step and goes back to the cold end, until it holds no more
// than a chunk: then it goes whole (as a row cache partition gives back its rows).
struct chunked_item final : lru_item {
    lru* l;
    size_t chunk;
    std::vector<int>* log;
    int id;
    bool* gone;
    chunked_item(lru* l, size_t chunk, std::vector<int>* log, int id, bool* gone)
        : l(l), chunk(chunk), log(log), id(id), gone(gone) {}
    void on_evict() noexcept override {
        log->push_back(id);
        if (charged() > chunk) {
            l->release(*this, chunk);
            l->link_coldest(*this);
            return;
        }
        l->discharge(*this);
        *gone = true;
    }
};

} // namespace

// An item giving back chunks stays the coldest: the running eviction takes chunk after chunk from it, and nothing
// hotter, until the budget is met; release() keeps the item charged and the total true.
BOOST_AUTO_TEST_CASE(test_lru_partial_eviction_keeps_the_item_coldest) {
    lru l(1000);
    std::vector<int> log;
    bool gone[3] = {};
    std::vector<std::unique_ptr<chunked_item>> items;
    for (int i = 0; i < 3; ++i) {
        items.push_back(std::make_unique<chunked_item>(&l, 100, &log, i, &gone[i]));
        l.charge(*items.back(), 300);
        l.link(*items.back());
    }
    BOOST_REQUIRE_EQUAL(l.memory_used(), 900u);
    BOOST_REQUIRE(log.empty());
    // 250 over: item 0 (coldest) gives back three chunks, the last one whole.
    l.set_budget(650);
    BOOST_REQUIRE(log == (std::vector<int>{0, 0, 0}));
    BOOST_REQUIRE(gone[0]);
    BOOST_REQUIRE(!gone[1] && !gone[2]);
    BOOST_REQUIRE_EQUAL(l.memory_used(), 600u);
    // 50 over: one chunk of item 1, which stays charged and coldest.
    l.set_budget(550);
    BOOST_REQUIRE(log == (std::vector<int>{0, 0, 0, 1}));
    BOOST_REQUIRE_EQUAL(items[1]->charged(), 200u);
    BOOST_REQUIRE(items[1]->is_linked());
    BOOST_REQUIRE_EQUAL(l.memory_used(), 500u);
    l.set_budget(450);
    BOOST_REQUIRE_EQUAL(log.back(), 1);
    BOOST_REQUIRE_EQUAL(l.memory_used(), 400u);
    for (int i = 0; i < 3; ++i) {
        if (!gone[i]) {
            l.unlink(*items[i]);
            l.discharge(*items[i]);
        }
    }
}
