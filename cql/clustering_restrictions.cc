// WHERE text to clustering ranges. See clustering_restrictions.hh.
//
// A tuple bound (v0, ..., vn-1) on columns k..k+n-1 after the equality prefix P selects, for `>`, the union over
// i of {P + v0..vi-1 equal, column k+i greater than vi} (plus P + v equal for `>=`); each piece is one range in
// clustering order (after the value for an ASC column, before it for a DESC one). The lower and the upper bound's
// pieces are each sorted, then intersected. A single-column bound is the tuple of one.
#include "cql/clustering_restrictions.hh"

#include "cql/cql_lexer.hh"
#include "schema/types.hh"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

namespace {

using op = restriction_op;
using relation = clustering_relation;

struct tuple_bound {
    size_t first;  // the first column
    std::vector<bytes> values;
    bool inclusive;
    std::string text;
};

class where_parser {
public:
    where_parser(const schema& s, std::string_view text) : _s(s), _text(text), _ts(tokenize_cql(text)) {
        size_t pos = 0;
        _line_starts.push_back(0);
        while ((pos = text.find('\n', pos)) != std::string_view::npos) {
            _line_starts.push_back(++pos);
        }
    }

    std::vector<relation> parse() {
        std::vector<relation> out;
        if (_ts.at_end()) {
            return out;
        }
        while (true) {
            out.push_back(parse_relation());
            if (_ts.at_end()) {
                break;
            }
            if (!_ts.accept_keyword("and")) {
                _ts.fail("AND between relations");
            }
        }
        return out;
    }

private:
    size_t offset(const cql_token& t) const { return _line_starts.at(t.line - 1) + t.column - 1; }
    size_t end_offset(const cql_token& t) const { return offset(t) + t.source.size(); }
    std::string text_between(const cql_token& first, const cql_token& last) const {
        size_t a = offset(first), b = end_offset(last);
        return std::string(_text.substr(a, b > a ? b - a : 0));
    }

    size_t clustering_index(const cql_token& at, const std::string& name, const cql_token& rel_start) {
        for (size_t i = 0; i < _s.clustering_key().size(); ++i) {
            if (_s.clustering_key()[i].name == name) {
                return i;
            }
        }
        // The relation is not complete yet: name it by what we have and the rest of the text.
        auto rel = relation_text_from(rel_start);
        if (auto* c = _s.find_column(name)) {
            const char* kind = c->kind == column_kind::partition_key ? "a partition key column (the partition is "
                                                                       "chosen with --partition)"
                               : c->is_static()                     ? "a static column"
                                                                    : "a regular column";
            throw bad_restriction(fmt::format("relation `{}`: {} is {}, not a clustering column; only clustering "
                                              "columns can be restricted", rel, name, kind));
        }
        (void)at;
        throw bad_restriction(fmt::format("relation `{}`: no column {} in table {}.{}", rel, name, _s.keyspace(),
                                          _s.table()));
    }

    // The text from a token to the next AND (or the end), for errors raised before a relation is parsed whole.
    std::string relation_text_from(const cql_token& start) const {
        size_t a = offset(start);
        auto rest = _text.substr(a);
        std::string lower(rest);
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        auto e = lower.find(" and ");
        return std::string(rest.substr(0, e));
    }

    op parse_op(const cql_token& rel_start) {
        if (_ts.accept_symbol('=')) {
            return op::eq;
        }
        if (_ts.accept_symbol('<')) {
            return _ts.accept_symbol('=') ? op::le : op::lt;
        }
        if (_ts.accept_symbol('>')) {
            return _ts.accept_symbol('=') ? op::ge : op::gt;
        }
        if (_ts.accept_keyword("in")) {
            return op::in;
        }
        auto& t = _ts.peek();
        if (_ts.peek_symbol('!') && _ts.peek_symbol('=', 1)) {
            throw bad_restriction(fmt::format("relation `{}`: operator != is not supported (only =, <, <=, >, >=, IN "
                                              "on clustering columns)",
                                              relation_text_from(rel_start)));
        }
        throw bad_restriction(fmt::format("relation `{}`: operator {} is not supported (only =, <, <=, >, >=, IN on "
                                          "clustering columns)",
                                          relation_text_from(rel_start), t.source.empty() ? "(none)" : t.source));
    }

