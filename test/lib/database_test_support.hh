// Helpers of the sharded database's tests: a database run around a body, a write sent from a chosen shard, a
// query's result in the model's form, and counting a directory's files.
// Each does exactly what its name says and nothing else (no checks).
#pragma once

#include "db/database.hh"
#include "runtime/smp.hh"
#include "test/lib/mutation_model.hh"

#include <filesystem>
#include <string>
#include <vector>

namespace reef::testing {

// d.apply(m) called on `shard`, as a client connected there would (the database hops to the owner shard).
inline future<> apply_from(sharded<database>& db, shard_id shard, mutation m) {
    auto write = [m = std::move(m)](database& d) { return d.apply(m); };
    co_await db.invoke_on(shard, write);
}

// A query's mutations as the model gives them: shadowed data dropped, partitions left empty removed.
inline std::vector<mutation> query_result_canonical(std::vector<mutation> ms) {
    for (auto& m : ms) {
        m.partition().drop_shadowed();
    }
    std::erase_if(ms, is_empty);
    return ms;
}

// Runs body(db) on a database started on cfg's directories, and stops it whatever happens.
template <typename Body>
future<> with_database(database_config cfg, Body body) {
    sharded<database> db;
    co_await db.start(&db, cfg);
    std::exception_ptr err;
    try {
        co_await db.local().start();
        co_await body(db);
    } catch (...) {
        err = std::current_exception();
    }
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}

// The regular files directly in dir (sstable components, commitlog segments).
inline size_t regular_files_in(const std::string& dir) {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        n += e.is_regular_file();
    }
    return n;
}

} // namespace reef::testing
