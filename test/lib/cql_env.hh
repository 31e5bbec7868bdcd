// cql_env: a sharded database and query processor started in a temporary directory, for tests of statements
// through parse_statement -> prepare -> execute from any shard; outcomes in the conformance files' words.
#pragma once

#include "cql/query_processor.hh"
#include "cql/statement_parser.hh"
#include "db/database.hh"
#include "runtime/smp.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

#include <string>

namespace reef::testing {

using namespace reef::cql;

// What a statement returned, in the conformance files' words: "schema_change CREATED TABLE ks t", "void",
// "set_keyspace ks", "rows", or "error <class>".
inline std::string outcome_of(const result_message& r) {
    if (std::holds_alternative<void_result>(r)) {
        return "void";
    }
    if (auto* sk = std::get_if<set_keyspace_result>(&r)) {
        return "set_keyspace " + sk->keyspace;
    }
    if (auto* sc = std::get_if<schema_change>(&r)) {
        static const char* changes[] = {"CREATED", "UPDATED", "DROPPED"};
        static const char* targets[] = {"KEYSPACE", "TABLE", "TYPE", "FUNCTION", "AGGREGATE"};
        auto s = fmt::format("schema_change {} {} {}", changes[int(sc->change)], targets[int(sc->target)], sc->keyspace);
        return sc->name.empty() ? s : s + " " + sc->name;
    }
    return "rows";
}

inline std::string error_class(error_code c) {
    switch (c) {
    case error_code::syntax_error: return "syntax_error";
    case error_code::invalid: return "invalid";
    case error_code::already_exists: return "already_exists";
    case error_code::config_error: return "config_error";
    case error_code::unauthorized: return "unauthorized";
    case error_code::server_error: return "server_error";
    default: return fmt::format("code {:#x}", int(c));
    }
}

// A started database and query processor on every shard; statements run from any shard with their own
// client_state (a connection there).
class cql_env {
public:
    explicit cql_env(const tmpdir& dir) {
        _cfg.data_directory = dir.path() + "/data";
        _cfg.auto_snapshot = false;
    }
    future<> start() {
        co_await _db.start(&_db, _cfg);
        co_await _db.local().start();
        co_await _qp.start(&_db, &_qp, query_processor_config{});
    }
    future<> stop() {
        co_await _qp.stop();
        co_await _db.stop();
    }
    sharded<database>& db() { return _db; }
    const std::string& data_directory() const { return _cfg.data_directory; }
    sharded<query_processor>& qp() { return _qp; }

    // parse_statement -> prepare -> execute of `text` on `shard`, as a connection there whose keyspace (USE) is
    // `state`. Throws what the statement throws.
    future<result_message> execute(std::string text, shard_id shard, client_state& state) {
        auto one = [&text, &state](query_processor& qp) -> future<result_message> {
            auto raw = parse_statement(text);
            auto st = raw->prepare(qp.db(), state.keyspace);
            co_return co_await st->execute(qp, state, query_options{});
        };
        co_return co_await _qp.invoke_on(shard, one);
    }
    // The same, returning the outcome (see outcome_of) or "error <class>".
    future<std::string> run(std::string text, shard_id shard, client_state& state) {
        try {
            auto r = co_await execute(text, shard, state);
            co_return outcome_of(r);
        } catch (const cql_error& e) {
            BOOST_TEST_MESSAGE(text << " -> " << e.what());
            co_return "error " + error_class(e.code());
        }
    }

private:
    database_config _cfg;
    sharded<database> _db;
    sharded<query_processor> _qp;
};

// body(env) on a node started in `dir` (again after a restart: the same directory).
template <typename Body>
future<> with_cql_in(const tmpdir& dir, Body body) {
    cql_env env(dir);
    co_await env.start();
    std::exception_ptr err;
    try {
        co_await body(env);
    } catch (...) {
        err = std::current_exception();
    }
    co_await env.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}

template <typename Body>
future<> with_cql(Body body) {
    tmpdir dir;
    co_await with_cql_in(dir, std::move(body));
}

} // namespace reef::testing
