// reef perf-fast-forward: the test groups, with ScyllaDB's parameter sets (../shared/notes/scylla-read-path.md,
// section 2) and the fragment count each read must produce.
#include "test/perf/perf_fast_forward.hh"

#include "runtime/with_closeable.hh"

#include <algorithm>
#include <fmt/core.h>
#include <limits>

namespace reef::perf::pff {

namespace {

using results = std::vector<test_result>;

bool counts(const mutation_fragment& f) {
    // Static rows, clustering rows and range tombstone changes; partition start and end are not fragments here.
    return !std::holds_alternative<partition_start>(f) && !std::holds_alternative<partition_end>(f);
}

// The fragments up to the end of the stream (or of the forwarding window), straight from the reader's buffer.
future<uint64_t> consume_all(mutation_reader& rd) {
    uint64_t n = 0;
    while (true) {
        if (rd.is_buffer_empty()) {
            if (rd.is_end_of_stream()) {
                break;
            }
            co_await rd.fill_buffer();
            continue;
        }
        n += counts(rd.pop_mutation_fragment());
    }
    co_return n;
}

// ARCHITECTURE.md's coroutine rule 5: in a debug build every await that completes without suspending leaves
// frames on the stack until something really suspends, and a loop of thousands of windows or partitions read from
// buffers already filled can run out of stack. A real suspension per step unwinds them; other builds skip it.
#ifdef REEF_DEBUG
#define REEF_PFF_UNWIND_IN_DEBUG() co_await yield()
#else
#define REEF_PFF_UNWIND_IN_DEBUG() \
    do {                           \
    } while (false)
#endif

// Every partition to the end: the window's fragments, then next_partition() and on.
future<uint64_t> consume_all_with_next_partition(mutation_reader& rd) {
    uint64_t n = 0;
    do {
        REEF_PFF_UNWIND_IN_DEBUG();
        n += co_await consume_all(rd);
        co_await rd.next_partition();
        co_await rd.fill_buffer();
    } while (!rd.is_end_of_stream() || !rd.is_buffer_empty());
    co_return n;
}

future<> expect_partition_start(mutation_reader& rd) {
    auto f = co_await rd();
    if (!f || !std::holds_alternative<partition_start>(*f)) {
        throw std::runtime_error(f ? fmt::format("expected partition_start, read {}", kind_name(*f))
                                   : "expected partition_start, the stream ended");
    }
}

// n reads then m skips, to n_rows: how many are read.
uint64_t count_for_skip_pattern(uint64_t n, uint64_t n_read, uint64_t n_skip) {
    return n / (n_read + n_skip) * n_read + std::min(n % (n_read + n_skip), n_read);
}

template <typename... T>
std::vector<std::string> params(const T&... v) {
    return {fmt::format("{}", v)...};
}

// One clustering range (built outside coroutines: GCC 12 mishandles initializer lists in coroutine frames).
clustering_ranges one_range(position_range r) {
    clustering_ranges out;
    out.push_back(std::move(r));
    return out;
}

clustering_ranges full_slice() {
    return one_range(position_range::full());
}

dht::partition_range singular_pk0() {
    return dht::partition_range::singular(int_pkey(0));
}

// A window of rows [offset, offset + n): the rows' own positions, as ScyllaDB's position_range over for_key.
position_range rows_window(int64_t offset, int64_t n) {
    return {position_in_partition::for_key(present_ck(offset)), position_in_partition::for_key(present_ck(offset + n))};
}

// ---- large partition ----

// A range of row numbers (row i has clustering key 2i + 1), bounds optional and inclusive or not.
struct int_bound {
    int64_t value;
    bool inclusive = true;
};
struct int_range {
    std::optional<int_bound> start, end;
    bool singular = false;

    static int_range make(int_bound a, int_bound b) { return {a, b}; }
    static int_range make_singular(int64_t v) { return {int_bound{v}, int_bound{v}, true}; }
    static int_range starting_with(int_bound a) { return {a, std::nullopt}; }
    static int_range ending_with(int_bound b) { return {std::nullopt, b}; }

