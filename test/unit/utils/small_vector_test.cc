// Tests of utils::small_vector: random operation sequences compared with std::vector, for trivial and owning
// element types, across the inline and spilled states (copies and moves of each), with every element counted.
#include "utils/small_vector.hh"

#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

using reef::utils::small_vector;

namespace {

// An owning element that counts the live instances, so that a leak or a double destruction shows.
struct counted {
    static inline long live = 0;
    std::string s;

    counted() { ++live; }
    explicit counted(std::string v) : s(std::move(v)) { ++live; }
    counted(const counted& o) : s(o.s) { ++live; }
    counted(counted&& o) noexcept : s(std::move(o.s)) { ++live; }
    counted& operator=(const counted&) = default;
    counted& operator=(counted&&) noexcept = default;
    ~counted() { --live; }
    bool operator==(const counted& o) const { return s == o.s; }
};

template <typename T>
T make_value(std::mt19937_64& rng) {
    uint64_t v = rng();
    if constexpr (std::is_same_v<T, int>) {
        return int(v % 1000);
    } else {
        // Short strings live inside std::string, long ones on the heap: both kinds must survive relocation.
        std::string s(v % 3 == 0 ? 40 : v % 5, char('a' + v % 26));
        s += std::to_string(v % 1000);
        if constexpr (std::is_same_v<T, std::string>) {
            return s;
        } else {
            return T(std::move(s));
        }
    }
}

template <typename T, size_t N>
void check_same(const small_vector<T, N>& sv, const std::vector<T>& model) {
    BOOST_REQUIRE_EQUAL(sv.size(), model.size());
    BOOST_REQUIRE_EQUAL(sv.empty(), model.empty());
    BOOST_REQUIRE(sv.capacity() >= sv.size());
    BOOST_REQUIRE_EQUAL(sv.is_inline(), sv.capacity() == N);
    BOOST_REQUIRE_EQUAL(sv.external_memory_usage(), sv.is_inline() ? 0 : sv.capacity() * sizeof(T));
    for (size_t i = 0; i < model.size(); ++i) {
        BOOST_REQUIRE(sv[i] == model[i]);
    }
    size_t i = 0;
    for (auto& e : sv) {
        BOOST_REQUIRE(e == model[i++]);
    }
    BOOST_REQUIRE_THROW(sv.at(model.size()), std::out_of_range);
}

// One random sequence of operations on a small_vector and a std::vector side by side; every few steps a copy or
// a move replaces the vector under test (from whatever state it is in: inline, spilled, empty).
template <typename T, size_t N>
void random_sequence(std::mt19937_64& rng, int steps) {
    small_vector<T, N> sv;
    std::vector<T> model;
    auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
    for (int step = 0; step < steps; ++step) {
        // Sizes hover around N so that both states and the transitions between them come often.
        bool grow = model.size() < 3 * N || rng() % 3 == 0;
        switch (rng() % 16) {
        case 0:
        case 1:
            if (grow) {
                auto v = make_value<T>(rng);
                sv.push_back(v);
                model.push_back(v);
                break;
            }
            [[fallthrough]];
        case 2:
            if (!model.empty()) {
                sv.pop_back();
                model.pop_back();
            }
            break;
        case 3: {
            auto v = make_value<T>(rng);
            sv.emplace_back(v);
            model.emplace_back(std::move(v));
            break;
        }
        case 4:
        case 5: {
            size_t at = pick(model.size() + 1);
            auto v = make_value<T>(rng);
            auto it = sv.insert(sv.begin() + at, v);
            BOOST_REQUIRE(it == sv.begin() + at);
            model.insert(model.begin() + at, v);
            break;
        }
        case 6:
            // Inserting one of its own elements (the reference must survive the growth it may cause).
            if (!model.empty()) {
                size_t from = pick(model.size());
                size_t at = pick(model.size() + 1);
                sv.insert(sv.begin() + at, sv[from]);
                model.insert(model.begin() + at, T(model[from]));
                sv.push_back(sv[from % sv.size()]);
                model.push_back(T(model[from % model.size()]));
            }
            break;
        case 7:
            if (!model.empty()) {
                size_t at = pick(model.size());
                auto it = sv.erase(sv.begin() + at);
                BOOST_REQUIRE(it == sv.begin() + at);
                model.erase(model.begin() + at);
            }
            break;
        case 8: {
            size_t a = pick(model.size() + 1), b = pick(model.size() + 1);
            if (a > b) {
                std::swap(a, b);
            }
            sv.erase(sv.begin() + a, sv.begin() + b);
            model.erase(model.begin() + a, model.begin() + b);
            break;
        }
        case 9: {
            std::vector<T> more;
            for (size_t i = pick(2 * N + 2); i > 0; --i) {
                more.push_back(make_value<T>(rng));
            }
            size_t at = pick(model.size() + 1);
            sv.insert(sv.begin() + at, more.begin(), more.end());
            model.insert(model.begin() + at, more.begin(), more.end());
            break;
        }
        case 10: {
            // Copies: construction and assignment onto a vector in another state.
            small_vector<T, N> copy(sv);
            check_same(copy, model);
            BOOST_REQUIRE(copy == sv);
            small_vector<T, N> other;
            for (size_t i = pick(3 * N); i > 0; --i) {
                other.push_back(make_value<T>(rng));
            }
            other = copy;
            BOOST_REQUIRE(other == sv);
            if (rng() % 2) {
                sv = other;
            }
            break;
        }
        case 11: {
            // Moves: the moved-from vector is empty and usable again.
            small_vector<T, N> moved(std::move(sv));
            check_same(moved, model);
            BOOST_REQUIRE(sv.empty());
            sv.push_back(make_value<T>(rng));
            small_vector<T, N> other;
            for (size_t i = pick(3 * N); i > 0; --i) {
                other.push_back(make_value<T>(rng));
            }
            other = std::move(moved);
            check_same(other, model);
            sv = std::move(other);
            BOOST_REQUIRE(other.empty());
            break;
        }
        case 12: {
            size_t n = pick(4 * N + 2);
            sv.reserve(n);
            BOOST_REQUIRE(sv.capacity() >= n);
            model.reserve(n);
            break;
        }
        case 13: {
            size_t n = pick(3 * N + 1);
            sv.resize(n);
            model.resize(n);
            break;
        }
        case 14:
            sv.shrink_to_fit();
            if (model.size() <= N) {
                BOOST_REQUIRE(sv.is_inline());
            }
            break;
        case 15:
            if (rng() % 4 == 0) {
                sv.clear();
                model.clear();
            } else if (!model.empty()) {
                // Assignment through an element, and == telling a difference.
                size_t at = pick(model.size());
                auto v = make_value<T>(rng);
                small_vector<T, N> before = sv;
                sv[at] = v;
                model[at] = v;
                BOOST_REQUIRE((before == sv) == (before[at] == v));
            }
            break;
        }
        check_same(sv, model);
    }
}

template <typename T, size_t N>
void random_sequences(int sequences, int steps) {
    uint64_t seed = reef::testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int i = 0; i < sequences; ++i) {
        BOOST_TEST_CONTEXT("seed " << seed << " N " << N << " sequence " << i) {
            random_sequence<T, N>(rng, steps);
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(small_vector_of_int_matches_std_vector) {
    random_sequences<int, 1>(200, 200);
    random_sequences<int, 4>(200, 200);
}

BOOST_AUTO_TEST_CASE(small_vector_of_string_matches_std_vector) {
    random_sequences<std::string, 1>(200, 200);
    random_sequences<std::string, 2>(200, 200);
    random_sequences<std::string, 5>(100, 300);
}

BOOST_AUTO_TEST_CASE(small_vector_destroys_every_element_once) {
    long before = counted::live;
    random_sequences<counted, 1>(100, 200);
    random_sequences<counted, 3>(100, 200);
    BOOST_TEST(counted::live == before);
}

BOOST_AUTO_TEST_CASE(small_vector_states) {
    small_vector<std::string, 2> v;
    BOOST_TEST(v.is_inline());
    BOOST_TEST(v.capacity() == 2u);
    v.push_back("a");
    v.push_back(std::string(50, 'b'));
    BOOST_TEST(v.is_inline());
    BOOST_TEST(v.external_memory_usage() == 0u);
    v.push_back("c");
    BOOST_TEST(!v.is_inline());
    BOOST_TEST(v.external_memory_usage() >= 3 * sizeof(std::string));
    // A spilled vector hands its block over on a move.
    const std::string* data = v.data();
    small_vector<std::string, 2> w(std::move(v));
    BOOST_TEST(w.data() == data);
    BOOST_TEST(v.empty());
    BOOST_TEST(v.is_inline());
    // An inline one moves its elements.
    small_vector<std::string, 2> x{"p", std::string(40, 'q')};
    small_vector<std::string, 2> y(std::move(x));
    BOOST_TEST(y.is_inline());
    BOOST_TEST((y == small_vector<std::string, 2>{"p", std::string(40, 'q')}));
    BOOST_TEST(x.empty());
    w.erase(w.begin() + 1, w.end());
    w.shrink_to_fit();
    BOOST_TEST(w.is_inline());
    BOOST_TEST((w == small_vector<std::string, 2>{"a"}));
}
