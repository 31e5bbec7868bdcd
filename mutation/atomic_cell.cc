// Reconciliation of two cell versions. See atomic_cell.hh and mutation/README.md.
#include "mutation/atomic_cell.hh"

#include <cstring>

namespace reef {

atomic_cell atomic_cell::expired_to_dead(deletion_time_type now) const {
    if (is_expiring() && !is_live(now)) {
        return make_dead(_timestamp, _local_deletion_time - _ttl);
    }
    return *this;
}

namespace {
int compare_unsigned(std::string_view a, std::string_view b) noexcept {
    size_t n = std::min(a.size(), b.size());
    if (int c = n ? std::memcmp(a.data(), b.data(), n) : 0) {
        return c;
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}
}

bool reconcile_wins(const atomic_cell& a, const atomic_cell& b) noexcept {
    // 1. The later write wins.
    if (a.timestamp() != b.timestamp()) {
        return a.timestamp() > b.timestamp();
    }
    bool a_deleting = a.local_deletion_time() != no_deletion_time;  // expiring or dead
    bool b_deleting = b.local_deletion_time() != no_deletion_time;
    if (a_deleting || b_deleting) {
        // 2. On a tie, an expiring or dead cell beats a plain live one
        //    (CASSANDRA-14592: the outcome must not depend on the clock).
        if (a_deleting != b_deleting) {
            return a_deleting;
        }
        // 3. A tombstone beats an expiring cell.
        bool a_dead = !a.is_expiring();
        bool b_dead = !b.is_expiring();
        if (a_dead != b_dead) {
            return a_dead;
        }
        // 4. Both expiring or both dead: the later deletion/expiry time wins.
        if (a.local_deletion_time() != b.local_deletion_time()) {
            return a.local_deletion_time() > b.local_deletion_time();
        }
    }
    // 5. Finally the greater value, as unsigned bytes.
    if (int c = compare_unsigned(a.value(), b.value())) {
        return c > 0;
    }
    // 6. Equal but for the TTL (two expiring writes of one value at one
    //    timestamp with the same expiry): Cassandra keeps either; the greater
    //    TTL makes the result independent of the merge order.
    return a.ttl() >= b.ttl();
}

} // namespace reef