    std::string to_string() const {
        if (singular) {
            return fmt::format("{{{}}}", start->value);
        }
        return fmt::format("{}{}, {}{}", start ? (start->inclusive ? "[" : "(") : "(",
                           start ? std::to_string(start->value) : "-inf", end ? std::to_string(end->value) : "+inf",
                           end ? (end->inclusive ? "]" : ")") : ")");
    }
    // How many of rows 0..n-1 it holds.
    uint64_t cardinality_within(int64_t n) const {
        int64_t lo = start ? start->value + (start->inclusive ? 0 : 1) : 0;
        int64_t hi = end ? end->value - (end->inclusive ? 0 : 1) : n - 1;
        lo = std::max<int64_t>(lo, 0);
        hi = std::min<int64_t>(hi, n - 1);
        return hi >= lo ? uint64_t(hi - lo + 1) : 0;
    }
    // The clustering slice: an inclusive start sits before its key, an exclusive one after it; ends mirror that.
    position_range to_positions() const {
        auto s = !start ? position_in_partition::before_all_clustered_rows()
                 : start->inclusive ? position_in_partition::before_key(present_ck(start->value))
                                    : position_in_partition::after_key(present_ck(start->value));
        auto e = !end ? position_in_partition::after_all_clustered_rows()
                 : end->inclusive ? position_in_partition::after_key(present_ck(end->value))
                                  : position_in_partition::before_key(present_ck(end->value));
        return {s, e};
    }
};

// The whole partition read with n_read rows taken, n_skip skipped, through clustering windows.
future<test_result> scan_rows_with_stride(run_context& ctx, int64_t n_rows, int64_t n_read, int64_t n_skip) {
    auto rd = ctx.sst.make_reader(
        {.slice = full_slice(), .forwarding = n_skip ? streamed_forwarding::yes : streamed_forwarding::no});
    co_return co_await with_closeable(std::move(rd), [&, n_rows, n_read, n_skip](mutation_reader& rd) -> future<test_result> {
        auto before = metrics_snapshot::take();
        co_await expect_partition_start(rd);
        uint64_t frags = 0;
        for (int64_t ck = 0; ck < n_rows; ck += n_read + n_skip) {
            REEF_PFF_UNWIND_IN_DEBUG();
            if (n_skip) {
                co_await rd.fast_forward_to(rows_window(ck, n_read));
            }
            frags += co_await consume_all(rd);
        }
        co_return test_result(before, frags);
    });
}

// One forwarding window [offset, offset + n_read) of the partition, from a reader over `pr`.
future<test_result> slice_rows(run_context& ctx, dht::partition_range pr, int64_t offset, int64_t n_read) {
    auto rd = ctx.sst.make_reader({.range = std::move(pr), .slice = full_slice(), .forwarding = streamed_forwarding::yes});
    co_return co_await with_closeable(std::move(rd), [&, offset, n_read](mutation_reader& rd) -> future<test_result> {
        auto before = metrics_snapshot::take();
        co_await expect_partition_start(rd);
        co_await rd.fast_forward_to(rows_window(offset, n_read));
        auto frags = co_await consume_all_with_next_partition(rd);
        co_return test_result(before, frags);
    });
}

// Partition 0 read with a clustering slice, everything the reader gives.
future<test_result> read_slice(run_context& ctx, clustering_ranges slice) {
    auto rd = ctx.sst.make_reader({.range = singular_pk0(), .slice = std::move(slice)});
    co_return co_await with_closeable(std::move(rd), [](mutation_reader& rd) -> future<test_result> {
        auto before = metrics_snapshot::take();
        auto frags = co_await consume_all(rd);
        co_return test_result(before, frags);
    });
}

// A slice from row n/2 on, then windows [1, 2) (outside it) and [n/2 - 2, n/2 + 2): two rows.
future<test_result> forwarding_with_restriction(run_context& ctx, int64_t n_rows, bool single_partition) {
    int64_t first = n_rows / 2;
    auto slice = one_range({position_in_partition::before_key(present_ck(first)),
                            position_in_partition::after_all_clustered_rows()});
    auto rd = ctx.sst.make_reader({.range = single_partition ? singular_pk0() : dht::partition_range::full(),
                                   .slice = std::move(slice),
                                   .forwarding = streamed_forwarding::yes});
    co_return co_await with_closeable(std::move(rd), [&, first](mutation_reader& rd) -> future<test_result> {
        auto before = metrics_snapshot::take();
        co_await expect_partition_start(rd);
        uint64_t frags = co_await consume_all(rd);
        co_await rd.fast_forward_to(rows_window(1, 1));
        frags += co_await consume_all(rd);
        co_await rd.fast_forward_to(rows_window(first - 2, 4));
        frags += co_await consume_all_with_next_partition(rd);
        co_return test_result(before, frags);
    });
}

int64_t rows_of(const run_context& ctx) {
    return int64_t(ctx.cfg.rows);
}

// ScyllaDB's pairs (and more) of reads of partition 0 restricted to a range of rows, for n rows. A plain function:
// GCC 12 cannot keep an initializer list's array in a coroutine frame ("array used as initializer").
std::vector<std::vector<int_range>> single_key_slice_cases(int64_t n) {
    using R = int_range;
    return {
        {R::make({0}, {1}), R::make({0}, {1})},
        {R::make({0}, {n / 2}), R::make({0}, {n / 2})},
        {R::make({0}, {n}), R::make({0}, {n})},
        {R::make({1}, {100, false}), R::make({100}, {109})},                                  // adjacent, no overlap
        {R::make({1}, {100}), R::make_singular(100)},                                         // adjacent, contained
        {R::make({1}, {100}), R::make({51}, {150})},                                          // overlap
        {R::make({1}, {100}), R::make({51}, {70})},                                           // enclosed
        {R::make({51}, {70}), R::make({41}, {80}), R::make({31}, {100})},                     // enclosing
        {R::make({0}, {100, false}), R::make_singular(100)},                                  // adjacent, singular excluded
        {R::make({100, false}, {200}), R::make_singular(100)},                                // adjacent, singular excluded
        {R::ending_with({100}), R::make({10}, {20}), R::make_singular(-1)},
        {R::starting_with({100}), R::make({150}, {159}), R::make_singular(n - 1), R::make_singular(n + 1)},
        {R::make({10}, {20, false}), R::make({30}, {40, false}), R::make({60}, {70, false}), R::make({90}, {100, false}),
         R::make({0}, {100, false})},                                                         // many gaps
        {R::make({10}, {20, false}), R::make({30}, {40, false}), R::make({60}, {70, false}), R::make({90}, {100, false}),
         R::make({10}, {100, false})},                                                        // many gaps
    };
}

future<> large_partition_single_key_slice(run_context& ctx) {
    int64_t n = rows_of(ctx);
    if (n <= 200) {
        throw std::runtime_error("large-partition-single-key-slice needs more than 200 rows (--rows)");
    }
    if (!ctx.sst.cache_enabled()) {
        ctx.out.note("(without --enable-cache each read goes to the sstable, so ScyllaDB's check that a read inside "
                     "an earlier one of its case does no I/O is not made)");
    }
    auto cases = single_key_slice_cases(n);
    position_in_partition_comparator cmp(*ctx.sst.schema());
    for (auto& c : cases) {
        co_await run_test_case(ctx, [&]() -> future<results> {
            results rs;
            for (size_t i = 0; i < c.size(); ++i) {
                auto range = c[i].to_positions();
                // Inside an earlier read of the case: the row cache holds it all.
                bool inside_earlier = false;
                for (size_t j = 0; j < i; ++j) {
                    auto earlier = c[j].to_positions();
                    inside_earlier |= cmp(earlier.start, range.start) <= 0 && cmp(range.end, earlier.end) <= 0;
                }
                auto r = co_await read_slice(ctx, one_range(range));
                r.params = {std::string(i == 0 ? "->" : ""), c[i].to_string()};
                r.expect_fragments(c[i].cardinality_within(n));
                if (ctx.sst.cache_enabled() && inside_earlier) {
                    r.expect_no_disk_reads();
                }
                rs.push_back(std::move(r));
            }
            co_return rs;
        });
    }
}

const std::vector<std::pair<int64_t, int64_t>>& skip_patterns() {
    static const std::vector<std::pair<int64_t, int64_t>> p = {
        {1, 0},  {1, 1},  {1, 8},  {1, 16},  {1, 32},  {1, 64},   {1, 256},  {1, 1024}, {1, 4096},
        {64, 1}, {64, 8}, {64, 16}, {64, 32}, {64, 64}, {64, 256}, {64, 1024}, {64, 4096},
    };
    return p;
}

future<> large_partition_skips(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (auto [n_read, n_skip] : skip_patterns()) {
        co_await run_test_case(ctx, [&, n_read, n_skip]() -> future<results> {
            auto r = co_await scan_rows_with_stride(ctx, n, n_read, n_skip);
            r.params = params(n_read, n_skip);
            r.expect_fragments(count_for_skip_pattern(uint64_t(n), uint64_t(n_read), uint64_t(n_skip)));
            co_return results{std::move(r)};
        });
    }
}

// offset 0 and n/2, 1 / 32 / 256 / 4096 rows.
std::vector<std::pair<int64_t, int64_t>> slicing_params(int64_t n) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t offset : {int64_t(0), n / 2}) {
        for (int64_t read : {1, 32, 256, 4096}) {
            out.emplace_back(offset, read);
        }
    }
    return out;
}

