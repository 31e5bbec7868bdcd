// What the database's .cc files share: a table's entry on a shard, wall-clock times, qualified table names.
// Internal to db/database*.cc; not part of the database's interface.
#pragma once

#include "db/database.hh"
#include "db/table_stats.hh"
#include "runtime/condition_variable.hh"
#include "runtime/gate.hh"

#include <chrono>
#include <memory>
#include <cstdint>
#include <string>
#include <string_view>

namespace reef {

struct database::table_entry {
    std::shared_ptr<table> t;
    // Writes between their commitlog add and their memtable apply hold it: a replacement closes it first.
    std::unique_ptr<gate> writes = std::make_unique<gate>();
    // An ALTER or TRUNCATE replaces the table: writes wait for it.
    bool paused = false;
    condition_variable resumed;
    // Kept across the table's replacements (ALTER, TRUNCATE), as the table's identity is.
    table_stats stats;
};

namespace db_detail {

inline int64_t now_micros() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline int64_t now_millis() { return now_micros() / 1000; }

// "ks.t", as Cassandra names a table in messages and snapshot tags.
inline std::string qualified(std::string_view ks, std::string_view t) {
    return std::string(ks) + "." + std::string(t);
}

} // namespace db_detail

} // namespace reef
