// Selectors and their names. See selection.hh.
#include "cql/selection.hh"

#include "cql/cast_functions.hh"
#include "cql/cql_error.hh"
#include "cql/term_functions.hh"
#include "cql/value_bytes.hh"
#include "mutation/counter.hh"
#include "schema/value_format.hh"
#include "utils/big_endian.hh"
#include "utils/java_double_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace reef::cql {

namespace {

column_id id_of(const schema& s, const column_definition& c) {
    auto& group = c.is_static() ? s.static_columns() : s.regular_columns();
    return column_id(&c - group.data());
}

const cell_or_collection* cell_of(const row_view& r, const column_definition& c) {
    if (c.is_static()) {
        return r.static_cells.find(id_of(r.s, c));
    }
    if (!r.clustered) {
        return nullptr;
    }
    return r.clustered->cells.find(id_of(r.s, c));
}

// The live cells of a column as (path, cell): one for a simple column.
std::vector<const atomic_cell*> live_cells_of(const row_view& r, const column_definition& c) {
    std::vector<const atomic_cell*> out;
    auto* cc = cell_of(r, c);
    if (!cc) {
        return out;
    }
    if (auto* a = std::get_if<atomic_cell>(cc)) {
        if (a->is_live(r.now)) {
            out.push_back(a);
        }
        return out;
    }
    for (auto& [path, a] : std::get<collection_cells>(*cc).cells) {
        if (a.is_live(r.now)) {
            out.push_back(&a);
        }
    }
    return out;
}

const column_definition& find_column(const schema& s, const std::string& name) {
    auto* c = s.find_column(name);
    if (!c) {
        throw invalid_request(fmt::format("Undefined column name {} in table {}.{}", maybe_quote_identifier(name),
                                          s.keyspace(), s.table()));
    }
    return *c;
}

// ---- simple selectors ----------------------------------------------------------------------------------------

class first_value_selector : public selector {
public:
    void add_input(const row_view& r) override {
        if (!_set) {
            _set = true;
            _value = compute(r);
        }
    }
    std::optional<bytes> output() const override { return _value; }
    void reset() override {
        _set = false;
        _value.reset();
    }

protected:
    virtual std::optional<bytes> compute(const row_view& r) const = 0;

private:
    bool _set = false;
    std::optional<bytes> _value;
};

class column_selector final : public first_value_selector {
public:
    explicit column_selector(const column_definition& c) : _c(c) {
        _name = c.name;
        _type = c.type;
    }

private:
    std::optional<bytes> compute(const row_view& r) const override { return column_value(r, _c); }
    const column_definition& _c;
};

class writetime_ttl_selector final : public first_value_selector {
public:
    // max: MAXWRITETIME, the greatest timestamp of the column's cells (one bigint, collections too).
    // element: of one element of a non-frozen set or map (its path).
    writetime_ttl_selector(const column_definition& c, bool ttl, bool max = false,
                           std::optional<bytes> element = std::nullopt, std::string element_text = "")
        : _c(c), _ttl(ttl), _max(max), _element(std::move(element)) {
        if (c.is_primary_key()) {
            throw invalid_request(fmt::format("Cannot use selection function {} on PRIMARY KEY part {}",
                                              ttl ? "ttl" : max ? "maxWriteTime" : "writeTime", c.name));
        }
        _name = fmt::format("{}({}{})", ttl ? "ttl" : max ? "maxwritetime" : "writetime", c.name,
                            _element ? "[" + element_text + "]" : "");
        data_type one = ttl ? int32_type() : bigint_type();
        _type = c.type->is_multi_cell() && !max && !_element ? list_type(one, false) : one;
    }

private:
    std::optional<bytes> one(const atomic_cell& a, deletion_time_type now) const {
        if (!_ttl) {
            return be_bytes<int64_t>(a.timestamp());
        }
        if (!a.is_expiring()) {
            return std::nullopt;
        }
        return be_bytes<int32_t>(int32_t(std::max<int64_t>(0, int64_t(a.local_deletion_time()) - now)));
    }
    std::optional<bytes> compute(const row_view& r) const override {
        if (_element) {
            auto* cc = cell_of(r, _c);
            auto* coll = cc ? std::get_if<collection_cells>(cc) : nullptr;
            if (!coll) {
                return std::nullopt;
            }
            auto cmp = _c.type->name_comparator();
            for (auto& [path, a] : coll->cells) {
                if (cmp->compare(path, *_element) == 0) {
                    return a.is_live(r.now) ? one(a, r.now) : std::nullopt;
                }
            }
            return std::nullopt;
        }
        auto cells = live_cells_of(r, _c);
        if (cells.empty()) {
            return std::nullopt;
        }
        if (_max) {
            int64_t best = cells[0]->timestamp();
            for (auto* a : cells) {
                best = std::max<int64_t>(best, a->timestamp());
            }
            return be_bytes<int64_t>(best);
        }
        if (!_c.type->is_multi_cell()) {
            return one(*cells[0], r.now);
        }
        // One value per element; a null TTL of a non-expiring element is written as null inside the list.
        std::vector<std::optional<bytes>> vs;
        for (auto* a : cells) {
            vs.push_back(one(*a, r.now));
        }
        bytes out = be_bytes<int32_t>(int32_t(vs.size()));
        for (auto& v : vs) {
            auto len = be_bytes<int32_t>(v ? int32_t(v->size()) : -1);
            out.insert(out.end(), len.begin(), len.end());
            if (v) {
                out.insert(out.end(), v->begin(), v->end());
            }
        }
        return out;
    }
    const column_definition& _c;
    bool _ttl;
    bool _max;
    std::optional<bytes> _element;
};

class token_selector final : public first_value_selector {
public:
    token_selector(const schema& s, const std::vector<std::string>& names) {
        if (names.size() != s.partition_key().size()) {
            throw invalid_request(fmt::format("Invalid number of arguments in call to function system.token: {} "
                                              "required but {} provided",
                                              s.partition_key().size(), names.size()));
        }
        std::string args;
        for (size_t i = 0; i < names.size(); ++i) {
            if (names[i] != s.partition_key()[i].name) {
                throw invalid_request(fmt::format("Type error: {} cannot be passed as argument {} of function "
                                                  "system.token of type {}",
                                                  names[i], i, s.partition_key()[i].type->cql_name()));
            }
            args += (i ? ", " : "") + names[i];
        }
        _name = "system.token(" + args + ")";
        _type = bigint_type();
    }

private:
    std::optional<bytes> compute(const row_view& r) const override {
        return be_bytes<int64_t>(r.key.get_token().value());
    }
};

// Applies a function to its arguments' values (first row).
class function_selector final : public first_value_selector {
public:
    using fn = std::function<std::optional<bytes>(const std::vector<std::optional<bytes>>&)>;
    function_selector(std::string name, data_type type, std::vector<std::unique_ptr<selector>> args, fn f)
        : _args(std::move(args)), _f(std::move(f)) {
        _name = std::move(name);
        _type = std::move(type);
    }

private:
    std::optional<bytes> compute(const row_view& r) const override {
        std::vector<std::optional<bytes>> vs;
        for (auto& a : _args) {
            a->add_input(r);
            vs.push_back(a->output());
            a->reset();
        }
        return _f(vs);
    }
    std::vector<std::unique_ptr<selector>> _args;
    fn _f;
};

class constant_selector final : public first_value_selector {
public:
    constant_selector(std::string name, data_type type, std::optional<bytes> v) : _v(std::move(v)) {
        _name = std::move(name);
        _type = std::move(type);
    }

private:
    std::optional<bytes> compute(const row_view&) const override { return _v; }
    std::optional<bytes> _v;
};

// ---- aggregates ---------------------------------------------------------------------------------------------

class count_star_selector final : public selector {
public:
    explicit count_star_selector() {
        _name = "count";
        _type = bigint_type();
    }
    void add_input(const row_view&) override { ++_n; }
    std::optional<bytes> output() const override { return be_bytes<int64_t>(_n); }
    void reset() override { _n = 0; }
    bool is_aggregate() const override { return true; }

private:
    int64_t _n = 0;
};

__int128 int128_of(const big_int& v) {
    auto s = v.to_string();
    if (s.size() > 37) {
        throw invalid_request("sum overflow: a varint or decimal beyond 37 digits is not supported in aggregates");
    }
    __int128 x = 0;
    bool neg = !s.empty() && s[0] == '-';
    for (size_t i = neg ? 1 : 0; i < s.size(); ++i) {
        x = x * 10 + (s[i] - '0');
    }
    return neg ? -x : x;
}

std::string int128_string(__int128 x) {
    if (x == 0) {
        return "0";
    }
    bool neg = x < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)x : (unsigned __int128)x;
    std::string s;
    while (u) {
        s += char('0' + int(u % 10));
        u /= 10;
    }
    if (neg) {
        s += '-';
    }
    std::reverse(s.begin(), s.end());
    return s;
}

