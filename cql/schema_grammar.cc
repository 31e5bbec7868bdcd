// A recursive-descent parser of the schema statements, over cql_lexer's tokens, and the builders of its trees. Names
// are lowercased unless quoted, keywords are case-insensitive, as in Cassandra.

#include "cql/schema_grammar.hh"

#include "compaction/compaction_options.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace reef {

namespace {

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

std::string name_of(const cql_token& t) {
    return t.kind == cql_token_kind::quoted_identifier ? t.text : lower(t.text);
}

std::string quote_string(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        out += c;
        if (c == '\'') {
            out += c;
        }
    }
    return out + "'";
}

// A constant as text: strings unquoted, numbers and words as written.
std::string constant(cql_token_stream& ts) {
    auto& t = ts.peek();
    switch (t.kind) {
    case cql_token_kind::string:
    case cql_token_kind::number:
    case cql_token_kind::uuid:
    case cql_token_kind::hex:
    case cql_token_kind::identifier:
        ts.next();
        return t.text;
    default:
        ts.fail("a constant");
    }
}

[[noreturn]] void fail_at(const cql_token& at, const std::string& message) {
    throw cql_parse_error(at.line, at.column, at.source,
                          fmt::format("line {}, column {}: {}", at.line, at.column, message));
}

int32_t non_negative_int(const cql_token& at, const std::string& text, std::string_view name) {
    int32_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v < 0) {
        fail_at(at, fmt::format("unexpected '{}' (expected a non-negative integer for {})", at.source, name));
    }
    return v;
}

// Whether WITH compaction names LeveledCompactionStrategy (short or full class name).
bool created_leveled(const table_options& options) {
    auto it = options.other.find("compaction");
    if (it == options.other.end()) {
        return false;
    }
    try {
        auto cls = compaction::parse_map_literal(it->second)["class"];
        return cls == "LeveledCompactionStrategy" || cls == "org.apache.cassandra.db.compaction.LeveledCompactionStrategy";
    } catch (const compaction::invalid_compaction_options&) {
        return false;
    }
}

// A resolver that accepts any user type name: the syntax of a type is checked before the types are known.
data_type any_user_type(std::string_view, std::string_view) { return int32_type(); }

} // namespace

std::string cql_property::literal() const {
    if (!is_map) {
        return value_token.kind == cql_token_kind::string ? quote_string(value) : value;
    }
    auto sorted = map;
    std::sort(sorted.begin(), sorted.end());
    std::string text = "{";
    for (auto& [k, v] : sorted) {
        text += fmt::format("{}{}: {}", text.size() > 1 ? ", " : "", quote_string(k), quote_string(v));
    }
    return text + "}";
}

data_type cql_type_syntax::resolve(const user_type_resolver& resolver) const {
    auto tokens_with_end = tokens;
    auto& last = tokens.back();
    tokens_with_end.push_back({cql_token_kind::end, "", last.line, last.column + last.source.size(), "end of type"});
    cql_token_stream ts(std::move(tokens_with_end));
    auto t = parse_cql_type(ts, resolver);
    if (!ts.at_end()) {
        ts.fail("the end of the type");
    }
    return t;
}

std::string cql_type_syntax::text() const {
    std::string s;
    for (auto& t : tokens) {
        s += t.source;
    }
    return s;
}

cql_qualified_name parse_qualified_name(cql_token_stream& ts, std::string_view what) {
    cql_qualified_name n;
    n.token = ts.peek();
    auto first = ts.expect_name(what);
    if (ts.accept_symbol('.')) {
        n.keyspace = std::move(first);
        n.name = ts.expect_name(what);
    } else {
        n.name = std::move(first);
    }
    return n;
}

bool parse_if_not_exists(cql_token_stream& ts) {
    if (ts.peek_keyword("if")) {
        ts.next();
        ts.expect_keyword("not");
        ts.expect_keyword("exists");
        return true;
    }
    return false;
}

bool parse_if_exists(cql_token_stream& ts) {
    if (ts.peek_keyword("if")) {
        ts.next();
        ts.expect_keyword("exists");
        return true;
    }
    return false;
}

