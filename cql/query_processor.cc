#include "cql/query_processor.hh"

#include "cql/batch_statement.hh"
#include "cql/statement_parser.hh"
#include "db/database.hh"
#include "utils/md5.hh"

#include <list>
#include <unordered_map>

namespace reef::cql {

// The prepared statements of this shard, by id, least recently used first out.
struct query_processor::prepared_cache {
    struct entry {
        bytes id;
        std::shared_ptr<const cql_statement> statement;
    };
    size_t capacity;
    std::list<entry> lru; // most recently used at the front
    std::unordered_map<std::string, std::list<entry>::iterator> by_id;

    static std::string key(bytes_view id) { return std::string(id.begin(), id.end()); }

    std::shared_ptr<const cql_statement> find(bytes_view id) {
        auto it = by_id.find(key(id));
        if (it == by_id.end()) {
            return nullptr;
        }
        lru.splice(lru.begin(), lru, it->second);
        return it->second->statement;
    }
    void clear() {
        by_id.clear();
        lru.clear();
    }
    void insert(bytes id, std::shared_ptr<const cql_statement> st) {
        auto k = key(id);
        if (auto it = by_id.find(k); it != by_id.end()) {
            lru.erase(it->second);
            by_id.erase(it);
        }
        lru.push_front(entry{std::move(id), std::move(st)});
        by_id.emplace(std::move(k), lru.begin());
        while (lru.size() > capacity) {
            by_id.erase(key(lru.back().id));
            lru.pop_back();
        }
    }
};

namespace {

// Cassandra's id of a prepared statement: MD5 of the keyspace (when the connection has one) then the query text.
bytes prepared_id(std::string_view keyspace, std::string_view query) {
    utils::md5 h;
    h.update(keyspace);
    h.update(query);
    auto d = h.finish();
    return bytes(d.begin(), d.end());
}

std::string hex(bytes_view b) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s = "0x";
    for (auto c : b) {
        s += digits[c >> 4];
        s += digits[c & 15];
    }
    return s;
}

} // namespace

query_processor::query_processor(sharded<database>* db, sharded<query_processor>* container,
                                 query_processor_config cfg)
    : _db(db), _container(container), _cfg(cfg), _prepared(std::make_unique<prepared_cache>()) {
    _prepared->capacity = _cfg.prepared_cache_entries;
}

query_processor::~query_processor() = default;

database& query_processor::db() noexcept { return _db->local(); }

future<> query_processor::stop() { co_return; }

future<result_message> query_processor::execute(std::string query, client_state& state, query_options options) {
    auto raw = parse_statement(query);
    std::shared_ptr<const cql_statement> st = raw->prepare(db(), state.keyspace);
    co_return co_await st->execute(*this, state, options);
}

future<result_message> query_processor::prepare(std::string query, client_state& state) {
    // The keyspace is read now, not in the coroutine: it starts later, maybe after the caller's state is gone.
    return prepare_in(std::move(query), state.keyspace);
}

future<result_message> query_processor::prepare_in(std::string query, std::string keyspace) {
    auto raw = parse_statement(query);
    std::shared_ptr<const cql_statement> st = raw->prepare(db(), keyspace);
    prepared_result r;
    r.id = prepared_id(keyspace, query);
    r.bind_variables = st->bind_variables();
    r.partition_key_bind_indexes = st->partition_key_bind_indexes();
    r.result_columns = st->result_columns();
    _prepared->insert(r.id, std::move(st));
    co_return result_message(std::move(r));
}

future<result_message> query_processor::execute_prepared(bytes id, client_state& state, query_options options) {
    auto st = _prepared->find(id);
    if (!st) {
        error_details d;
        d.unprepared_id = id;
        throw cql_error(error_code::unprepared, "Prepared query with ID " + hex(id) + " not found", d);
    }
    co_return co_await st->execute(*this, state, options);
}

future<result_message> query_processor::execute_batch(batch_type type, std::vector<batch_entry> entries,
                                                      client_state& state, query_options options) {
    // Each entry prepared (or found prepared), bound to its own values; one write with one timestamp.
    std::vector<modification_execution> writes;
    for (auto& e : entries) {
        std::shared_ptr<const cql_statement> st;
        if (auto* text = std::get_if<std::string>(&e.query_or_id)) {
            auto raw = parse_statement(*text);
            st = raw->prepare(db(), state.keyspace);
        } else {
            auto& id = std::get<bytes>(e.query_or_id);
            st = _prepared->find(id);
            if (!st) {
                error_details d;
                d.unprepared_id = id;
                throw cql_error(error_code::unprepared, "Prepared query with ID " + hex(id) + " not found", d);
            }
        }
        auto* m = dynamic_cast<const modification_statement*>(st.get());
        if (!m) {
            throw invalid_request("Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.");
        }
        query_options o = options;
        o.values = std::move(e.values);
        o.names = std::move(e.names);
        writes.push_back(modification_execution{m->impl(), positional_options(m->bind_variables(), o)});
    }
    co_return co_await execute_batch_writes(*this, type, std::move(writes), options);
}

void query_processor::add_schema_change_listener(std::function<void(const schema_change&)> listener) {
    _listeners.push_back(std::move(listener));
}

future<> query_processor::announce_schema_change(schema_change change) {
    // Named, not built inside the co_await (coroutine rule 2: GCC 12 destroyed the capture twice).
    auto tell = [change](query_processor& qp) {
        // A prepared statement is bound to the schema it was prepared against: after an ALTER or a DROP, every
        // one is forgotten (as Cassandra drops those of the changed table), so that EXECUTE answers unprepared and
        // drivers prepare again against the new schema.
        if (change.change != schema_change::change_type::created) {
            qp._prepared->clear();
        }
        for (auto& l : qp._listeners) {
            l(change);
        }
    };
    co_await _container->invoke_on_all(tell);
}

} // namespace reef::cql