future<> large_partition_slicing(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (auto [offset, read] : slicing_params(n)) {
        co_await run_test_case(ctx, [&, offset, read]() -> future<results> {
            auto r = co_await slice_rows(ctx, dht::partition_range::full(), offset, read);
            r.params = params(offset, read);
            r.expect_fragments(uint64_t(std::min(n - offset, read)));
            co_return results{std::move(r)};
        });
    }
}

future<> large_partition_slicing_clustering_keys(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (auto [offset, read] : slicing_params(n)) {
        co_await run_test_case(ctx, [&, offset, read]() -> future<results> {
            auto slice = one_range({position_in_partition::before_key(present_ck(offset)),
                                    position_in_partition::after_key(present_ck(offset + read - 1))});
            auto r = co_await read_slice(ctx, std::move(slice));
            r.params = params(offset, read);
            r.expect_fragments(uint64_t(std::min(n - offset, read)));
            co_return results{std::move(r)};
        });
    }
}

future<> large_partition_slicing_single_key_reader(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (auto [offset, read] : slicing_params(n)) {
        co_await run_test_case(ctx, [&, offset, read]() -> future<results> {
            auto r = co_await slice_rows(ctx, singular_pk0(), offset, read);
            r.params = params(offset, read);
            r.expect_fragments(uint64_t(std::min(n - offset, read)));
            co_return results{std::move(r)};
        });
    }
}