    // `(term, ...)`: the terms, and the closing parenthesis. An empty list only where `allow_empty`.
    std::pair<std::vector<std::pair<const cql_token*, const cql_token*>>, const cql_token*> term_list(bool allow_empty) {
        _ts.expect_symbol('(');
        std::vector<std::pair<const cql_token*, const cql_token*>> terms;
        if (!allow_empty || !_ts.peek_symbol(')')) {
            do {
                terms.push_back(term());
            } while (_ts.accept_symbol(','));
        }
        const cql_token* end = &_ts.peek();
        _ts.expect_symbol(')');
        return {std::move(terms), end};
    }

    // One term's text: a literal token (with a leading '-'), or a bracketed group.
    std::pair<const cql_token*, const cql_token*> term() {
        const cql_token* first = &_ts.peek();
        if (first->kind == cql_token_kind::end) {
            _ts.fail("a value");
        }
        if (_ts.peek_symbol('(') || _ts.peek_symbol('[') || _ts.peek_symbol('{')) {
            int depth = 0;
            const cql_token* last = nullptr;
            do {
                auto& t = _ts.next();
                if (t.kind == cql_token_kind::end) {
                    _ts.fail("a closing bracket");
                }
                if (t.kind == cql_token_kind::symbol && (t.text == "(" || t.text == "[" || t.text == "{")) {
                    ++depth;
                } else if (t.kind == cql_token_kind::symbol && (t.text == ")" || t.text == "]" || t.text == "}")) {
                    --depth;
                }
                last = &t;
            } while (depth > 0);
            return {first, last};
        }
        if (_ts.accept_symbol('-')) {
            return {first, &_ts.next()};
        }
        auto& t = _ts.next();
        if (t.kind == cql_token_kind::symbol) {
            _ts.fail(t, "a value");
        }
        return {first, &t};
    }

    bytes value(size_t column, const std::pair<const cql_token*, const cql_token*>& t, const cql_token& rel_start,
                const cql_token& rel_end) {
        auto literal = text_between(*t.first, *t.second);
        auto& col = _s.clustering_key()[column];
        try {
            return col.type->from_cql_literal(literal);
        } catch (const std::exception& e) {
            throw bad_restriction(fmt::format("relation `{}`: {} is not a valid {} value for {}: {}",
                                              text_between(rel_start, rel_end), literal, col.type->cql_name(),
                                              col.name, e.what()));
        }
    }

    relation parse_relation() {
        const cql_token& start = _ts.peek();
        relation r;
        if (_ts.accept_symbol('(')) {
            std::vector<const cql_token*> names;
            do {
                names.push_back(&_ts.peek());
                auto name = _ts.expect_name("a clustering column");
                r.columns.push_back(clustering_index(*names.back(), name, start));
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol(')');
            r.o = parse_op(start);
            if (r.o == op::in) {
                throw bad_restriction(fmt::format("relation `{}`: IN on a tuple of columns is not supported (only "
                                                  "`column IN (value, ...)`)",
                                                  relation_text_from(start)));
            }
            auto [terms, end] = term_list(false);
            r.text = text_between(start, *end);
            if (terms.size() != r.columns.size()) {
                throw bad_restriction(fmt::format("relation `{}`: {} columns but {} values", r.text,
                                                  r.columns.size(), terms.size()));
            }
            for (size_t i = 0; i < terms.size(); ++i) {
                r.values.push_back(value(r.columns[i], terms[i], start, *end));
            }
            for (size_t i = 1; i < r.columns.size(); ++i) {
                if (r.columns[i] != r.columns[i - 1] + 1) {
                    throw bad_restriction(fmt::format("relation `{}`: the columns of a multi-column relation must "
                                                      "be consecutive clustering columns in clustering order",
                                                      r.text));
                }
            }
            return r;
        }
        auto name = _ts.expect_name("a clustering column or '('");
        r.columns.push_back(clustering_index(start, name, start));
        r.o = parse_op(start);
        if (r.o == op::in) {
            // column IN (value, ...): each value an equality, the relation their union.
            auto [terms, end] = term_list(true);
            r.text = text_between(start, *end);
            for (auto& t : terms) {
                r.values.push_back(value(r.columns[0], t, start, *end));
            }
            return r;
        }
        auto t = term();
        r.text = text_between(start, *t.second);
        r.values.push_back(value(r.columns[0], t, start, *t.second));
        return r;
    }

    const schema& _s;
    std::string_view _text;
    cql_token_stream _ts;
    std::vector<size_t> _line_starts;
};

class range_builder {
public:
    explicit range_builder(const schema& s) : _s(s), _cmp(s) {}

