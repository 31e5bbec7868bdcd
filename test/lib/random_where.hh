// random_where: random CQL clustering restrictions (equalities or INs on a prefix, then single-column or tuple
// bounds on the next column, in random order and forms) with the predicate they mean, evaluated value by value: the model
// that `reef sstable query --where` and clustering_ranges_from_cql are checked against.
#pragma once

#include "mutation/clustering_key.hh"
#include "schema/schema.hh"
#include "schema/types.hh"

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace reef::testing {

struct where_case {
    std::string text;
    // Whether a full clustering key satisfies every relation.
    std::function<bool(const clustering_key_prefix&)> matches;
};

// value(i): a value of clustering column i (as stored bytes). names: the column names to print (the schema's).
inline where_case random_where(const schema& s, std::mt19937_64& rng, const std::function<bytes(size_t)>& value) {
    size_t n = s.clustering_key().size();
    auto& cols = s.clustering_key();
    auto lit = [&](size_t i, const bytes& v) { return cols[i].type->to_cql_literal(v); };
    std::vector<std::string> rels;
    std::vector<std::function<bool(const clustering_key_prefix&)>> preds;
    size_t k = n ? rng() % (n + 1) : 0;
    std::vector<bytes> eq;
    for (size_t i = 0; i < k; ++i) {
        eq.push_back(value(i));
    }
    // The values each prefix column may take: its equality's, or an IN's (with repeats, and none: nothing matches).
    std::vector<std::vector<bytes>> allowed;
    for (size_t i = 0; i < k; ++i) {
        allowed.push_back({eq[i]});
    }
    // Equalities: one by one (or as an IN), or some consecutive run as one tuple.
    size_t i = 0;
    while (i < k) {
        size_t run = 1 + rng() % (k - i);
        if ((run == 1 || rng() % 2) && rng() % 4 == 0) {
            run = 1;
            allowed[i].clear();
            for (size_t n = rng() % 4; n > 0; --n) {
                allowed[i].push_back(value(i));
            }
            std::string list;
            for (auto& v : allowed[i]) {
                list += (list.empty() ? "" : ", ") + lit(i, v);
            }
            rels.push_back(cols[i].name + " IN (" + list + ")");
        } else if (run == 1 || rng() % 2) {
            run = 1;
            rels.push_back(cols[i].name + " = " + lit(i, eq[i]));
        } else {
            std::string l = "(", r = "(";
            for (size_t j = i; j < i + run; ++j) {
                l += (j > i ? ", " : "") + cols[j].name;
                r += (j > i ? ", " : "") + lit(j, eq[j]);
            }
            rels.push_back(l + ") = " + r + ")");
        }
        i += run;
    }
    for (size_t c = 0; c < k; ++c) {
        preds.push_back([c, vs = allowed[c], t = cols[c].type](const clustering_key_prefix& key) {
            return std::any_of(vs.begin(), vs.end(), [&](const bytes& v) { return t->compare(key.component(c), v) == 0; });
        });
    }
    if (k < n) {
        for (int side = 0; side < 2; ++side) {
            if (rng() % 2) {
                continue;
            }
            bool lower = side == 0;
            size_t m = 1 + rng() % (n - k);
            bool tuple = m > 1 || rng() % 3 == 0;
            bool inclusive = rng() % 2;
            std::vector<bytes> v;
            for (size_t j = k; j < k + m; ++j) {
                v.push_back(value(j));
            }
            std::string op = lower ? (inclusive ? ">=" : ">") : (inclusive ? "<=" : "<");
            if (tuple) {
                std::string l = "(", r = "(";
                for (size_t j = 0; j < m; ++j) {
                    l += (j ? ", " : "") + cols[k + j].name;
                    r += (j ? ", " : "") + lit(k + j, v[j]);
                }
                rels.push_back(l + ") " + op + " " + r + ")");
            } else {
                rels.push_back(cols[k].name + " " + op + " " + lit(k, v[0]));
            }
            std::vector<data_type> types;
            for (size_t j = k; j < k + m; ++j) {
                types.push_back(cols[j].type);
            }
            preds.push_back([k, v, types, lower, inclusive](const clustering_key_prefix& key) {
                int c = 0;
                for (size_t j = 0; j < v.size() && c == 0; ++j) {
                    c = types[j]->compare(key.component(k + j), v[j]);
                }
                return lower ? (c > 0 || (inclusive && c == 0)) : (c < 0 || (inclusive && c == 0));
            });
        }
    }
    std::shuffle(rels.begin(), rels.end(), rng);
    where_case w;
    for (auto& r : rels) {
        w.text += (w.text.empty() ? "" : (rng() % 2 ? " AND " : " and ")) + r;
    }
    w.matches = [preds](const clustering_key_prefix& key) {
        return std::all_of(preds.begin(), preds.end(), [&](auto& p) { return p(key); });
    };
    return w;
}

} // namespace reef::testing