class aggregate_selector final : public selector {
public:
    aggregate_selector(std::string fname, std::unique_ptr<selector> arg) : _f(std::move(fname)), _arg(std::move(arg)) {
        _name = "system." + _f + "(" + _arg->name() + ")";
        auto k = _arg->type()->without_reversal()->kind();
        if (_f == "count") {
            _type = bigint_type();
        } else if (_f == "min" || _f == "max") {
            _type = _arg->type();
        } else {
            static const type_kind numeric[] = {type_kind::tinyint, type_kind::smallint, type_kind::int32,
                                                type_kind::bigint,  type_kind::float_,   type_kind::double_,
                                                type_kind::decimal, type_kind::varint,   type_kind::counter};
            if (std::find(std::begin(numeric), std::end(numeric), k) == std::end(numeric)) {
                throw invalid_request(fmt::format("Invalid call to function {}, none of its type signatures match "
                                                  "(known type signatures: system.{}(...) of the numeric types)",
                                                  _f, _f));
            }
            _type = k == type_kind::counter ? bigint_type() : _arg->type();
        }
    }
    bool is_aggregate() const override { return true; }
    void reset() override {
        _count = 0;
        _best.reset();
        _isum = 0;
        _dsum = 0;
        _scale = 0;
    }
    void add_input(const row_view& r) override {
        _arg->add_input(r);
        auto v = _arg->output();
        _arg->reset();
        if (!v) {
            return;
        }
        ++_count;
        if (_f == "count") {
            return;
        }
        if (_f == "min" || _f == "max") {
            if (!_best) {
                _best = v;
            } else {
                int c = _type->compare(*v, *_best);
                if ((_f == "min" && c < 0) || (_f == "max" && c > 0)) {
                    _best = v;
                }
            }
            return;
        }
        switch (_type->without_reversal()->kind()) {
        case type_kind::tinyint: _isum += from_be<int8_t>(*v); break;
        case type_kind::smallint: _isum += from_be<int16_t>(*v); break;
        case type_kind::int32: _isum += from_be<int32_t>(*v); break;
        case type_kind::bigint:
        case type_kind::counter: _isum += from_be<int64_t>(*v); break;
        case type_kind::float_: _dsum += float_of(*v); break;
        case type_kind::double_: _dsum += double_of(*v); break;
        case type_kind::varint: _isum += int128_of(big_int::from_bytes(*v)); break;
        case type_kind::decimal: {
            auto d = big_decimal::from_bytes(*v);
            auto u = int128_of(d.unscaled);
            if (_count == 1) {
                _scale = d.scale;
            }
            while (d.scale < _scale) {
                u *= 10;
                ++d.scale;
            }
            while (_scale < d.scale) {
                _isum *= 10;
                ++_scale;
            }
            _isum += u;
            break;
        }
        default: break;
        }
    }
    std::optional<bytes> output() const override {
        if (_f == "count") {
            return be_bytes<int64_t>(_count);
        }
        if (_f == "min" || _f == "max") {
            return _best;
        }
        bool avg = _f == "avg";
        auto n = std::max<int64_t>(_count, 1);
        switch (_type->without_reversal()->kind()) {
        case type_kind::tinyint: return be_bytes<int8_t>(int8_t(avg ? _isum / n : _isum));
        case type_kind::smallint: return be_bytes<int16_t>(int16_t(avg ? _isum / n : _isum));
        case type_kind::int32: return be_bytes<int32_t>(int32_t(avg ? _isum / n : _isum));
        case type_kind::bigint:
        case type_kind::counter: return be_bytes<int64_t>(int64_t(avg ? _isum / n : _isum));
        case type_kind::float_: return float_bytes(float(avg ? (_count ? _dsum / double(_count) : 0) : _dsum));
        case type_kind::double_: return double_bytes(avg ? (_count ? _dsum / double(_count) : 0) : _dsum);
        case type_kind::varint: return big_int::from_string(int128_string(avg ? _isum / n : _isum)).to_bytes();
        case type_kind::decimal: {
            __int128 u = _isum;
            if (avg && _count) {
                // BigDecimal.divide(count, HALF_EVEN): the sum's scale kept.
                __int128 q = u / n, rem = u % n;
                __int128 twice = (rem < 0 ? -rem : rem) * 2;
                if (twice > n || (twice == n && (q % 2 != 0))) {
                    q += u < 0 ? -1 : 1;
                }
                u = q;
            }
            big_decimal d;
            d.unscaled = big_int::from_string(int128_string(u));
            d.scale = _count ? _scale : 0;
            return d.to_bytes();
        }
        default: return std::nullopt;
        }
    }

private:
    std::string _f;
    std::unique_ptr<selector> _arg;
    int64_t _count = 0;
    std::optional<bytes> _best;
    __int128 _isum = 0;
    double _dsum = 0;
    int32_t _scale = 0;
};