cql_type_syntax parse_type_syntax(cql_token_stream& ts) {
    cql_type_syntax t;
    auto& first = ts.peek();
    if (first.kind == cql_token_kind::string) {
        t.tokens.push_back(ts.next());
    } else {
        if (first.kind != cql_token_kind::identifier && first.kind != cql_token_kind::quoted_identifier) {
            ts.fail("a type");
        }
        t.tokens.push_back(ts.next());
        if (ts.peek_symbol('.')) {
            t.tokens.push_back(ts.next());
            auto& name = ts.peek();
            ts.expect_name("a type name");
            t.tokens.push_back(name);
        }
        if (ts.peek_symbol('<')) {
            int depth = 0;
            do {
                auto& tok = ts.peek();
                if (tok.kind == cql_token_kind::end) {
                    ts.fail("'>'");
                }
                depth += tok.kind == cql_token_kind::symbol && tok.text == "<";
                depth -= tok.kind == cql_token_kind::symbol && tok.text == ">";
                t.tokens.push_back(ts.next());
            } while (depth > 0);
        }
    }
    // The syntax now (map<int> is an error of the statement's text), the user types when built.
    t.resolve(any_user_type);
    return t;
}

namespace {

cql_property parse_property(cql_token_stream& ts) {
    cql_property p;
    p.name_token = ts.peek();
    p.name = lower(ts.expect_name("a property name"));
    ts.expect_symbol('=');
    p.value_token = ts.peek();
    if (ts.accept_symbol('{')) {
        p.is_map = true;
        if (!ts.accept_symbol('}')) {
            do {
                auto k = constant(ts);
                ts.expect_symbol(':');
                p.map.emplace_back(std::move(k), constant(ts));
            } while (ts.accept_symbol(','));
            ts.expect_symbol('}');
        }
    } else {
        p.value = constant(ts);
    }
    return p;
}

} // namespace

std::vector<cql_property> parse_properties(cql_token_stream& ts) {
    std::vector<cql_property> out;
    do {
        out.push_back(parse_property(ts));
    } while (ts.accept_keyword("and"));
    return out;
}

create_keyspace_syntax parse_create_keyspace(cql_token_stream& ts) {
    create_keyspace_syntax ks;
    ks.if_not_exists = parse_if_not_exists(ts);
    ks.name_token = ts.peek();
    ks.name = ts.expect_name("a keyspace name");
    if (ts.accept_keyword("with")) {
        ks.properties = parse_properties(ts);
    }
    return ks;
}

create_type_syntax parse_create_type(cql_token_stream& ts) {
    create_type_syntax t;
    t.if_not_exists = parse_if_not_exists(ts);
    t.name = parse_qualified_name(ts, "a type name");
    ts.expect_symbol('(');
    do {
        field_syntax f;
        f.token = ts.peek();
        f.name = ts.expect_name("a field name");
        f.type = parse_type_syntax(ts);
        t.fields.push_back(std::move(f));
    } while (ts.accept_symbol(','));
    ts.expect_symbol(')');
    return t;
}

namespace {

// The names inside PRIMARY KEY ( ... ): a partition key (one name or a parenthesized list), then clustering.
void primary_key_clause(cql_token_stream& ts, create_table_syntax& t) {
    ts.expect_symbol('(');
    std::vector<cql_token> pk, ck;
    if (ts.accept_symbol('(')) {
        do {
            pk.push_back(ts.peek());
            ts.expect_name("a partition key column");
        } while (ts.accept_symbol(','));
        ts.expect_symbol(')');
    } else {
        pk.push_back(ts.peek());
        ts.expect_name("a partition key column");
    }
    while (ts.accept_symbol(',')) {
        ck.push_back(ts.peek());
        ts.expect_name("a clustering column");
    }
    ts.expect_symbol(')');
    if (t.primary_key_declarations.size() == 1) {
        t.partition_key = std::move(pk);
        t.clustering_key = std::move(ck);
    }
}

void clustering_order_clause(cql_token_stream& ts, create_table_syntax& t) {
    ts.expect_symbol('(');
    do {
        auto col = ts.peek();
        ts.expect_name("a clustering column");
        auto o = clustering_order::asc;
        if (ts.accept_keyword("desc")) {
            o = clustering_order::desc;
        } else {
            ts.accept_keyword("asc");
        }
        t.clustering_orders.emplace_back(col, o);
    } while (ts.accept_symbol(','));
    ts.expect_symbol(')');
}

} // namespace