std::vector<std::tuple<int64_t, int64_t, int64_t>> select_few_rows_cases(int64_t n) {
    return {{n / 2, 1, 1}, {n / 2 + 1, 1, 1}, {0, n, 1},        {0, n / 2, 2},
            {0, n / 4, 4}, {0, n / 8, 8},     {0, n / 16, 16}, {0, 2, n / 2}};
}

future<> large_partition_select_few_rows(run_context& ctx) {
    int64_t n = rows_of(ctx);
    // (offset, stride, rows): row offset + i * stride for i < rows, each as a singular range.
    for (auto [offset, stride, rows] : select_few_rows_cases(n)) {
        co_await run_test_case(ctx, [&, offset, stride, rows]() -> future<results> {
            clustering_ranges slice;
            for (int64_t i = 0; i < rows; ++i) {
                slice.push_back(position_range::for_prefix(present_ck(i * stride + offset)));
            }
            auto r = co_await read_slice(ctx, std::move(slice));
            r.params = params(offset, stride, rows);
            r.expect_fragments(uint64_t(rows));
            co_return results{std::move(r)};
        });
    }
}

std::vector<int64_t> missing_rows_offsets(int64_t n) {
    return {0, 1, n / 3, n / 2 - 1, n / 2, n / 2 + 1, n * 2 / 3, n - 1, n, n * 2};
}