// ---- building -------------------------------------------------------------------------------------------------

std::unique_ptr<selector> make_selector(const schema& s, const raw_selector& r, std::vector<const column_definition*>& read,
                                        int depth);

std::unique_ptr<selector> make_function(const schema& s, const raw_selector& r,
                                        std::vector<const column_definition*>& read, int depth) {
    auto& f = r.name;
    if (f == "token") {
        std::vector<std::string> names;
        for (auto& a : r.args) {
            if (a.k != raw_selector::kind::column) {
                throw invalid_request("token() takes the partition key columns");
            }
            names.push_back(a.name);
            read.push_back(&find_column(s, a.name));
        }
        return std::make_unique<token_selector>(s, names);
    }
    if (f == "count" || f == "min" || f == "max" || f == "sum" || f == "avg") {
        if (r.args.size() != 1) {
            throw invalid_request(fmt::format("Invalid number of arguments in call to function system.{}: 1 required "
                                              "but {} provided",
                                              f, r.args.size()));
        }
        auto arg = make_selector(s, r.args[0], read, depth + 1);
        if (arg->is_aggregate()) {
            throw invalid_request("aggregate functions cannot be used as arguments of aggregate functions");
        }
        return std::make_unique<aggregate_selector>(f, std::move(arg));
    }
    if (f == "maxwritetime") {
        if (r.args.size() != 1 || r.args[0].k != raw_selector::kind::column) {
            throw invalid_request("maxwritetime() takes one column");
        }
        auto& c = find_column(s, r.args[0].name);
        read.push_back(&c);
        return std::make_unique<writetime_ttl_selector>(c, false, true);
    }
    std::vector<std::unique_ptr<selector>> args;
    std::string arg_names;
    for (auto& a : r.args) {
        if (a.k == raw_selector::kind::term) {
            // Typed by the function's overload, below.
            args.push_back(nullptr);
            arg_names += (arg_names.empty() ? "" : ", ") + a.element->to_string();
            continue;
        }
        args.push_back(make_selector(s, a, read, depth + 1));
        arg_names += (arg_names.empty() ? "" : ", ") + args.back()->name();
    }
    if (f == "tojson") {
        if (args.size() != 1 || !args[0]) {
            throw invalid_request("toJson() takes one argument");
        }
        auto t = args[0]->type();
        return std::make_unique<function_selector>(
            "system.tojson(" + arg_names + ")", text_type(), std::move(args),
            [t](const std::vector<std::optional<bytes>>& v) -> std::optional<bytes> {
                return to_bytes(v[0] ? t->to_json_string(*v[0]) : std::string("null"));
            });
    }
    for (auto* nf : find_native_functions(f)) {
        if (nf->arg_types.size() != args.size() || !nf->return_type) {
            continue;
        }
        // Constants take the overload's argument type; selectors must have it.
        bool match = true;
        std::vector<std::unique_ptr<selector>> bound;
        for (size_t i = 0; i < args.size() && match; ++i) {
            if (!args[i]) {
                try {
                    bind_specs specs{term_parse_context{}};
                    auto& t = r.args[i].element;
                    auto prepared = t->prepare(column_spec{s.keyspace(), s.table(), t->to_string(), nf->arg_types[i]},
                                               specs);
                    if (!prepared->is_terminal()) {
                        throw invalid_request("a bind marker in a selector is not supported");
                    }
                    auto v = prepared->bind(query_options{});
                    bound.push_back(std::make_unique<constant_selector>(
                        t->to_string(), nf->arg_types[i], v.is_value() ? std::optional<bytes>(v.data) : std::nullopt));
                } catch (const cql_error&) {
                    match = false;
                }
                continue;
            }
            match = nf->arg_types[i]->without_reversal()->class_name() ==
                    args[i]->type()->without_reversal()->class_name();
            bound.push_back(nullptr);
        }
        if (!match) {
            continue;
        }
        for (size_t i = 0; i < args.size(); ++i) {
            if (!args[i]) {
                args[i] = std::move(bound[i]);
            }
        }
        auto ret = nf->return_type;
        return std::make_unique<function_selector>(
            "system." + f + "(" + arg_names + ")", ret, std::move(args),
            [nf, ret](const std::vector<std::optional<bytes>>& v) -> std::optional<bytes> {
                std::vector<raw_value> in;
                for (auto& x : v) {
                    in.push_back(x ? raw_value::of(*x) : raw_value::null_value());
                }
                auto out = nf->call(in, ret);
                if (!out.is_value()) {
                    return std::nullopt;
                }
                return out.data;
            });
    }
    throw invalid_request(fmt::format("Unknown function '{}'", f));
}