create_table_syntax parse_create_table(cql_token_stream& ts, const cql_token& start) {
    create_table_syntax t;
    t.start = start;
    t.if_not_exists = parse_if_not_exists(ts);
    t.name = parse_qualified_name(ts, "a table name");
    ts.expect_symbol('(');
    do {
        if (ts.peek_symbol(')')) {
            // A trailing comma before ')' is accepted, as by cqlsh's DESCRIBE output.
            break;
        }
        if (ts.peek_keyword("primary") && ts.peek_keyword("key", 1)) {
            t.primary_key_declarations.push_back(ts.next());
            ts.next();
            primary_key_clause(ts, t);
            continue;
        }
        column_syntax c;
        c.token = ts.peek();
        c.name = ts.expect_name("a column name");
        c.type = parse_type_syntax(ts);
        c.is_static = ts.accept_keyword("static");
        if (ts.peek_keyword("primary")) {
            t.primary_key_declarations.push_back(ts.next());
            ts.expect_keyword("key");
            if (t.primary_key_declarations.size() == 1) {
                t.partition_key.push_back(c.token);
            }
        }
        t.columns.push_back(std::move(c));
    } while (ts.accept_symbol(','));
    ts.expect_symbol(')');
    if (ts.accept_keyword("with")) {
        do {
            if (ts.accept_keyword("compact")) {
                ts.expect_keyword("storage");
                t.compact_storage = true;
            } else if (ts.accept_keyword("clustering")) {
                ts.expect_keyword("order");
                ts.expect_keyword("by");
                clustering_order_clause(ts, t);
            } else {
                t.properties.push_back(parse_property(ts));
            }
        } while (ts.accept_keyword("and"));
    }
    return t;
}

// ---- table properties ----

namespace {

enum class property_kind { string, map, integer, number, boolean, string_or_map, uuid };

struct table_property {
    std::string_view name;
    property_kind kind;
};

// Cassandra 5.0's TableParams.Option, and TableAttributes' id.
constexpr table_property table_properties[] = {
    {"additional_write_policy", property_kind::string},
    {"allow_auto_snapshot", property_kind::boolean},
    {"bloom_filter_fp_chance", property_kind::number},
    {"caching", property_kind::map},
    {"cdc", property_kind::boolean},
    {"comment", property_kind::string},
    {"compaction", property_kind::map},
    {"compression", property_kind::map},
    {"crc_check_chance", property_kind::number},
    {"default_time_to_live", property_kind::integer},
    {"extensions", property_kind::map},
    {"gc_grace_seconds", property_kind::integer},
    {"id", property_kind::uuid},
    {"incremental_backups", property_kind::boolean},
    {"max_index_interval", property_kind::integer},
    {"memtable", property_kind::string_or_map},
    {"memtable_flush_period_in_ms", property_kind::integer},
    {"min_index_interval", property_kind::integer},
    {"read_repair", property_kind::string},
    {"speculative_retry", property_kind::string},
};

const table_property* find_table_property(std::string_view name) {
    for (auto& p : table_properties) {
        if (p.name == name) {
            return &p;
        }
    }
    return nullptr;
}

bool is_number(const std::string& v) {
    double d = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    return ec == std::errc() && p == v.data() + v.size();
}

} // namespace

bool is_table_property(std::string_view name) { return find_table_property(name) != nullptr; }

