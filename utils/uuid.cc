// Time and random UUIDs: the clock state behind make_time_uuid is one atomic, shared by the shards.
#include "utils/uuid.hh"

#include <atomic>
#include <chrono>
#include <random>

namespace reef::utils {

namespace {

uint64_t random_u64() {
    static thread_local std::mt19937_64 rng{std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32)};
    return rng();
}

struct clock_identity {
    uint16_t clock_seq;
    uint64_t node;
};

const clock_identity& identity() {
    static const clock_identity id{uint16_t(random_u64() & 0x3fff), (random_u64() & 0xffffffffffffULL) | 0x010000000000ULL};
    return id;
}

std::atomic<uint64_t> last_timestamp{0};

} // namespace

uuid_bytes make_time_uuid_at(uint64_t unix_100ns, uint16_t clock_seq, uint64_t node) noexcept {
    uint64_t ts = (unix_100ns + uuid_epoch_offset_100ns) & 0x0fffffffffffffffULL;
    uint32_t time_low = uint32_t(ts);
    uint16_t time_mid = uint16_t(ts >> 32);
    uint16_t time_hi = uint16_t((ts >> 48) & 0x0fff) | 0x1000;
    uint16_t seq = uint16_t(clock_seq & 0x3fff) | 0x8000;
    uuid_bytes u{};
    for (int i = 0; i < 4; ++i) {
        u[i] = uint8_t(time_low >> (24 - 8 * i));
    }
    u[4] = uint8_t(time_mid >> 8);
    u[5] = uint8_t(time_mid);
    u[6] = uint8_t(time_hi >> 8);
    u[7] = uint8_t(time_hi);
    u[8] = uint8_t(seq >> 8);
    u[9] = uint8_t(seq);
    for (int i = 0; i < 6; ++i) {
        u[10 + i] = uint8_t(node >> (40 - 8 * i));
    }
    return u;
}

uuid_bytes make_time_uuid() {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    uint64_t t = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() / 100);
    uint64_t last = last_timestamp.load();
    uint64_t next;
    do {
        next = t > last ? t : last + 1;
    } while (!last_timestamp.compare_exchange_weak(last, next));
    auto& id = identity();
    return make_time_uuid_at(next, id.clock_seq, id.node);
}

uuid_bytes make_random_uuid() {
    uuid_bytes u;
    uint64_t a = random_u64(), b = random_u64();
    for (int i = 0; i < 8; ++i) {
        u[i] = uint8_t(a >> (56 - 8 * i));
        u[8 + i] = uint8_t(b >> (56 - 8 * i));
    }
    u[6] = uint8_t((u[6] & 0x0f) | 0x40);
    u[8] = uint8_t((u[8] & 0x3f) | 0x80);
    return u;
}

uint64_t time_uuid_unix_100ns(const uuid_bytes& u) noexcept {
    uint64_t time_low = uint64_t(u[0]) << 24 | uint64_t(u[1]) << 16 | uint64_t(u[2]) << 8 | u[3];
    uint64_t time_mid = uint64_t(u[4]) << 8 | u[5];
    uint64_t time_hi = (uint64_t(u[6]) << 8 | u[7]) & 0x0fff;
    return (time_hi << 48 | time_mid << 32 | time_low) - uuid_epoch_offset_100ns;
}

std::string to_string(const uuid_bytes& u, bool with_dashes) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 16; ++i) {
        if (with_dashes && (i == 4 || i == 6 || i == 8 || i == 10)) {
            out.push_back('-');
        }
        out.push_back(hex[u[i] >> 4]);
        out.push_back(hex[u[i] & 15]);
    }
    return out;
}

} // namespace reef::utils
