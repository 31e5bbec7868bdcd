// The DeleteRange workload's definition (see delete_range_workload.hh and ../shared/benchmarks/delete-range.md).
#include "test/perf/delete_range_workload.hh"

#include <cstring>
#include <fmt/core.h>
#include <stdexcept>
#include <time.h>
#include <utility>

namespace reef::perf {

const char* variant_name(delete_variant v) noexcept {
    switch (v) {
    case delete_variant::range: return "range";
    case delete_variant::scan: return "scan";
    case delete_variant::none: return "none";
    }
    return "?";
}

delete_variant parse_variant(const std::string& name) {
    for (auto v : {delete_variant::range, delete_variant::scan, delete_variant::none}) {
        if (name == variant_name(v)) {
            return v;
        }
    }
    throw std::invalid_argument(fmt::format("--variant '{}': expected range, scan or none", name));
}

void delete_range_workload::validate() const {
    if (rows == 0 || partitions == 0 || rows % partitions != 0) {
        throw std::invalid_argument(fmt::format("--rows {} must be a positive multiple of --partitions {}", rows, partitions));
    }
    if (rows > UINT32_MAX) {
        throw std::invalid_argument(fmt::format("--rows {} is above 2^32 - 1", rows));
    }
    if (width > rows_per_partition()) {
        throw std::invalid_argument(fmt::format("range-deletion width {} is above the {} rows of a partition", width,
                                                rows_per_partition()));
    }
    if ((reef_block_kb & (reef_block_kb - 1)) != 0 || reef_block_kb == 0 || reef_block_kb > (1 << 20)) {
        throw std::invalid_argument(fmt::format("--reef-block-kb {} is not a power of two up to 1 GiB", reef_block_kb));
    }
    uint64_t last = rows - rows / 10 * 9;
    if (tombstones > last) {
        throw std::invalid_argument(fmt::format("--tombstones {}: at most one per write of the last tenth ({})",
                                                tombstones, last));
    }
}

bool delete_range_workload::is_documented_scale() const noexcept {
    return rows == 1'000'000 && partitions == 20 && tombstones == 2'000 && width == 100 && ops == 100'000 &&
           long_ops == 10'000;
}

std::vector<uint32_t> delete_range_workload::load_order() const {
    std::vector<uint32_t> perm(rows);
    for (uint64_t i = 0; i < rows; ++i) {
        perm[i] = uint32_t(i);
    }
    splitmix64 rng(1);
    for (uint64_t k = rows - 1; k >= 1; --k) {
        uint64_t j = rng.next() % (k + 1);
        std::swap(perm[k], perm[j]);
    }
    return perm;
}

void row_value(uint64_t i, char* out) {
    splitmix64 rng(i * 0x2545F4914F6CDD1Dull + 7);
    for (uint64_t at = 0; at < value_size; at += 8) {
        uint64_t v = rng.next();
        char le[8];
        for (int b = 0; b < 8; ++b) {
            le[b] = char(v >> (8 * b));
        }
        std::memcpy(out + at, le, std::min<uint64_t>(8, value_size - at));
    }
}

deletion_schedule::deletion_schedule(const delete_range_workload& wl)
    : _wl(wl), _begin(wl.rows / 10 * 9), _every(wl.tombstones ? (wl.rows - _begin) / wl.tombstones : 0) {}

std::optional<range_deletion> deletion_schedule::after_write(uint64_t w) {
    if (_wl.tombstones == 0 || w <= _begin || (w - _begin) % _every != 0 || (w - _begin) / _every > _wl.tombstones) {
        return std::nullopt;
    }
    uint64_t r = _wl.rows_per_partition();
    uint64_t p = _rng.next() % _wl.partitions;
    uint64_t c = _rng.next() % (r - _wl.width + 1);
    return range_deletion{p, c, c + _wl.width};
}

namespace {
double process_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
} // namespace

phase_timer::phase_timer() : _wall(std::chrono::steady_clock::now()), _cpu(process_cpu_seconds()) {}

void phase_timer::finish(phase_result& r) const {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - _wall).count();
    r.cpu_seconds = process_cpu_seconds() - _cpu;
}

} // namespace reef::perf