    clustering_ranges build(const std::vector<relation>& rels) {
        // An IN is the union of the restrictions with each of its values as an equality instead (Cassandra's
        // cartesian product of IN values, one clustering prefix each).
        for (size_t r = 0; r < rels.size(); ++r) {
            if (rels[r].o != op::in) {
                continue;
            }
            clustering_ranges all;
            auto with = rels;
            with[r].o = op::eq;
            // A tuple IN's values come flat, one tuple after the other.
            size_t width = rels[r].columns.size();
            for (size_t v = 0; v + width <= rels[r].values.size(); v += width) {
                with[r].values.assign(rels[r].values.begin() + ptrdiff_t(v), rels[r].values.begin() + ptrdiff_t(v + width));
                auto part = build(with);
                all.insert(all.end(), part.begin(), part.end());
            }
            std::sort(all.begin(), all.end(), [&](const position_range& x, const position_range& y) {
                return less(x.start, y.start);
            });
            return merge(all);
        }
        size_t n = _s.clustering_key().size();
        std::vector<std::optional<bytes>> eq(n);
        std::vector<std::string> eq_text(n);
        std::optional<tuple_bound> lower, upper;
        auto name = [&](size_t i) { return _s.clustering_key()[i].name; };
        for (auto& r : rels) {
            if (r.o == op::eq) {
                for (size_t i = 0; i < r.columns.size(); ++i) {
                    auto c = r.columns[i];
                    if (eq[c]) {
                        throw bad_restriction(fmt::format("relation `{}`: {} is already restricted by `{}`", r.text,
                                                          name(c), eq_text[c]));
                    }
                    eq[c] = r.values[i];
                    eq_text[c] = r.text;
                }
                continue;
            }
            bool is_lower = r.o == op::gt || r.o == op::ge;
            auto& b = is_lower ? lower : upper;
            if (b && b->first != r.columns[0]) {
                throw range_after_range(*b, tuple_bound{r.columns[0], r.values, false, r.text});
            }
            if (b) {
                throw bad_restriction(fmt::format("relation `{}`: there is already {} bound, `{}`", r.text,
                                                  is_lower ? "a lower" : "an upper", b->text));
            }
            b = tuple_bound{r.columns[0], r.values, r.o == op::ge || r.o == op::le, r.text};
        }
        if (lower && upper && lower->first != upper->first) {
            throw range_after_range(*lower, *upper);
        }
        size_t k = 0;
        while (k < n && eq[k]) {
            ++k;
        }
        for (size_t i = k + 1; i < n; ++i) {
            if (eq[i]) {
                if ((lower && lower->first == k) || (upper && upper->first == k)) {
                    throw bad_restriction(fmt::format("relation `{}`: {} cannot be restricted after the range on {} "
                                                      "(`{}`)",
                                                      eq_text[i], name(i), name(k),
                                                      lower && lower->first == k ? lower->text : upper->text));
                }
                throw bad_restriction(fmt::format("relation `{}`: {} is restricted but {} before it is not",
                                                  eq_text[i], name(i), name(k)));
            }
        }
        for (auto* b : {&lower, &upper}) {
            if (!*b) {
                continue;
            }
            auto first = (*b)->first;
            if (first < k || (first == k && k < n && eq[k])) {
                throw bad_restriction(fmt::format("relation `{}`: {} is restricted both by `{}` and by a range",
                                                  (*b)->text, name(first), eq_text[first]));
            }
            if (first > k) {
                throw bad_restriction(fmt::format("relation `{}`: {} is restricted but {} before it is not",
                                                  (*b)->text, name(first), name(k)));
            }
            for (size_t i = 0; i < (*b)->values.size(); ++i) {
                if (eq[first + i]) {
                    throw bad_restriction(fmt::format("relation `{}`: {} is restricted both by `{}` and by a range",
                                                      (*b)->text, name(first + i), eq_text[first + i]));
                }
            }
        }
        std::vector<bytes> prefix;
        for (size_t i = 0; i < k; ++i) {
            prefix.push_back(*eq[i]);
        }
        auto whole = clustering_ranges{position_range::for_prefix(clustering_key_prefix(prefix))};
        auto a = lower ? pieces(prefix, *lower, true) : whole;
        auto b = upper ? pieces(prefix, *upper, false) : whole;
        return intersect(a, b);
    }

private:
    // Two bounds starting at different columns: the later column is restricted after the earlier one's range.
    bad_restriction range_after_range(const tuple_bound& a, const tuple_bound& b) const {
        auto& first = a.first < b.first ? a : b;
        auto& later = a.first < b.first ? b : a;
        return bad_restriction(fmt::format("relation `{}`: {} cannot be restricted after the range on {} (`{}`)",
                                           later.text, _s.clustering_key()[later.first].name,
                                           _s.clustering_key()[first.first].name, first.text));
    }