std::unique_ptr<selector> make_selector(const schema& s, const raw_selector& r, std::vector<const column_definition*>& read,
                                        int depth) {
    switch (r.k) {
    case raw_selector::kind::column: {
        auto& c = find_column(s, r.name);
        read.push_back(&c);
        return std::make_unique<column_selector>(c);
    }
    case raw_selector::kind::writetime:
    case raw_selector::kind::ttl: {
        auto& c = find_column(s, r.name);
        read.push_back(&c);
        if (r.element) {
            auto t = c.type;
            if (!t->is_multi_cell() || (t->kind() != type_kind::set && t->kind() != type_kind::map)) {
                throw invalid_request(fmt::format("Element selection is only allowed on non-frozen sets and maps "
                                                  "in {}, but {} is a {}",
                                                  r.k == raw_selector::kind::ttl ? "TTL" : "WRITETIME", c.name,
                                                  t->cql_name()));
            }
            auto spec = column_spec{s.keyspace(), s.table(), c.name, t};
            auto key_spec = t->kind() == type_kind::map ? map_key_receiver(spec) : element_receiver(spec);
            bind_specs specs{term_parse_context{}};
            auto p = r.element->prepare(key_spec, specs);
            if (!p->is_terminal()) {
                throw invalid_request("element selection with a bind marker is not supported");
            }
            auto v = p->bind(query_options{});
            return std::make_unique<writetime_ttl_selector>(c, r.k == raw_selector::kind::ttl, false,
                                                            v.is_value() ? std::optional<bytes>(v.data) : std::nullopt,
                                                            r.element->to_string());
        }
        return std::make_unique<writetime_ttl_selector>(c, r.k == raw_selector::kind::ttl);
    }
    case raw_selector::kind::count_star: return std::make_unique<count_star_selector>();
    case raw_selector::kind::function: return make_function(s, r, read, depth);
    case raw_selector::kind::cast: {
        auto arg = make_selector(s, r.args[0], read, depth + 1);
        auto to = parse_cql_type(r.cast_type);
        auto from = arg->type();
        if (!castable(from, to)) {
            throw invalid_request(fmt::format("Invalid call to function system.cast_as_{}, none of its type "
                                              "signatures match ({} is a {})",
                                              to->cql_name(), arg->name(), from->cql_name()));
        }
        auto name = fmt::format("cast({} as {})", arg->name(), to->cql_name());
        std::vector<std::unique_ptr<selector>> args;
        args.push_back(std::move(arg));
        return std::make_unique<function_selector>(
            name, to, std::move(args), [from, to](const std::vector<std::optional<bytes>>& v) -> std::optional<bytes> {
                if (!v[0]) {
                    return std::nullopt;
                }
                return cast_value(from, to, *v[0]);
            });
    }
    case raw_selector::kind::element: {
        auto coll = make_selector(s, r.args[0], read, depth + 1);
        auto t = coll->type()->without_reversal();
        if (t->kind() != type_kind::map && t->kind() != type_kind::set) {
            throw invalid_request(fmt::format("Element selection is only allowed on sets and maps, but {} is a {}",
                                              coll->name(), t->cql_name()));
        }
        column_spec spec{s.keyspace(), s.table(), coll->name(), t};
        auto key_spec = t->kind() == type_kind::map ? map_key_receiver(spec) : element_receiver(spec);
        bind_specs specs{term_parse_context{}};
        auto key_term = r.element->prepare(key_spec, specs);
        if (!key_term->is_terminal()) {
            throw invalid_request("element selection with a bind marker is not supported");
        }
        auto key = key_term->bind(query_options{});
        auto name = fmt::format("{}[{}]", coll->name(), r.element->to_string());
        data_type out = t->kind() == type_kind::map ? t->value_type() : t->element_type();
        std::vector<std::unique_ptr<selector>> args;
        args.push_back(std::move(coll));
        return std::make_unique<function_selector>(
            name, out, std::move(args), [t, key](const std::vector<std::optional<bytes>>& v) -> std::optional<bytes> {
                if (!v[0] || !key.is_value()) {
                    return std::nullopt;
                }
                auto& kt = t->kind() == type_kind::map ? t->key_type() : t->element_type();
                if (t->kind() == type_kind::map) {
                    for (auto& [k, val] : split_map(*v[0])) {
                        if (kt->compare(k, key.data) == 0) {
                            return bytes(val.begin(), val.end());
                        }
                    }
                } else {
                    for (auto& e : split_collection(*v[0])) {
                        if (kt->compare(e, key.data) == 0) {
                            return bytes(e.begin(), e.end());
                        }
                    }
                }
                return std::nullopt;
            });
    }
    case raw_selector::kind::slice: {
        auto coll = make_selector(s, r.args[0], read, depth + 1);
        auto t = coll->type()->without_reversal();
        if (t->kind() != type_kind::map && t->kind() != type_kind::set) {
            throw invalid_request(fmt::format("Slice selection is only allowed on sets and maps, but {} is a {}",
                                              coll->name(), t->cql_name()));
        }
        column_spec spec{s.keyspace(), s.table(), coll->name(), t};
        auto key_spec = t->kind() == type_kind::map ? map_key_receiver(spec) : element_receiver(spec);
        auto bound = [&](const raw_term_ptr& b) -> std::optional<bytes> {
            if (!b) {
                return std::nullopt;
            }
            bind_specs specs{term_parse_context{}};
            auto p = b->prepare(key_spec, specs);
            if (!p->is_terminal()) {
                throw invalid_request("slice selection with a bind marker is not supported");
            }
            auto v = p->bind(query_options{});
            return v.is_value() ? std::optional<bytes>(v.data) : std::nullopt;
        };
        auto from = bound(r.element);
        auto to = bound(r.slice_end);
        auto name = fmt::format("{}[{}..{}]", coll->name(), r.element ? r.element->to_string() : "",
                                r.slice_end ? r.slice_end->to_string() : "");
        std::vector<std::unique_ptr<selector>> args;
        args.push_back(std::move(coll));
        return std::make_unique<function_selector>(
            name, t, std::move(args), [t, from, to](const std::vector<std::optional<bytes>>& v) -> std::optional<bytes> {
                if (!v[0]) {
                    return std::nullopt;
                }
                auto& kt = t->kind() == type_kind::map ? t->key_type() : t->element_type();
                auto in = [&](bytes_view k) {
                    return (!from || kt->compare(k, *from) >= 0) && (!to || kt->compare(k, *to) <= 0);
                };
                if (t->kind() == type_kind::map) {
                    std::vector<std::pair<bytes, bytes>> out;
                    for (auto& [k, val] : split_map(*v[0])) {
                        if (in(k)) {
                            out.emplace_back(bytes(k.begin(), k.end()), bytes(val.begin(), val.end()));
                        }
                    }
                    return serialize_map(out);
                }
                std::vector<bytes> out;
                for (auto& e : split_collection(*v[0])) {
                    if (in(e)) {
                        out.emplace_back(e.begin(), e.end());
                    }
                }
                return serialize_collection(out);
            });
    }
    case raw_selector::kind::field: {
        auto udt = make_selector(s, r.args[0], read, depth + 1);
        auto t = udt->type()->without_reversal();
        if (t->kind() != type_kind::user) {
            throw invalid_request(fmt::format("Invalid field selection: {} of type {} is not a user type",
                                              udt->name(), t->cql_name()));
        }
        auto& u = static_cast<const user_type_impl&>(*t);
        auto it = std::find(u.field_names().begin(), u.field_names().end(), r.field);
        if (it == u.field_names().end()) {
            throw invalid_request(fmt::format("{} of type {} has no field {}", udt->name(), t->cql_name(), r.field));
        }
        size_t i = size_t(it - u.field_names().begin());
        auto name = udt->name() + "." + r.field;
        auto ft = u.field_types()[i];
        std::vector<std::unique_ptr<selector>> args;
        args.push_back(std::move(udt));
        return std::make_unique<function_selector>(
            name, ft, std::move(args), [i](const std::vector<std::optional<bytes>>& v) -> std::optional<bytes> {
                if (!v[0]) {
                    return std::nullopt;
                }
                auto fields = split_tuple(*v[0]);
                if (i >= fields.size() || !fields[i]) {
                    return std::nullopt;
                }
                return bytes(fields[i]->begin(), fields[i]->end());
            });
    }
    case raw_selector::kind::term: throw invalid_request(fmt::format("a constant ({}) is only allowed as a function "
                                                                     "argument",
                                                                     r.element->to_string()));
    }
    throw invalid_request("bad selector");
}

} // namespace

