// SELECT executed: the WHERE values bound into partition keys or a ring range, clustering ranges and filters; the
// rows read page by page through db/query_page (IN's keys, in the partition key type's order, in batches served by
// database::multi_get), filtered, limited, selected and paged.
#include "cql/cql_error.hh"
#include "cql/paging_state.hh"
#include "cql/query_processor.hh"
#include "cql/select_prepared.hh"
#include "db/database.hh"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace reef::cql {

namespace {

// Rows a database page asks for at most when more are wanted (aggregates, unpaged queries): bounds memory.
constexpr uint64_t rows_per_read = 10000;

deletion_time_type now_seconds() {
    return deletion_time_type(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

int64_t bigint_of(const bytes& b) {
    if (b.size() != 8) {
        throw invalid_request("Invalid token value: expected 8 bytes");
    }
    int64_t v = 0;
    for (auto c : b) {
        v = int64_t(uint64_t(v) << 8 | c);
    }
    return v;
}

struct bound_filter {
    std::vector<const column_definition*> columns;
    std::string op;
    // Per value: its components (one for a single column).
    std::vector<std::vector<bytes>> values;
};

// <0, 0, >0: the row's values of the columns against one value (lexicographic over a tuple); nullopt when a
// column is null.
std::optional<int> compare_row(const row_view& r, const std::vector<const column_definition*>& cols,
                               const std::vector<bytes>& value) {
    for (size_t i = 0; i < cols.size(); ++i) {
        auto v = column_value(r, *cols[i]);
        if (!v) {
            return std::nullopt;
        }
        int c = cols[i]->type->compare(*v, value[i]);
        if (c != 0) {
            return c;
        }
    }
    return 0;
}

bool matches(const row_view& r, const bound_filter& f) {
    if (f.op == "contains" || f.op == "contains key") {
        auto v = column_value(r, *f.columns[0]);
        if (!v) {
            return false;
        }
        auto t = f.columns[0]->type;
        std::vector<bytes_view> items;
        if (t->kind() == type_kind::map) {
            for (auto& [k, val] : split_map(*v)) {
                items.push_back(f.op == "contains key" ? k : val);
            }
        } else {
            items = split_collection(*v);
        }
        auto et = t->kind() != type_kind::map ? t->element_type()
                  : f.op == "contains key"    ? t->key_type()
                                              : t->value_type();
        auto& want = f.values.at(0).at(0);
        return std::any_of(items.begin(), items.end(), [&](bytes_view x) { return et->compare(x, want) == 0; });
    }
    if (f.op == "in") {
        return std::any_of(f.values.begin(), f.values.end(), [&](auto& v) { return compare_row(r, f.columns, v) == 0; });
    }
    auto c = compare_row(r, f.columns, f.values.at(0));
    if (!c) {
        return false;
    }
    if (f.op == "=") {
        return *c == 0;
    }
    if (f.op == "<") {
        return *c < 0;
    }
    if (f.op == "<=") {
        return *c <= 0;
    }
    if (f.op == ">") {
        return *c > 0;
    }
    return *c >= 0;
}

// A bound value split into its columns' components (a tuple's fields, else itself).
std::vector<bytes> components(const bytes& v, size_t columns, bool tuple) {
    if (!tuple) {
        return {v};
    }
    std::vector<bytes> out;
    for (auto& f : split_tuple(v)) {
        if (!f) {
            throw invalid_request("Invalid null value in a multi-column relation");
        }
        out.emplace_back(f->begin(), f->end());
    }
    out.resize(columns);
    return out;
}

class executor {
public:
    executor(const select_statement& st, query_processor& qp, query_options opts)
        : _st(st), _qp(qp), _o(std::move(opts)), _s(st.schema) {}

    future<result_message> run() {
        try {
            co_return co_await run_unchecked();
        } catch (const read_timeout_error&) {
            error_details d;
            d.consistency = _o.consistency;
            d.received = 0;
            d.block_for = 1;
            d.data_present = false;
            throw cql_error(error_code::read_timeout, "Operation timed out - received only 0 responses.", d);
        } catch (const no_such_table&) {
            throw invalid_request(fmt::format("table {} does not exist", _s->table()));
        } catch (const cql_error&) {
            throw;
        } catch (const std::exception& e) {
            // A bug, not the client's fault: Cassandra's server error, naming what failed.
            throw cql_error(error_code::server_error, fmt::format("SELECT from {}.{} failed: {}", _s->keyspace(),
                                                                  _s->table(), e.what()));
        }
    }

private:
    uint64_t bind_limit(const term_ptr& t) const {
        if (!t) {
            return no_row_limit;
        }
        auto v = t->bind(_o);
        if (v.is_unset() || v.is_null()) {
            if (v.is_unset()) {
                return no_row_limit;
            }
            throw invalid_request("Invalid null value of limit");
        }
        if (v.data.size() != 4) {
            throw invalid_request("Invalid limit value");
        }
        int32_t n = int32_t(uint32_t(v.data[0]) << 24 | uint32_t(v.data[1]) << 16 | uint32_t(v.data[2]) << 8 |
                            v.data[3]);
        if (n <= 0) {
            throw invalid_request("LIMIT must be strictly positive");
        }
        return uint64_t(n);
    }

    dht::decorated_key make_key(const std::vector<bytes>& comps) const {
        if (comps.size() == 1) {
            return dht::decorated_key(partition_key::from_single_value(to_string_view(comps[0])));
        }
        std::vector<std::string_view> views;
        for (auto& c : comps) {
            views.push_back(to_string_view(c));
        }
        return dht::decorated_key(partition_key::from_components(views));
    }

    // <0, 0, >0 by the partition key type (component by component): IN's order.
    int compare_keys(const std::vector<bytes>& a, const std::vector<bytes>& b) const {
        for (size_t i = 0; i < a.size(); ++i) {
            int c = _s->partition_key()[i].type->compare(a[i], b[i]);
            if (c) {
                return c;
            }
        }
        return 0;
    }

    void bind_where() {
        auto& pk = _s->partition_key();
        if (_st.partition_keys) {
            std::vector<std::vector<bytes>> per_column;
            for (size_t i = 0; i < pk.size(); ++i) {
                per_column.push_back((*_st.partition_keys)[i].bind(_o, pk[i].name));
            }
            std::vector<std::vector<bytes>> keys{{}};
            for (auto& vs : per_column) {
                std::vector<std::vector<bytes>> next;
                for (auto& k : keys) {
                    for (auto& v : vs) {
                        auto nk = k;
                        nk.push_back(v);
                        next.push_back(std::move(nk));
                    }
                }
                keys = std::move(next);
            }
            std::sort(keys.begin(), keys.end(), [&](auto& a, auto& b) { return compare_keys(a, b) < 0; });
            keys.erase(std::unique(keys.begin(), keys.end(), [&](auto& a, auto& b) { return compare_keys(a, b) == 0; }),
                       keys.end());
            for (auto& k : keys) {
                _keys.emplace_back(k, make_key(k));
            }
        } else {
            std::optional<dht::partition_range::bound> start, end;
            auto token_of = [&](const token_bound& b) {
                if (b.value) {
                    return dht::token(bigint_of(relation_values{b.value, {}, false}.bind(_o, "token")[0]));
                }
                std::vector<bytes> comps;
                for (size_t i = 0; i < b.key.size(); ++i) {
                    comps.push_back(relation_values{b.key[i], {}, false}.bind(_o, pk[i].name)[0]);
                }
                return make_key(comps).get_token();
            };
            std::optional<dht::token> ts, te;
            if (_st.token_start) {
                ts = token_of(*_st.token_start);
                start = dht::partition_range::bound{_st.token_start->inclusive ? dht::ring_position::before_token(*ts)
                                                                               : dht::ring_position::after_token(*ts),
                                                    true};
            }
            if (_st.token_end) {
                te = token_of(*_st.token_end);
                end = dht::partition_range::bound{_st.token_end->inclusive ? dht::ring_position::after_token(*te)
                                                                           : dht::ring_position::before_token(*te),
                                                  true};
            }
            if (ts && te && (*te < *ts || (*te == *ts && !(_st.token_start->inclusive && _st.token_end->inclusive)))) {
                _empty = true;
            }
            _range = dht::partition_range(start, end);
        }
        // Clustering relations: ranges, or filters.
        std::vector<clustering_relation> rels;
        for (auto& c : _st.clustering) {
            auto vals = c.values.bind(_o, c.text);
            if (_st.clustering_filters) {
                bound_filter f;
                for (auto i : c.columns) {
                    f.columns.push_back(&_s->clustering_key()[i]);
                }
                f.op = c.op == restriction_op::eq   ? "="
                       : c.op == restriction_op::lt ? "<"
                       : c.op == restriction_op::le ? "<="
                       : c.op == restriction_op::gt ? ">"
                       : c.op == restriction_op::ge ? ">="
                                                    : "in";
                for (auto& v : vals) {
                    f.values.push_back(components(v, c.columns.size(), c.tuple));
                }
                _filters.push_back(std::move(f));
                continue;
            }
            clustering_relation r{c.columns, c.op, {}, c.text};
            for (auto& v : vals) {
                for (auto& x : components(v, c.columns.size(), c.tuple)) {
                    r.values.push_back(std::move(x));
                }
            }
            rels.push_back(std::move(r));
        }
        try {
            _slice = clustering_ranges_from_relations(*_s, rels);
        } catch (const bad_restriction& e) {
            throw invalid_request(e.what());
        }
        for (auto& f : _st.filters) {
            bound_filter b{f.columns, f.op, {}};
            for (auto& v : f.values.bind(_o, f.text)) {
                b.values.push_back(components(v, f.columns.size(), f.columns.size() > 1));
            }
            _filters.push_back(std::move(b));
        }
    }

    // What read_source reads: a range (a single partition too), or IN's keys (IN's order) through query_keys_page.
    struct source {
        dht::partition_range range;
        std::optional<page_position> start_after;
        std::vector<dht::decorated_key> keys;
    };

    std::vector<source> sources(const std::optional<paging_state>& ps) {
        std::optional<page_position> start;
        if (ps) {
            auto k = dht::decorated_key(partition_key(to_string_view(ps->partition_key)));
            std::optional<clustering_key_prefix> row;
            if (ps->clustering) {
                row = clustering_key_prefix(*ps->clustering);
            }
            start = page_position{k, std::move(row), ps->partition_rows};
        }
        std::vector<source> out;
        if (_empty) {
            return out;
        }
        if (!_st.partition_keys) {
            out.push_back(source{_range, start});
            return out;
        }
        std::vector<bytes> ps_comps;
        if (ps) {
            // Named: the views point into it (a temporary in a range-for's expression dies first).
            partition_key key(std::string(to_string_view(ps->partition_key)));
            for (auto c : key.components(_s->partition_key().size())) {
                ps_comps.push_back(to_bytes(c));
            }
        }
        for (auto& [comps, k] : _keys) {
            std::optional<page_position> st;
            if (ps) {
                int c = compare_keys(comps, ps_comps);
                if (c < 0 || (c == 0 && !start->row)) {
                    continue;
                }
                if (c == 0) {
                    st = start;
                }
            }
            out.push_back(source{dht::partition_range::singular(k), st, {}});
        }
        if (_keys.size() > 1 && !out.empty()) {
            // IN: one source of its keys, read in batches (database::multi_get).
            source in{dht::partition_range::full(), out.front().start_after, {}};
            for (auto& src : out) {
                in.keys.push_back(*src.range.start()->position.key());
            }
            out.clear();
            out.push_back(std::move(in));
        }
        return out;
    }

    static bytes paging_state_after(const page_position& last, uint64_t remaining) {
        paging_state out;
        out.partition_key = to_bytes(last.key.key().view());
        if (last.row) {
            out.clustering.emplace();
            for (auto c : last.row->components()) {
                out.clustering->emplace_back(c.begin(), c.end());
            }
        }
        out.partition_rows = last.partition_rows;
        out.remaining = remaining;
        return encode_paging_state(out);
    }

    future<result_message> run_unchecked() {
        bind_where();
        bind_paging();
        auto srcs = sources(_ps);
        for (size_t si = 0; si < srcs.size() && !_full; ++si) {
            co_await read_source(srcs[si]);
        }
        co_return finish();
    }

    // The limits, the paging state and the rows to read; the request every page starts from.
    void bind_paging() {
        _limit = bind_limit(_st.limit);
        _pplimit = _st.distinct ? 1 : bind_limit(_st.per_partition_limit);
        if (_o.paging_state && !_o.paging_state->empty()) {
            _ps = decode_paging_state(*_o.paging_state);
        }
        _paged = _o.page_size > 0 && (!_st.aggregate || _st.group_by > 0);
        _limit_left = _ps ? std::min(_ps->remaining, _limit) : _limit;
        // An aggregate reads every row; its LIMIT counts result rows (one, or the groups of GROUP BY).
        _grouped = _st.group_by > 0;
        _want = _st.aggregate || _grouped ? no_row_limit
                : _paged                  ? std::min<uint64_t>(uint64_t(_o.page_size), _limit_left)
                                          : _limit_left;
        _post_order = _st.ordered && _keys.size() > 1;
        if (_post_order) {
            if (_paged && _limit > uint64_t(_o.page_size)) {
                throw invalid_request("Cannot page queries with both ORDER BY and a IN restriction on the partition "
                                      "key; you must either remove the ORDER BY or the IN and sort client side, or "
                                      "disable paging for this query");
            }
            // Every row: the LIMIT applies once they are sorted (Cassandra's getDataLimits).
            _want = no_row_limit;
        }
        _sel.emplace(_s, _st.selectors, _st.json);
        _rs = result_set(result_metadata{_sel->result_columns(), std::nullopt});
        auto timeout = _st.timeout ? *_st.timeout
                                   : std::chrono::duration_cast<std::chrono::milliseconds>(_qp.config().read_request_timeout);
        _base.slice = _slice;
        _base.order = read_order_for(_st.reversed);
        _base.partition_row_limit = _filters.empty() ? _pplimit : no_row_limit;
        _base.static_only_is_row = _st.static_only_rows || _st.distinct;
        _base.now = now_seconds();
        _base.bypass = _st.bypass_cache ? bypass_cache::yes : bypass_cache::no;
        _base.timeout = read_clock::now() + timeout;
        _base.description = fmt::format("SELECT from {}.{}", _s->keyspace(), _s->table());
        _group_target = _paged ? std::min<uint64_t>(uint64_t(_o.page_size), _limit_left) : _limit_left;
        _full = _want == 0;
    }

    // One source's pages, until it ends or the result is full.
    future<> read_source(const source& src) {
        page_request req = _base;
        req.range = src.range;
        req.start_after = src.start_after;
        _cur.reset();
        _cur_count = 0;
        while (!_full) {
            uint64_t left = _want == no_row_limit ? no_row_limit : _want - _got;
            req.row_limit = std::min(left, rows_per_read);
            page_result page;
            if (src.keys.empty()) {
                page = co_await query_page(_qp.sharded_db(), _s, req);
            } else {
                page = co_await query_keys_page(_qp.sharded_db(), _s, src.keys, req);
            }
            for (size_t i = 0; i < page.partitions.size() && !_full; ++i) {
                consume_partition(page.partitions[i], req);
            }
            if (page.exhausted || !page.last) {
                break;
            }
            req.start_after = page.last;
        }
    }

    // A page's partition: its rows (or its static-only row) in the read's order, until the result is full.
    void consume_partition(const mutation& m, const page_request& req) {
        auto& key = m.decorated_key();
        bool resumed = req.start_after && req.start_after->row && req.start_after->key == key;
        if (!_cur || !(*_cur == key)) {
            _cur = key;
            _cur_count = resumed ? req.start_after->partition_rows : 0;
        }
        auto pk_comps = key.key().components(_s->partition_key().size());
        auto& rows = m.partition().rows();
        if (rows.empty()) {
            if (counted_rows(m, req.static_only_is_row, resumed)) {
                consume_row(m, pk_comps, nullptr, nullptr);
            }
        } else if (!_st.reversed) {
            for (auto it = rows.begin(); it != rows.end() && !_full; ++it) {
                consume_row(m, pk_comps, &it->first, &it->second);
            }
        } else {
            for (auto it = rows.rbegin(); it != rows.rend() && !_full; ++it) {
                consume_row(m, pk_comps, &it->first, &it->second);
            }
        }
    }

    // One row read: PER PARTITION LIMIT, the filters, GROUP BY's groups, then into the selection.
    void consume_row(const mutation& m, const std::vector<std::string_view>& pk_comps, const clustering_key_prefix* ck,
                     const deletable_row* row) {
        auto& key = m.decorated_key();
        row_view v{*_s, key, pk_comps, ck, row, m.partition().static_row(), _base.now};
        if (_cur_count >= _pplimit) {
            return;
        }
        for (auto& f : _filters) {
            if (!matches(v, f)) {
                return;
            }
        }
        if (_grouped) {
            std::vector<bytes> g;
            for (auto c : pk_comps) {
                g.push_back(to_bytes(c));
            }
            for (size_t i = pk_comps.size(); i < _st.group_by; ++i) {
                auto c = ck && ck->size() > i - pk_comps.size() ? ck->component(i - pk_comps.size()) : bytes_view();
                g.emplace_back(c.begin(), c.end());
            }
            if (_group && *_group != g) {
                end_group();
                if (_groups >= _group_target) {
                    _full = true;
                    return;
                }
            }
            _group = std::move(g);
        }
        _sel->add_input(v);
        if (_grouped) {
            // Emitted when the group ends.
        } else if (_post_order) {
            _collected.emplace_back(ck ? *ck : clustering_key_prefix(), _sel->output_row());
        } else if (!_st.aggregate) {
            _rs->add_row(_sel->output_row());
        }
        ++_cur_count;
        ++_got;
        _last = page_position{key, ck ? std::optional<clustering_key_prefix>(*ck) : std::nullopt, _cur_count};
        _full = _got >= _want;
    }

    // GROUP BY: the group in progress becomes a result row.
    void end_group() {
        if (_group) {
            _rs->add_row(_sel->output_row());
            ++_groups;
            _group.reset();
        }
    }

    // The result once the reads are done: IN's ORDER BY sort, the last group, the aggregate, the paging state.
    result_message finish() {
        if (_post_order) {
            clustering_comparator cmp(*_s);
            std::stable_sort(_collected.begin(), _collected.end(), [&](auto& a, auto& b) {
                int c = cmp(a.first, b.first);
                return _st.reversed ? c > 0 : c < 0;
            });
            for (size_t i = 0; i < _collected.size() && i < _limit; ++i) {
                _rs->add_row(_collected[i].second);
            }
        } else if (_grouped && !_full) {
            end_group();
        } else if (_grouped) {
            if (_paged && _groups < _limit_left) {
                _rs->metadata().paging_state = paging_state_after(*_last, _limit_left - _groups);
            }
        } else if (_st.aggregate) {
            _rs->add_row(_sel->output_row());
        } else if (_paged && _full && _last && _got < _limit_left) {
            _rs->metadata().paging_state = paging_state_after(*_last, _limit_left == no_row_limit ? no_row_limit
                                                                                                    : _limit_left - _got);
        }
        return result_message(std::move(*_rs));
    }

    const select_statement& _st;
    query_processor& _qp;
    query_options _o;
    schema_ptr _s;
    std::vector<std::pair<std::vector<bytes>, dht::decorated_key>> _keys;
    dht::partition_range _range = dht::partition_range::full();
    bool _empty = false;
    clustering_ranges _slice;
    std::vector<bound_filter> _filters;
    // bind_paging's.
    uint64_t _limit = no_row_limit;
    uint64_t _pplimit = no_row_limit;
    uint64_t _limit_left = no_row_limit;
    // Rows to read (no_row_limit: all).
    uint64_t _want = no_row_limit;
    std::optional<paging_state> _ps;
    bool _paged = false;
    bool _grouped = false;
    // IN with ORDER BY: the rows sorted by clustering across partitions once all are read.
    bool _post_order = false;
    std::optional<selection> _sel;
    std::optional<result_set> _rs;
    std::vector<std::pair<clustering_key_prefix, std::vector<std::optional<bytes>>>> _collected;
    page_request _base;
    // The rows taken, the last one, and whether the result is full.
    uint64_t _got = 0;
    std::optional<page_position> _last;
    bool _full = false;
    // The partition being read and its rows taken (PER PARTITION LIMIT across pages).
    std::optional<dht::decorated_key> _cur;
    uint64_t _cur_count = 0;
    // GROUP BY: the current group's key, and the groups emitted. A page holds page_size groups (LIMIT counts
    // groups too); it ends at the last row of its last group, seen when the next group's first row comes.
    std::optional<std::vector<bytes>> _group;
    uint64_t _groups = 0;
    uint64_t _group_target = no_row_limit;
};

} // namespace

future<result_message> select_statement::execute(query_processor& qp, client_state&, const query_options& options) const {
    auto opts = positional_options(bind_vars, options);
    executor ex(*this, qp, std::move(opts));
    co_return co_await ex.run();
}

} // namespace reef::cql
