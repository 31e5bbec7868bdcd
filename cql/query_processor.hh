// query_processor: one shard's CQL engine (sharded<query_processor>): parses, prepares and runs statements against
// the sharded database, keeps the prepared-statement cache, and tells listeners of schema changes.
#pragma once

#include "cql/query_handler.hh"
#include "runtime/sharded.hh"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace reef {
class database;
}

namespace reef::cql {

struct query_processor_config {
    std::chrono::milliseconds read_request_timeout{5000};
    std::chrono::milliseconds write_request_timeout{2000};
    // Prepared statements kept per shard before the least recently used is dropped.
    size_t prepared_cache_entries = 10000;
};

class query_processor final : public query_handler {
public:
    // Pointers, so that sharded::start can copy them to every shard.
    query_processor(sharded<database>* db, sharded<query_processor>* container, query_processor_config cfg);
    ~query_processor() override;

    future<result_message> execute(std::string query, client_state& state, query_options options) override;
    future<result_message> prepare(std::string query, client_state& state) override;
    future<result_message> execute_prepared(bytes id, client_state& state, query_options options) override;
    future<result_message> execute_batch(batch_type type, std::vector<batch_entry> entries, client_state& state,
                                         query_options options) override;
    void add_schema_change_listener(std::function<void(const schema_change&)> listener) override;

    // For statements: this shard's database, every shard's, and the processors of every shard.
    database& db() noexcept;
    sharded<database>& sharded_db() noexcept { return *_db; }
    sharded<query_processor>& container() noexcept { return *_container; }
    const query_processor_config& config() const noexcept { return _cfg; }

    // Schema-changing statements call this once the change is applied: every shard's listeners hear it, and an
    // ALTER or DROP empties every shard's prepared-statement cache (statements prepared against the old schema).
    future<> announce_schema_change(schema_change change);

    // sharded::stop calls it.
    future<> stop();

private:
    struct prepared_cache;

    // PREPARE against `keyspace` (the connection's, copied).
    future<result_message> prepare_in(std::string query, std::string keyspace);

    sharded<database>* _db;
    sharded<query_processor>* _container;
    query_processor_config _cfg;
    std::unique_ptr<prepared_cache> _prepared;
    std::vector<std::function<void(const schema_change&)>> _listeners;
};

} // namespace reef::cql