std::optional<bytes> column_value(const row_view& r, const column_definition& c) {
    switch (c.kind) {
    case column_kind::partition_key: {
        auto v = r.pk.at(c.position);
        return to_bytes(v);
    }
    case column_kind::clustering_key: {
        if (!r.ck || c.position >= r.ck->size()) {
            return std::nullopt;
        }
        auto v = r.ck->components()[c.position];
        return bytes(v.begin(), v.end());
    }
    default: break;
    }
    auto* cc = cell_of(r, c);
    if (!cc) {
        return std::nullopt;
    }
    if (auto* a = std::get_if<atomic_cell>(cc)) {
        if (!a->is_live(r.now)) {
            return std::nullopt;
        }
        if (c.type->is_counter()) {
            // A counter's cell holds its shards (the counter context): the query sees their total.
            return counter_query_value(a->value());
        }
        return to_bytes(a->value());
    }
    auto& cells = std::get<collection_cells>(*cc).cells;
    auto t = c.type;
    std::vector<bytes> elems;
    std::vector<std::pair<bytes, bytes>> entries;
    std::vector<std::optional<bytes>> fields;
    for (auto& [path, a] : cells) {
        if (!a.is_live(r.now)) {
            continue;
        }
        switch (t->kind()) {
        case type_kind::list: elems.push_back(to_bytes(a.value())); break;
        case type_kind::set: elems.push_back(path); break;
        case type_kind::map: entries.emplace_back(path, to_bytes(a.value())); break;
        case type_kind::user: {
            auto i = size_t(from_be<int16_t>(path));
            if (fields.size() <= i) {
                fields.resize(i + 1);
            }
            fields[i] = to_bytes(a.value());
            break;
        }
        default: break;
        }
    }
    switch (t->kind()) {
    case type_kind::list:
    case type_kind::set:
        if (elems.empty()) {
            return std::nullopt;
        }
        return serialize_collection(elems);
    case type_kind::map:
        if (entries.empty()) {
            return std::nullopt;
        }
        return serialize_map(entries);
    case type_kind::user:
        if (fields.empty()) {
            return std::nullopt;
        }
        fields.resize(t->field_types().size());
        return serialize_tuple(fields);
    default: return std::nullopt;
    }
}