future<> large_partition_select_missing_rows(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (int64_t offset : missing_rows_offsets(n)) {
        co_await run_test_case(ctx, [&, offset]() -> future<results> {
            auto r = co_await read_slice(ctx, one_range(position_range::for_prefix(missing_ck(offset))));
            r.params = params(offset);
            r.expect_fragments(0);
            co_return results{std::move(r)};
        });
    }
}

future<> large_partition_forwarding(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (int single = 0; single < 2; ++single) {
        co_await run_test_case(ctx, [&, single]() -> future<results> {
            auto r = co_await forwarding_with_restriction(ctx, n, single);
            r.params = {std::string(single ? "no" : "yes")};
            r.expect_fragments(2);
            co_return results{std::move(r)};
        });
    }
}

// ---- small partitions ----

// The dataset's keys in ring order (pk 0..n-1 by token).
std::vector<dht::decorated_key> sorted_keys(int64_t n) {
    std::vector<dht::decorated_key> keys;
    keys.reserve(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
        keys.push_back(int_pkey(int32_t(i)));
    }
    std::sort(keys.begin(), keys.end());
    return keys;
}

const std::vector<dht::decorated_key>& keys_of(const run_context& ctx) {
    static std::vector<dht::decorated_key> keys;
    static uint64_t made_for = std::numeric_limits<uint64_t>::max();
    if (made_for != ctx.cfg.rows) {
        keys = sorted_keys(int64_t(ctx.cfg.rows));
        made_for = ctx.cfg.rows;
    }
    return keys;
}

dht::partition_range keys_range(const std::vector<dht::decorated_key>& keys, size_t first, size_t last) {
    return dht::partition_range(dht::partition_range::bound{dht::ring_position::for_key(keys[first]), true},
                                dht::partition_range::bound{dht::ring_position::for_key(keys[last]), true});
}

// Partitions read n_read at a time, n_skip skipped, by partition-range forwarding; (1, 0) is one full scan.
future<test_result> scan_with_stride_partitions(run_context& ctx, int64_t n_read, int64_t n_skip) {
    auto& keys = keys_of(ctx);
    int64_t n = int64_t(keys.size());
    // With skips, the reader starts on a range that holds nothing (ending before the first key).
    auto pr = n_skip ? dht::partition_range(std::nullopt,
                                            dht::partition_range::bound{dht::ring_position::for_key(keys[0]), false})
                     : dht::partition_range::full();
    auto rd = ctx.sst.make_reader({.range = pr, .slice = full_slice()});
    co_return co_await with_closeable(std::move(rd), [&, n, n_read, n_skip](mutation_reader& rd) -> future<test_result> {
        auto before = metrics_snapshot::take();
        uint64_t frags = 0;
        for (int64_t pk = 0; pk < n; pk += n_read + n_skip) {
            REEF_PFF_UNWIND_IN_DEBUG();
            if (n_skip) {
                co_await rd.fast_forward_to(keys_range(keys, size_t(pk), size_t(std::min(n, pk + n_read) - 1)));
            }
            frags += co_await consume_all(rd);
        }
        co_return test_result(before, frags);
    });
}