void check_table_property(const cql_property& p) {
    auto* known = find_table_property(p.name);
    if (!known) {
        fail_at(p.name_token, fmt::format("Unknown property '{}'", p.name));
    }
    auto refuse = [&](std::string_view should) {
        fail_at(p.value_token, fmt::format("Invalid value for property '{}'. It should be {}", p.name, should));
    };
    switch (known->kind) {
    case property_kind::map:
        if (!p.is_map) {
            refuse("a map.");
        }
        return;
    case property_kind::string_or_map:
        return;
    case property_kind::uuid:
        if (p.is_map || p.value_token.kind != cql_token_kind::uuid) {
            refuse("a uuid.");
        }
        return;
    default:
        break;
    }
    if (p.is_map) {
        refuse("a string.");
    }
    if (known->kind == property_kind::integer) {
        int64_t v = 0;
        auto [ptr, ec] = std::from_chars(p.value.data(), p.value.data() + p.value.size(), v);
        if (ec != std::errc() || ptr != p.value.data() + p.value.size()) {
            fail_at(p.value_token, fmt::format("Invalid integer value {} for '{}'", p.value, p.name));
        }
    } else if (known->kind == property_kind::number && !is_number(p.value)) {
        fail_at(p.value_token, fmt::format("Invalid double value {} for '{}'", p.value, p.name));
    } else if (known->kind == property_kind::boolean && lower(p.value) != "true" && lower(p.value) != "false") {
        fail_at(p.value_token, fmt::format("Invalid boolean value {} for '{}'", p.value, p.name));
    }
}

std::optional<table_id> apply_table_properties(const std::vector<cql_property>& properties, table_options& options) {
    std::optional<table_id> id;
    for (auto& p : properties) {
        if (p.name == "compression") {
            if (!p.is_map) {
                fail_at(p.value_token, fmt::format("unexpected '{}' (expected a map for compression)",
                                                   p.value_token.source));
            }
            options.compression.clear();
            for (auto& [k, v] : p.map) {
                options.compression[k] = v;
            }
        } else if (p.name == "gc_grace_seconds" && !p.is_map) {
            options.gc_grace_seconds = non_negative_int(p.value_token, p.value, p.name);
        } else if (p.name == "default_time_to_live" && !p.is_map) {
            options.default_time_to_live = non_negative_int(p.value_token, p.value, p.name);
        } else if (p.name == "id") {
            if (p.is_map || p.value_token.kind != cql_token_kind::uuid) {
                fail_at(p.value_token, fmt::format("unexpected '{}' (expected a uuid for the table id)",
                                                   p.value_token.source));
            }
            auto b = uuid_type()->from_string(p.value);
            table_id tid{};
            std::copy(b.begin(), b.end(), tid.begin());
            id = tid;
        } else {
            options.other[p.name] = p.literal();
        }
    }
    return id;
}

// ---- building the trees ----

keyspace_definition build_keyspace(const create_keyspace_syntax& syntax) {
    keyspace_definition ks;
    ks.name = syntax.name;
    for (auto& p : syntax.properties) {
        if (p.name == "replication") {
            if (!p.is_map) {
                fail_at(p.value_token, "Invalid value for property 'replication'. It should be a map.");
            }
            for (auto& [k, v] : p.map) {
                ks.replication[k] = v;
            }
        } else if (p.name == "durable_writes") {
            auto v = lower(p.value);
            if (p.is_map || (v != "true" && v != "false")) {
                fail_at(p.value_token, fmt::format("unexpected '{}' (expected true or false)", p.value_token.source));
            }
            ks.durable_writes = v == "true";
        } else {
            fail_at(p.name_token, fmt::format("Unknown property '{}' (expected replication or durable_writes)",
                                              p.name));
        }
    }
    return ks;
}

data_type build_user_type(const create_type_syntax& syntax, const std::string& keyspace,
                          const user_type_resolver& resolve) {
    std::vector<std::string> names;
    std::vector<data_type> types;
    for (auto& f : syntax.fields) {
        if (std::find(names.begin(), names.end(), f.name) != names.end()) {
            fail_at(f.token, fmt::format("Duplicate field name {} in type {}", f.name, syntax.name.name));
        }
        names.push_back(f.name);
        types.push_back(f.type.resolve(resolve));
    }
    return user_type(keyspace, syntax.name.name, std::move(names), std::move(types), true);
}