    bool less(const position_in_partition& a, const position_in_partition& b) const { return _cmp(a, b) < 0; }

    static clustering_key_prefix key(std::vector<bytes> p) { return clustering_key_prefix(std::move(p)); }

    // The ranges of `prefix + bound`'s side: greater (lower bound) or smaller (upper bound), sorted.
    clustering_ranges pieces(const std::vector<bytes>& prefix, const tuple_bound& b, bool greater) {
        clustering_ranges out;
        std::vector<bytes> p = prefix;
        for (size_t i = 0; i < b.values.size(); ++i) {
            auto with_value = p;
            with_value.push_back(b.values[i]);
            bool desc = _s.clustering_key()[b.first + i].order == clustering_order::desc;
            // Values greater than vi come after it in an ASC column, before it in a DESC one.
            bool after = greater != desc;
            if (after) {
                out.push_back({position_in_partition::after_key(key(with_value)), position_in_partition::after_key(key(p))});
            } else {
                out.push_back({position_in_partition::before_key(key(p)), position_in_partition::before_key(key(with_value))});
            }
            p = std::move(with_value);
        }
        if (b.inclusive) {
            out.push_back(position_range::for_prefix(key(p)));
        }
        std::sort(out.begin(), out.end(), [&](const position_range& x, const position_range& y) {
            return less(x.start, y.start);
        });
        return merge(out);
    }

    clustering_ranges merge(const clustering_ranges& in) const {
        clustering_ranges out;
        for (auto& r : in) {
            if (!less(r.start, r.end)) {
                continue;
            }
            if (!out.empty() && !less(out.back().end, r.start)) {
                if (less(out.back().end, r.end)) {
                    out.back().end = r.end;
                }
                continue;
            }
            out.push_back(r);
        }
        return out;
    }

    clustering_ranges intersect(const clustering_ranges& a, const clustering_ranges& b) const {
        clustering_ranges out;
        size_t i = 0, j = 0;
        while (i < a.size() && j < b.size()) {
            auto& start = less(a[i].start, b[j].start) ? b[j].start : a[i].start;
            bool a_ends_first = less(a[i].end, b[j].end);
            auto& end = a_ends_first ? a[i].end : b[j].end;
            if (less(start, end)) {
                out.push_back({start, end});
            }
            if (a_ends_first) {
                ++i;
            } else {
                ++j;
            }
        }
        return merge(out);
    }

    const schema& _s;
    position_in_partition_comparator _cmp;
};

} // namespace

clustering_ranges clustering_ranges_from_relations(const schema& s, const std::vector<clustering_relation>& relations) {
    return range_builder(s).build(relations);
}

clustering_ranges clustering_ranges_from_cql(const schema& s, std::string_view where) {
    std::vector<relation> rels;
    try {
        rels = where_parser(s, where).parse();
    } catch (const cql_parse_error& e) {
        throw bad_restriction(fmt::format("bad WHERE text `{}`: {}", where, e.what()));
    }
    return range_builder(s).build(rels);
}

} // namespace reef::cql