future<> small_partition_skips(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (auto [n_read, n_skip] : skip_patterns()) {
        co_await run_test_case(ctx, [&, n_read, n_skip]() -> future<results> {
            auto r = co_await scan_with_stride_partitions(ctx, n_read, n_skip);
            r.params = params(n_read, n_skip);
            r.expect_fragments(count_for_skip_pattern(uint64_t(n), uint64_t(n_read), uint64_t(n_skip)));
            if (n_skip == 0 && !r.error &&
                (r.after.index.hits != r.before.index.hits || r.after.index.misses != r.before.index.misses)) {
                r.error = "expected no index reads for a full scan";
            }
            co_return results{std::move(r)};
        });
    }
}

future<> small_partition_slicing(run_context& ctx) {
    int64_t n = rows_of(ctx);
    for (auto [offset, read] : slicing_params(n)) {
        co_await run_test_case(ctx, [&, offset, read]() -> future<results> {
            auto& keys = keys_of(ctx);
            auto pr = keys_range(keys, size_t(offset), size_t(std::min(n, offset + read) - 1));
            auto rd = ctx.sst.make_reader({.range = pr, .slice = full_slice()});
            auto r = co_await with_closeable(std::move(rd), [](mutation_reader& rd) -> future<test_result> {
                auto before = metrics_snapshot::take();
                auto frags = co_await consume_all_with_next_partition(rd);
                co_return test_result(before, frags);
            });
            r.params = params(offset, read);
            r.expect_fragments(uint64_t(std::min(n - offset, read)));
            co_return results{std::move(r)};
        });
    }
}

} // namespace

const std::vector<test_group>& all_test_groups() {
    using k = dataset_kind;
    static const std::vector<test_group> groups = {
        {"large-partition-single-key-slice",
         "Testing effectiveness of caching of large partition, single-key slicing reads", k::large_partition, true,
         large_partition_single_key_slice},
        {"large-partition-skips",
         "Testing scanning large partition with skips.\nReads whole range interleaving reads with skips according "
         "to read-skip pattern",
         k::large_partition, false, large_partition_skips},
        {"large-partition-slicing", "Testing slicing of large partition", k::large_partition, false,
         large_partition_slicing},
        {"large-partition-slicing-clustering-keys", "Testing slicing of large partition using clustering keys",
         k::large_partition, false, large_partition_slicing_clustering_keys},
        {"large-partition-slicing-single-key-reader", "Testing slicing of large partition, single-partition reader",
         k::large_partition, false, large_partition_slicing_single_key_reader},
        {"large-partition-select-few-rows", "Testing selecting few rows from a large partition", k::large_partition,
         false, large_partition_select_few_rows},
        {"large-partition-select-missing-rows", "Testing single-row reads of a missing key from a large partition",
         k::large_partition, false, large_partition_select_missing_rows},
        {"large-partition-forwarding", "Testing forwarding with clustering restriction in a large partition",
         k::large_partition, false, large_partition_forwarding},
        {"small-partition-skips",
         "Testing scanning small partitions with skips.\nReads whole range interleaving reads with skips according "
         "to read-skip pattern",
         k::small_partition, false, small_partition_skips},
        {"small-partition-slicing", "Testing slicing small partitions", k::small_partition, false,
         small_partition_slicing},
    };
    return groups;
}

// Parameter columns per group (text widths as ScyllaDB prints them).
std::vector<param_column> group_params(const std::string& group) {
    if (group == "large-partition-single-key-slice") {
        return {{"", 2}, {"range", 14}};
    }
    if (group == "large-partition-skips" || group == "small-partition-skips") {
        return {{"read", 7}, {"skip", 7}};
    }
    if (group == "large-partition-select-few-rows") {
        return {{"offset", 7}, {"stride", 7}, {"rows", 7}};
    }
    if (group == "large-partition-select-missing-rows") {
        return {{"offset", 7}};
    }
    if (group == "large-partition-forwarding") {
        return {{"pk-scan", 7}};
    }
    return {{"offset", 7}, {"read", 7}};
}

} // namespace reef::perf::pff