schema_ptr build_table(const create_table_syntax& t, const std::string& keyspace, const user_type_resolver& resolve) {
    if (t.primary_key_declarations.empty()) {
        fail_at(t.start, fmt::format("No PRIMARY KEY specifed for table '{}.{}' (exactly one required)", keyspace,
                                     t.name.name));
    }
    if (t.primary_key_declarations.size() > 1) {
        fail_at(t.primary_key_declarations[1],
                fmt::format("Multiple PRIMARY KEY specified for table '{}.{}' (exactly one required)", keyspace,
                            t.name.name));
    }
    std::vector<std::pair<const column_syntax*, data_type>> columns;
    for (auto& c : t.columns) {
        for (auto& [seen, type] : columns) {
            if (seen->name == c.name) {
                fail_at(c.token, fmt::format("Duplicate column '{}' declaration for table '{}.{}'", c.name, keyspace,
                                             t.name.name));
            }
        }
        columns.emplace_back(&c, c.type.resolve(resolve));
    }
    auto find = [&](const cql_token& tok) -> const std::pair<const column_syntax*, data_type>& {
        auto n = name_of(tok);
        for (auto& c : columns) {
            if (c.first->name == n) {
                return c;
            }
        }
        fail_at(tok, fmt::format("Unknown column '{}' referenced in PRIMARY KEY for table '{}'", n, t.name.name));
    };
    std::vector<std::string> key_names;
    for (auto* group : {&t.partition_key, &t.clustering_key}) {
        for (auto& tok : *group) {
            auto& c = *find(tok).first;
            if (std::find(key_names.begin(), key_names.end(), c.name) != key_names.end()) {
                fail_at(tok, fmt::format("Column '{}' appears twice in PRIMARY KEY", c.name));
            }
            if (c.is_static) {
                fail_at(tok, fmt::format("Static column '{}' cannot be part of the PRIMARY KEY", c.name));
            }
            if (find(tok).second->kind() == type_kind::duration) {
                fail_at(tok, fmt::format("duration type is not supported for PRIMARY KEY column '{}'", c.name));
            }
            key_names.push_back(c.name);
        }
    }
    std::vector<clustering_order> ck_order(t.clustering_key.size(), clustering_order::asc);
    for (size_t i = 0; i < t.clustering_orders.size(); ++i) {
        auto& [tok, order] = t.clustering_orders[i];
        // Cassandra wants the clustering columns in their key order here.
        if (i >= t.clustering_key.size() || name_of(t.clustering_key[i]) != name_of(tok)) {
            fail_at(tok, fmt::format("unexpected '{}' (expected clustering column {} in CLUSTERING ORDER BY)",
                                     tok.source,
                                     i < t.clustering_key.size() ? name_of(t.clustering_key[i]) : "(none left)"));
        }
        ck_order[i] = order;
    }
    table_options options;
    options.compact_storage = t.compact_storage;
    auto id = apply_table_properties(t.properties, options);
    // Cassandra's default chance depends on the strategy a table is created with (CompactionParams): 0.1 for
    // LeveledCompactionStrategy, else 0.01. It is stored then, so a later ALTER of the strategy keeps it.
    if (!options.other.contains("bloom_filter_fp_chance") && created_leveled(options)) {
        options.other["bloom_filter_fp_chance"] = "0.1";
    }

    schema_builder b(keyspace, t.name.name);
    if (id) {
        b.with_id(*id);
    }
    auto in = [](const std::vector<cql_token>& g, const std::string& name) {
        return std::any_of(g.begin(), g.end(), [&](const cql_token& tok) { return name_of(tok) == name; });
    };
    for (auto& [c, type] : columns) {
        if (in(t.partition_key, c->name) || in(t.clustering_key, c->name)) {
            continue;
        }
        b.with_column(c->name, type, c->is_static ? column_kind::static_column : column_kind::regular_column);
    }
    // Key columns go in key order, whatever their declaration order.
    for (auto& tok : t.partition_key) {
        auto& [c, type] = find(tok);
        b.with_column(c->name, type, column_kind::partition_key);
    }
    for (size_t i = 0; i < t.clustering_key.size(); ++i) {
        auto& [c, type] = find(t.clustering_key[i]);
        b.with_column(c->name, type, column_kind::clustering_key, ck_order[i]);
    }
    b.with_options(std::move(options));
    try {
        return b.build();
    } catch (const std::invalid_argument& e) {
        fail_at(t.start, e.what());
    }
}

} // namespace reef
