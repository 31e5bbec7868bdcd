// Executing INSERT, UPDATE and DELETE: terms bound, keys built, the writes turned into mutations as Cassandra
// writes them (UpdateParameters, Lists/Sets/Maps/UserTypes setters, DeleteStatement), then applied. Writes that must
// read first (counters, list index/removal, IF conditions) run on the partition's owner shard under its lock.

#include "cql/modification_impl.hh"

#include "cql/clustering_restrictions.hh"
#include "cql/cql_error.hh"
#include "cql/modification_writes.hh"
#include "cql/query_processor.hh"
#include "db/database.hh"
#include "runtime/semaphore.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "utils/json_reader.hh"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace reef::cql {

namespace {

constexpr int32_t max_ttl = 630720000;

// A batch's partitions, of one table or several.
using plan_map = std::map<std::pair<table_id, dht::decorated_key>, partition_plan>;

std::string_view sv(const bytes& b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

bytes value_of(const raw_value& v, const std::string& column) {
    if (v.is_null()) {
        throw invalid_request(fmt::format("Invalid null value in condition for column {}", column));
    }
    if (v.is_unset()) {
        throw invalid_request(fmt::format("Invalid unset value for column {}", column));
    }
    return v.data;
}

// The JSON of INSERT JSON as column values (Json.parseJson): names lower-cased unless written "\"Name\"".
std::map<std::string, raw_value> json_columns(const schema& s, const term_ptr& json, const query_options& o) {
    auto v = json->bind(o);
    if (!v.is_value()) {
        throw invalid_request("Got null for INSERT JSON values");
    }
    auto text = sv(v.data);
    utils::json_value doc;
    try {
        doc = utils::parse_json(text);
    } catch (const utils::json_parse_error& e) {
        throw invalid_request(fmt::format("Could not decode JSON string as a map: {}. String was: {}", e.what(), text));
    }
    if (!doc.is_object()) {
        throw invalid_request(fmt::format("Could not decode JSON string as a map: not an object. String was: {}", text));
    }
    std::map<std::string, raw_value> out;
    for (auto& [raw_name, value] : doc.members) {
        std::string name;
        if (raw_name.size() >= 2 && raw_name.front() == '"' && raw_name.back() == '"') {
            name = raw_name.substr(1, raw_name.size() - 2);
        } else {
            name = raw_name;
            for (auto& c : name) {
                c = char(std::tolower(static_cast<unsigned char>(c)));
            }
        }
        auto* c = s.find_column(name);
        if (!c) {
            throw invalid_request("JSON values map contains unrecognized column: " + name);
        }
        if (value.is_null()) {
            out[name] = raw_value::null_value();
            continue;
        }
        try {
            out[name] = raw_value::of(c->type->from_json(value));
        } catch (const std::exception& e) {
            throw invalid_request(fmt::format("Error decoding JSON value for {}: {}", name, e.what()));
        }
    }
    return out;
}

// Each alternative of a key restriction: the values of its columns.
std::vector<std::vector<bytes>> restriction_values(const key_restriction& k, const query_options& o,
                                                   const std::map<std::string, raw_value>* json) {
    std::vector<raw_value> alternatives;
    if (json) {
        auto it = json->find(k.columns.front()->name);
        alternatives.push_back(it == json->end() ? raw_value::null_value() : it->second);
    } else if (k.in_marker) {
        auto list = k.in_marker->bind(o);
        if (list.is_unset()) {
            throw invalid_request(fmt::format("Invalid unset value for column {}", k.columns.front()->name));
        }
        if (list.is_null()) {
            throw invalid_request(fmt::format("Invalid null value for IN restriction on {}", k.columns.front()->name));
        }
        for (auto e : split_collection(list.data)) {
            alternatives.push_back(raw_value::of(bytes(e.begin(), e.end())));
        }
    } else {
        for (auto& t : k.values) {
            alternatives.push_back(t->bind(o));
        }
    }
    std::vector<std::vector<bytes>> out;
    for (auto& a : alternatives) {
        auto v = value_of(a, k.columns.front()->name);
        if (!k.tuple) {
            out.push_back({std::move(v)});
            continue;
        }
        std::vector<bytes> parts;
        auto fields = split_tuple(v);
        for (size_t i = 0; i < k.columns.size(); ++i) {
            if (i >= fields.size() || !fields[i]) {
                throw invalid_request(fmt::format("Invalid null value in condition for column {}", k.columns[i]->name));
            }
            parts.emplace_back(fields[i]->begin(), fields[i]->end());
        }
        out.push_back(std::move(parts));
    }
    return out;
}

// The cartesian product of restrictions ordered by their first column: every full combination of values.
std::vector<std::vector<bytes>> key_combinations(std::vector<const key_restriction*> ks, const query_options& o,
                                                 const std::map<std::string, raw_value>* json) {
    std::sort(ks.begin(), ks.end(), [](auto* a, auto* b) { return a->columns.front()->position < b->columns.front()->position; });
    std::vector<std::vector<bytes>> out{{}};
    for (auto* k : ks) {
        auto alts = restriction_values(*k, o, json);
        std::vector<std::vector<bytes>> next;
        for (auto& prefix : out) {
            for (auto& alt : alts) {
                auto key = prefix;
                key.insert(key.end(), alt.begin(), alt.end());
                next.push_back(std::move(key));
            }
        }
        out = std::move(next);
    }
    return out;
}

partition_key make_partition_key(const std::vector<bytes>& values) {
    // Cassandra refuses an empty key, not an empty component of a compound one (its serialized form is not empty).
    if (values.size() == 1 && values[0].empty()) {
        throw invalid_request("Key may not be empty");
    }
    std::vector<std::string_view> parts;
    for (auto& v : values) {
        parts.push_back(sv(v));
    }
    return parts.size() == 1 ? partition_key::from_single_value(parts[0]) : partition_key::from_components(parts);
}

// A DELETE's clustering slice: the relations written back as CQL text for clustering_ranges_from_cql.
clustering_ranges deletion_ranges(const schema& s, const std::vector<key_restriction>& ks, const query_options& o) {
    std::string where;
    for (auto& k : ks) {
        if (!where.empty()) {
            where += " AND ";
        }
        auto alts = restriction_values(k, o, nullptr);
        auto literal = [&](const std::vector<bytes>& values) {
            std::string text = k.tuple ? "(" : "";
            for (size_t i = 0; i < values.size(); ++i) {
                text += (i ? ", " : "") + k.columns[i]->type->to_cql_literal(values[i]);
            }
            return text + (k.tuple ? ")" : "");
        };
        std::string cols = k.tuple ? "(" : "";
        for (size_t i = 0; i < k.columns.size(); ++i) {
            cols += (i ? ", " : "") + maybe_quote_identifier(k.columns[i]->name);
        }
        cols += k.tuple ? ")" : "";
        where += cols + " " + k.op + " ";
        if (k.op == "IN") {
            where += "(";
            for (size_t i = 0; i < alts.size(); ++i) {
                where += (i ? ", " : "") + literal(alts[i]);
            }
            where += ")";
        } else {
            where += literal(alts.front());
        }
    }
    try {
        return clustering_ranges_from_cql(s, where);
    } catch (const bad_restriction& e) {
        throw invalid_request(e.what());
    }
}

int64_t bind_timestamp(const modification_impl& st, const query_options& o, std::optional<int64_t> batch) {
    if (st.timestamp) {
        auto v = st.timestamp->bind(o);
        if (v.is_null()) {
            throw invalid_request("Invalid null value of timestamp");
        }
        if (v.is_value()) {
            return read_be<int64_t>(v.data.data());
        }
    }
    if (batch) {
        return *batch;
    }
    if (o.timestamp) {
        return *o.timestamp;
    }
    return next_server_timestamp();
}

int32_t bind_ttl(const modification_impl& st, const query_options& o) {
    if (st.ttl) {
        auto v = st.ttl->bind(o);
        if (v.is_null()) {
            throw invalid_request("Invalid null value of TTL");
        }
        if (v.is_value()) {
            int32_t ttl = read_be<int32_t>(v.data.data());
            if (ttl < 0) {
                throw invalid_request(fmt::format("A TTL must be greater or equal to 0, but was {}", ttl));
            }
            if (ttl > max_ttl) {
                throw invalid_request(fmt::format("ttl is too large. requested ({}) maximum ({})", ttl, max_ttl));
            }
            return ttl;
        }
    }
    return st.schema->options().default_time_to_live;
}


bound_condition bind_condition(const prepared_condition& c, const query_options& o) {
    bound_condition b;
    b.column = c.column;
    b.is_static = c.is_static;
    b.id = c.id;
    b.op = c.op;
    b.field = c.field;
    b.value_type = c.value_type;
    if (c.key) {
        b.key = c.key->bind(o);
        if (!b.key->is_value()) {
            throw invalid_request(fmt::format("Invalid {} value for {} element access", b.key->is_null() ? "null" : "unset",
                                              c.column->name));
        }
    }
    auto add = [&](raw_value v) {
        if (v.is_unset()) {
            throw invalid_request(fmt::format("Invalid 'unset' value in condition on {}", c.column->name));
        }
        b.values.push_back(std::move(v));
    };
    if (c.in_marker) {
        auto list = c.in_marker->bind(o);
        if (!list.is_value()) {
            throw invalid_request(fmt::format("Invalid null list in IN condition on {}", c.column->name));
        }
        for (auto e : split_collection(list.data)) {
            add(raw_value::of(bytes(e.begin(), e.end())));
        }
    } else if (c.value) {
        add(c.value->bind(o));
    } else {
        for (auto& t : c.in_values) {
            add(t->bind(o));
        }
    }
    return b;
}

// The operations' values, bound once for every row (INSERT JSON: from the JSON's columns).
std::vector<bound_operation> bind_operations(const modification_impl& st, const query_options& o,
                                             const std::map<std::string, raw_value>* json) {
    std::vector<bound_operation> ops;
    for (auto& op : st.operations) {
        bound_operation b;
        b.op = &op;
        if (json && !op.value) {
            auto it = json->find(op.column->name);
            if (it == json->end()) {
                if (st.json_default_unset) {
                    continue;
                }
                b.value = raw_value::null_value();
            } else {
                b.value = it->second;
            }
        } else if (op.value) {
            b.value = op.value->bind(o);
        }
        if (op.key) {
            b.key = op.key->bind(o);
        }
        ops.push_back(std::move(b));
    }
    return ops;
}

write_params bind_params(const modification_impl& st, const query_options& o, std::optional<int64_t> batch_ts,
                         int64_t now) {
    write_params p;
    if (st.counter || st.has_conditions()) {
        // Counter and conditional writes take the server's (or the batch's) time, never a USING TIMESTAMP.
        p.ts = batch_ts ? *batch_ts : next_server_timestamp();
    } else {
        p.ts = bind_timestamp(st, o, batch_ts);
    }
    p.ttl = st.counter ? 0 : bind_ttl(st, o);
    p.now = now;
    return p;
}

std::vector<const key_restriction*> pointers(const std::vector<key_restriction>& ks) {
    std::vector<const key_restriction*> out;
    for (auto& k : ks) {
        out.push_back(&k);
    }
    return out;
}

// One statement's writes into the plans of its partitions.
void plan_statement(plan_map& plans, const modification_execution& w, std::optional<int64_t> batch_ts, int64_t now) {
    auto& st = *w.statement;
    auto& s = st.schema;
    const auto& o = w.options;
    std::optional<std::map<std::string, raw_value>> json;
    if (st.json) {
        json = json_columns(*s, st.json, o);
    }
    const auto* jp = json ? &*json : nullptr;
    auto p = bind_params(st, o, batch_ts, now);
    auto pks = key_combinations(pointers(st.partition_key), o, jp);
    std::vector<clustering_key_prefix> rows;
    std::optional<clustering_ranges> ranges;
    if (st.full_clustering && !s->clustering_key().empty()) {
        for (auto& values : key_combinations(pointers(st.clustering), o, jp)) {
            rows.emplace_back(values);
        }
    } else if (st.full_clustering) {
        rows.emplace_back();
    } else if (st.clustering_range) {
        ranges = deletion_ranges(*s, st.clustering, o);
    }
    auto ops = bind_operations(st, o, jp);
    std::vector<bound_condition> conds;
    for (auto& c : st.conditions) {
        conds.push_back(bind_condition(c, o));
    }
    for (auto& pkv : pks) {
        dht::decorated_key dk(make_partition_key(pkv));
        auto key = std::make_pair(s->id(), dk);
        auto it = plans.find(key);
        if (it == plans.end()) {
            it = plans.emplace(key, partition_plan(s, dk, pkv)).first;
        }
        auto& plan = it->second;
        plan.needs_owner |= st.reads || st.has_conditions();
        if (st.has_conditions()) {
            cas_target t;
            t.schema = s;
            if (st.full_clustering) {
                t.row = rows.front();
            }
            t.if_exists = st.if_exists;
            t.if_not_exists = st.if_not_exists;
            t.conditions = conds;
            plan.cas.push_back(std::move(t));
        }
        write_statement(plan, st, rows, ranges, ops, p);
    }
}

// The shard's partition locks: writes that read first are serialized per partition (stripes by token).
semaphore& partition_lock(const dht::decorated_key& k) {
    constexpr size_t stripes = 1024;
    thread_local std::vector<std::unique_ptr<semaphore>> locks = [] {
        std::vector<std::unique_ptr<semaphore>> v;
        for (size_t i = 0; i < stripes; ++i) {
            v.push_back(std::make_unique<semaphore>(1));
        }
        return v;
    }();
    return *locks[uint64_t(k.get_token().value()) % stripes];
}

// On the owner shard: lock, read, check, write.
future<cas_outcome> run_on_owner(query_processor& qp, partition_plan plan, counter_id node_id) {
    auto units = co_await get_units(partition_lock(plan.key), 1);
    database& db = qp.db();
    std::optional<mutation> current;
    {
        auto slice = plan.read_slice();
        auto range = dht::partition_range::singular(plan.key);
        auto ms = co_await db.query(plan.m.schema(), std::move(range), std::move(slice));
        if (!ms.empty()) {
            current.emplace(std::move(ms.front()));
            current->partition().drop_shadowed();
        }
    }
    cas_outcome out = check_conditions(plan, current ? &*current : nullptr);
    if (out.applied) {
        resolve_reads(plan, current ? &*current : nullptr, node_id);
        co_await db.apply(std::move(plan.m));
    }
    co_return out;
}

future<cas_outcome> run_plan_on_owner(query_processor& qp, partition_plan plan, counter_id node_id) {
    auto shard = dht::shard_of(plan.key.get_token(), smp::count());
    if (shard != this_shard_id()) {
        qp.db().note_cross_shard_op();
    }
    // Named first: a lambda owning memory built inside co_await is destroyed twice by GCC 12 (rule 2).
    auto run = [plan = std::move(plan), node_id](query_processor& o) mutable {
        return run_on_owner(o, std::move(plan), node_id);
    };
    co_return co_await qp.container().invoke_on(shard, std::move(run));
}

} // namespace

namespace {

future<result_message> run_modifications(query_processor& qp, std::vector<modification_execution> writes,
                                         std::optional<int64_t> batch_timestamp) {
    int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    plan_map plans;
    bool conditional = false;
    for (auto& w : writes) {
        plan_statement(plans, w, batch_timestamp, now);
        conditional |= w.statement->has_conditions();
    }
    if (conditional && plans.size() > 1) {
        throw invalid_request("Batch with conditions cannot span multiple partitions");
    }
    for (auto& [key, plan] : plans) {
        plan.batch = writes.size() > 1;
    }
    counter_id node_id{};
    auto& host = qp.db().host_id();
    std::copy(host.begin(), host.end(), node_id.begin());
    std::vector<cas_outcome> outcomes;
    // Blind writes of several partitions (IN, batches) go to their shards at once.
    std::vector<future<>> blind;
    for (auto& [key, plan] : plans) {
        if (!plan.needs_owner) {
            blind.push_back(qp.db().apply(std::move(plan.m)));
        }
    }
    co_await when_all(std::move(blind));
    for (auto& [key, plan] : plans) {
        if (plan.needs_owner) {
            outcomes.push_back(co_await run_plan_on_owner(qp, std::move(plan), node_id));
        }
    }
    if (!conditional) {
        co_return result_message(void_result{});
    }
    co_return result_message(cas_result_set(writes.front().statement->schema, outcomes.front()));
}

} // namespace

future<result_message> execute_modifications(query_processor& qp, std::vector<modification_execution> writes,
                                             std::optional<int64_t> batch_timestamp) {
    // A statement prepared before its table was dropped: the client gets Cassandra's invalid, not a server error.
    std::string table = writes.empty() ? "" : writes.front().statement->schema->table();
    try {
        co_return co_await run_modifications(qp, std::move(writes), batch_timestamp);
    } catch (const no_such_table&) {
        throw invalid_request(fmt::format("table {} does not exist", table));
    }
}

} // namespace reef::cql