std::string json_column_key(const std::string& name) {
    bool lower = std::none_of(name.begin(), name.end(), [](unsigned char c) { return std::isupper(c); });
    return lower ? name : "\"" + name + "\"";
}

selection::selection(const schema_ptr& s, const std::vector<raw_selector>& raw, bool json) : _json(json) {
    if (raw.empty()) {
        std::vector<const column_definition*> cols;
        for (auto& c : s->partition_key()) {
            cols.push_back(&c);
        }
        for (auto& c : s->clustering_key()) {
            cols.push_back(&c);
        }
        auto by_name = [](const column_definition* a, const column_definition* b) { return a->name < b->name; };
        std::vector<const column_definition*> st, reg;
        for (auto& c : s->static_columns()) {
            st.push_back(&c);
        }
        for (auto& c : s->regular_columns()) {
            reg.push_back(&c);
        }
        std::sort(st.begin(), st.end(), by_name);
        std::sort(reg.begin(), reg.end(), by_name);
        cols.insert(cols.end(), st.begin(), st.end());
        cols.insert(cols.end(), reg.begin(), reg.end());
        for (auto* c : cols) {
            _read.push_back(c);
            _selectors.push_back(std::make_unique<column_selector>(*c));
            _spec.push_back(column_spec{s->keyspace(), s->table(), c->name, c->type});
        }
    } else {
        for (auto& r : raw) {
            auto sel = make_selector(*s, r, _read, 0);
            _spec.push_back(column_spec{s->keyspace(), s->table(), r.alias.empty() ? sel->name() : r.alias, sel->type()});
            _aggregate = _aggregate || sel->is_aggregate();
            _selectors.push_back(std::move(sel));
        }
    }
    if (_json) {
        _result.push_back(column_spec{s->keyspace(), s->table(), "[json]", text_type()});
    } else {
        _result = _spec;
    }
}

void selection::add_input(const row_view& r) {
    for (auto& s : _selectors) {
        s->add_input(r);
    }
}

std::vector<std::optional<bytes>> selection::output_row() {
    std::vector<std::optional<bytes>> out;
    for (auto& s : _selectors) {
        out.push_back(s->output());
        s->reset();
    }
    if (!_json) {
        return out;
    }
    std::string j = "{";
    for (size_t i = 0; i < out.size(); ++i) {
        if (i) {
            j += ", ";
        }
        j += "\"";
        for (char c : json_column_key(_spec[i].name)) {
            if (c == '"' || c == '\\') {
                j += '\\';
            }
            j += c;
        }
        j += "\": ";
        j += out[i] ? _spec[i].type->to_json_string(*out[i]) : "null";
    }
    j += "}";
    return {to_bytes(j)};
}

} // namespace reef::cql
