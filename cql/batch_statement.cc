// BatchStatement's rules: one timestamp for the batch, statements' own timestamps only when the batch has none,
// counters only in counter batches.

#include "cql/batch_statement.hh"

#include "cql/cql_error.hh"
#include "cql/modification_impl.hh"

#include <fmt/core.h>

namespace reef::cql {

namespace {

class batch_statement final : public cql_statement {
public:
    batch_statement(batch_type type, std::vector<std::shared_ptr<const modification_impl>> statements,
                    term_ptr timestamp, std::vector<column_spec> vars)
        : _type(type), _statements(std::move(statements)), _timestamp(std::move(timestamp)), _vars(std::move(vars)) {}

    std::vector<column_spec> bind_variables() const override { return _vars; }

    future<result_message> execute(query_processor& qp, client_state&, const query_options& options) const override {
        auto o = positional_options(_vars, options);
        if (_timestamp) {
            auto v = _timestamp->bind(o);
            if (v.is_null()) {
                throw invalid_request("Invalid null value of timestamp");
            }
            if (v.is_value()) {
                o.timestamp = read_be<int64_t>(v.data.data());
            }
        }
        std::vector<modification_execution> writes;
        for (auto& st : _statements) {
            writes.push_back(modification_execution{st, o});
        }
        co_return co_await execute_batch_writes(qp, _type, std::move(writes), o);
    }

private:
    batch_type _type;
    std::vector<std::shared_ptr<const modification_impl>> _statements;
    term_ptr _timestamp;
    std::vector<column_spec> _vars;
};

} // namespace

std::unique_ptr<raw_statement> parse_batch_statement(cql_token_stream& ts) {
    auto b = std::make_unique<raw_batch_statement>();
    ts.expect_keyword("begin");
    if (ts.accept_keyword("unlogged")) {
        b->type = batch_type::unlogged;
    } else if (ts.accept_keyword("counter")) {
        b->type = batch_type::counter;
    }
    ts.expect_keyword("batch");
    if (ts.accept_keyword("using")) {
        ts.expect_keyword("timestamp");
        auto& t = ts.peek();
        bool marker = ts.peek_symbol('?') || ts.peek_symbol(':');
        if (!marker && !(t.kind == cql_token_kind::number && t.text.find_first_of(".eE") == std::string::npos)) {
            throw cql_parse_error(t.line, t.column, t.source, fmt::format("no viable alternative at input '{}'", t.source));
        }
        b->timestamp = parse_term(ts, b->markers);
    }
    while (!ts.peek_keyword("apply")) {
        if (ts.peek_keyword("insert")) {
            b->statements.push_back(parse_insert(ts, b->markers));
        } else if (ts.peek_keyword("update")) {
            b->statements.push_back(parse_update(ts, b->markers));
        } else if (ts.peek_keyword("delete")) {
            b->statements.push_back(parse_delete(ts, b->markers));
        } else {
            ts.fail("INSERT, UPDATE, DELETE or APPLY BATCH");
        }
        ts.accept_symbol(';');
    }
    ts.expect_keyword("apply");
    ts.expect_keyword("batch");
    return b;
}

void check_batch(batch_type type, const std::vector<std::shared_ptr<const modification_impl>>& statements,
                 bool batch_has_timestamp) {
    bool counters = false, others = false;
    bool conditional = false;
    for (auto& st : statements) {
        if (batch_has_timestamp && st->timestamp) {
            throw invalid_request("Timestamp must be set either on BATCH or individual statements");
        }
        if (st->counter) {
            if (type == batch_type::logged) {
                throw invalid_request("Cannot include a counter statement in a logged batch");
            }
            counters = true;
        } else {
            if (type == batch_type::counter) {
                throw invalid_request("Cannot include non-counter statement in a counter batch");
            }
            others = true;
        }
        conditional |= st->has_conditions();
    }
    if (counters && others) {
        throw invalid_request("Counter and non-counter mutations cannot exist in the same batch");
    }
    if (conditional) {
        if (batch_has_timestamp) {
            throw invalid_request("Cannot provide custom timestamp for conditional BATCH");
        }
        for (auto& st : statements) {
            if (st->schema->id() != statements.front()->schema->id()) {
                throw invalid_request("Batch with conditions cannot span multiple tables");
            }
        }
    }
}

future<result_message> execute_batch_writes(query_processor& qp, batch_type type,
                                            std::vector<modification_execution> writes, const query_options& options) {
    std::vector<std::shared_ptr<const modification_impl>> impls;
    for (auto& w : writes) {
        impls.push_back(w.statement);
    }
    // A client's default timestamp does not conflict with statements' own (USING TIMESTAMP on a BATCH statement
    // was checked at prepare).
    check_batch(type, impls, false);
    int64_t ts = options.timestamp ? *options.timestamp : next_server_timestamp();
    co_return co_await execute_modifications(qp, std::move(writes), ts, true);
}

std::unique_ptr<cql_statement> raw_batch_statement::prepare(const database& db, std::string_view keyspace) const {
    bind_specs specs(markers);
    term_ptr ts;
    if (timestamp) {
        ts = timestamp->prepare(column_spec{"", "", "[timestamp]", bigint_type()}, specs);
    }
    std::vector<std::shared_ptr<const modification_impl>> impls;
    for (auto& st : statements) {
        impls.push_back(st->prepare_with(db, keyspace, specs));
    }
    check_batch(type, impls, bool(timestamp));
    return std::make_unique<batch_statement>(type, std::move(impls), std::move(ts), specs.specs());
}

} // namespace reef::cql
