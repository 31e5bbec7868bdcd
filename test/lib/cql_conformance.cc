#include "test/lib/cql_conformance.hh"

#include "schema/value_format.hh"
#include "utils/big_endian.hh"
#include "utils/vint.hh"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace reef::testing {

namespace fs = std::filesystem;

std::optional<fs::path> conformance_cases_dir() {
    std::vector<fs::path> starts = {fs::current_path()};
    std::error_code ec;
    if (auto exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
        starts.push_back(exe.parent_path());
    }
    for (auto dir : starts) {
        for (; !dir.empty() && dir != dir.parent_path(); dir = dir.parent_path()) {
            if (fs::exists(dir / "ARCHITECTURE.md") && fs::exists(dir / "configure.py")) {
                auto cases = dir / ".." / "shared" / "cql-conformance" / "cases";
                if (fs::is_directory(cases)) {
                    return cases;
                }
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    if (!in) {
        throw std::runtime_error("cannot read " + p.string());
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string trim(const std::string& s) {
    auto a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) {
        return "";
    }
    auto b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20) {
            out += fmt::format("\\u{:04x}", c);
        } else {
            out += char(c);
        }
    }
    return out + "\"";
}

template <typename T>
T be(bytes_view b) {
    return utils::read_be_unchecked<T>(reinterpret_cast<const char*>(b.data()));
}

std::string number(long double v) {
    return fmt::format("{:.17g}", double(v));
}

std::string float_value(double d) {
    if (std::isnan(d)) {
        return "\"NaN\"";
    }
    if (std::isinf(d)) {
        return d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    }
    if (d == 0 && std::signbit(d)) {
        return "-0.0";
    }
    return number(d);
}

std::string hex(bytes_view b) {
    std::string s = "0x";
    for (auto c : b) {
        s += fmt::format("{:02x}", c);
    }
    return s;
}

bool is_string_type(type_kind k) {
    return k == type_kind::ascii || k == type_kind::text || k == type_kind::blob;
}

// A JSON value in one canonical text: numbers through double, objects and arrays compact.
std::string canonical_json(const utils::json_value& v) {
    using k = utils::json_value::kind;
    switch (v.type) {
    case k::null: return "null";
    case k::boolean: return v.text;
    case k::number: return number(std::stold(v.text));
    case k::string: return json_string(v.text);
    case k::array: {
        std::string s = "[";
        for (size_t i = 0; i < v.items.size(); ++i) {
            s += (i ? "," : "") + canonical_json(v.items[i]);
        }
        return s + "]";
    }
    case k::object: {
        std::string s = "{";
        for (size_t i = 0; i < v.members.size(); ++i) {
            s += (i ? "," : "") + json_string(v.members[i].first) + ":" + canonical_json(v.members[i].second);
        }
        return s + "}";
    }
    }
    return "?";
}

bool value_matches(const utils::json_value& expected, const std::string& got) {
    if (expected.is_object()) {
        if (auto* tb = expected.get("ttl_between"); tb && tb->is_array() && tb->items.size() == 2) {
            try {
                auto g = std::stoll(got);
                return g >= std::stoll(tb->items[0].text) && g <= std::stoll(tb->items[1].text);
            } catch (...) {
                return false;
            }
        }
    }
    size_t pos = 0;
    try {
        return canonical_json(expected) == canonical_json(utils::parse_json_value(got, pos));
    } catch (const std::exception&) {
        return false;
    }
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    if (from.empty()) {
        return s;
    }
    size_t p = 0;
    while ((p = s.find(from, p)) != std::string::npos) {
        s.replace(p, from.size(), to);
        p += to.size();
    }
    return s;
}

} // namespace

conformance_case read_conformance_case(const fs::path& dir, const std::string& name) {
    conformance_case c;
    c.name = name;
    std::istringstream in(slurp(dir / (name + ".cql")));
    std::string line, current;
    int fetch = 0;
    double sleep = 0;
    bool in_batch = false;
    while (std::getline(in, line)) {
        auto t = trim(line);
        if (current.empty()) {
            if (t.empty()) {
                continue;
            }
            if (t.rfind("--", 0) == 0 || t.rfind("//", 0) == 0) {
                if (t.rfind("-- @fetch_size", 0) == 0) {
                    fetch = std::stoi(t.substr(14));
                }
                if (t.rfind("-- @sleep", 0) == 0) {
                    sleep = std::stod(t.substr(9));
                }
                continue;
            }
            std::string upper;
            for (char ch : t) {
                upper += char(std::toupper(static_cast<unsigned char>(ch)));
            }
            in_batch = upper.rfind("BEGIN", 0) == 0;
        }
        current += (current.empty() ? "" : "\n") + line;
        std::string upper;
        for (char ch : t) {
            upper += char(std::toupper(static_cast<unsigned char>(ch)));
        }
        bool ends = !t.empty() && t.back() == ';' && (!in_batch || upper.find("APPLY BATCH;") != std::string::npos);
        if (ends) {
            auto stmt = trim(current);
            stmt.pop_back();
            c.statements.push_back({trim(stmt), fetch, sleep});
            current.clear();
            fetch = 0;
            sleep = 0;
            in_batch = false;
        }
    }
    auto text = slurp(dir / (name + ".expected.json"));
    size_t pos = 0;
    auto doc = utils::parse_json_value(text, pos);
    c.expected = doc.items;
    if (c.expected.size() != c.statements.size()) {
        throw std::runtime_error(fmt::format("{}: {} statements but {} expected outcomes", name, c.statements.size(),
                                             c.expected.size()));
    }
    return c;
}

std::string error_class_name(int32_t code) {
    static const std::map<int32_t, std::string> names = {
        {0x0000, "server_error"},  {0x000A, "protocol_error"}, {0x0100, "bad_credentials"},
        {0x1000, "unavailable"},   {0x1001, "overloaded"},     {0x1002, "is_bootstrapping"},
        {0x1003, "truncate_error"}, {0x1100, "write_timeout"}, {0x1200, "read_timeout"},
        {0x1300, "read_failure"},  {0x1400, "function_failure"}, {0x1500, "write_failure"},
        {0x2000, "syntax_error"},  {0x2100, "unauthorized"},   {0x2200, "invalid"},
        {0x2300, "config_error"},  {0x2400, "already_exists"}, {0x2500, "unprepared"},
    };
    auto it = names.find(code);
    return it == names.end() ? fmt::format("code_{:x}", code) : it->second;
}

std::string canonical_type_name(const data_type& type) {
    auto t = type->without_reversal();
    auto join = [](const std::vector<data_type>& ts) {
        std::string s;
        for (auto& x : ts) {
            s += (s.empty() ? "" : ", ") + canonical_type_name(x);
        }
        return s;
    };
    switch (t->kind()) {
    case type_kind::list: return "list<" + canonical_type_name(t->element_type()) + ">";
    case type_kind::set: return "set<" + canonical_type_name(t->element_type()) + ">";
    case type_kind::map: return "map<" + canonical_type_name(t->key_type()) + ", " + canonical_type_name(t->value_type()) + ">";
    case type_kind::tuple: return "tuple<" + join(t->field_types()) + ">";
    case type_kind::user: {
        auto& u = static_cast<const user_type_impl&>(*t);
        std::string s = u.keyspace() + "." + u.type_name() + "{";
        for (size_t i = 0; i < u.field_names().size(); ++i) {
            s += (i ? ", " : "") + u.field_names()[i] + " " + canonical_type_name(u.field_types()[i]);
        }
        return s + "}";
    }
    default: break;
    }
    auto n = t->cql_name();
    // frozen<X> -> X
    size_t p;
    while ((p = n.find("frozen<")) != std::string::npos) {
        int depth = 0;
        size_t i = p + 7;
        for (; i < n.size(); ++i) {
            if (n[i] == '<') {
                ++depth;
            } else if (n[i] == '>') {
                if (depth == 0) {
                    break;
                }
                --depth;
            }
        }
        n = n.substr(0, p) + n.substr(p + 7, i - p - 7) + (i < n.size() ? n.substr(i + 1) : "");
    }
    return n == "varchar" ? "text" : n;
}

std::string canonical_value(const data_type& type, const std::optional<bytes>& v) {
    if (!v) {
        return "null";
    }
    auto t = type->without_reversal();
    auto k = t->kind();
    if (v->empty() && !is_string_type(k)) {
        return "{\"empty\": true}";
    }
    switch (k) {
    case type_kind::ascii:
    case type_kind::text: return json_string(to_string_view(*v));
    case type_kind::tinyint: return std::to_string(be<int8_t>(*v));
    case type_kind::smallint: return std::to_string(be<int16_t>(*v));
    case type_kind::int32: return std::to_string(be<int32_t>(*v));
    case type_kind::bigint:
    case type_kind::counter: {
        auto x = be<int64_t>(*v);
        if (x > (int64_t(1) << 53) || x < -(int64_t(1) << 53)) {
            return "\"" + std::to_string(x) + "\"";
        }
        return std::to_string(x);
    }
    case type_kind::timestamp: return std::to_string(be<int64_t>(*v));
    case type_kind::varint:
    case type_kind::decimal: return json_string(t->to_string(*v));
    case type_kind::float_: {
        auto u = be<uint32_t>(*v);
        float f;
        std::memcpy(&f, &u, 4);
        return float_value(double(f));
    }
    case type_kind::double_: {
        auto u = be<uint64_t>(*v);
        double d;
        std::memcpy(&d, &u, 8);
        return float_value(d);
    }
    case type_kind::boolean: return (*v)[0] ? "true" : "false";
    case type_kind::blob: return json_string(hex(*v));
    case type_kind::list:
    case type_kind::set: {
        // [count] then per element [length][bytes]; length -1 is a null element (ttl() of a collection).
        std::string s = "[";
        if (v->size() < 4) {
            return "{\"undecodable\": " + json_string(hex(*v)) + "}";
        }
        auto n = be<int32_t>(*v);
        size_t pos = 4;
        for (int32_t i = 0; i < n; ++i) {
            if (pos + 4 > v->size()) {
                return "{\"undecodable\": " + json_string(hex(*v)) + "}";
            }
            auto len = be<int32_t>(bytes_view(*v).subspan(pos));
            pos += 4;
            std::optional<bytes> e;
            if (len >= 0) {
                if (pos + size_t(len) > v->size()) {
                    return "{\"undecodable\": " + json_string(hex(*v)) + "}";
                }
                e = bytes(v->begin() + ptrdiff_t(pos), v->begin() + ptrdiff_t(pos + len));
                pos += size_t(len);
            }
            s += (i ? "," : "") + canonical_value(t->element_type(), e);
        }
        return s + "]";
    }
    case type_kind::vector: {
        // The runner's decoding: a list of the elements.
        std::string s = "[";
        std::vector<bytes_view> elements;
        try {
            elements = split_vector(*t, *v);
        } catch (const marshal_exception&) {
            return "{\"undecodable\": " + json_string(hex(*v)) + "}";
        }
        for (size_t i = 0; i < elements.size(); ++i) {
            s += (i ? "," : "") + canonical_value(t->element_type(), bytes(elements[i].begin(), elements[i].end()));
        }
        return s + "]";
    }
    case type_kind::map: {
        std::string s = "[";
        bool first = true;
        for (auto [a, b] : split_map(*v)) {
            s += std::string(first ? "" : ",") + "[" + canonical_value(t->key_type(), bytes(a.begin(), a.end())) + "," +
                 canonical_value(t->value_type(), bytes(b.begin(), b.end())) + "]";
            first = false;
        }
        return s + "]";
    }
    case type_kind::tuple:
    case type_kind::user: {
        auto fields = split_tuple(*v);
        auto& types = t->field_types();
        std::string s = k == type_kind::user ? "{" : "[";
        for (size_t i = 0; i < types.size(); ++i) {
            std::optional<bytes> f;
            if (i < fields.size() && fields[i]) {
                f = bytes(fields[i]->begin(), fields[i]->end());
            }
            if (i) {
                s += ",";
            }
            if (k == type_kind::user) {
                s += json_string(static_cast<const user_type_impl&>(*t).field_names()[i]) + ":";
            }
            s += canonical_value(types[i], f);
        }
        return s + (k == type_kind::user ? "}" : "]");
    }
    case type_kind::inet: {
        if (v->size() == 4) {
            return json_string(fmt::format("{}.{}.{}.{}", (*v)[0], (*v)[1], (*v)[2], (*v)[3]));
        }
        // RFC 5952: the longest run (first on a tie) of two or more zero groups becomes "::".
        uint16_t g[8];
        for (int i = 0; i < 8; ++i) {
            g[i] = uint16_t((*v)[2 * i] << 8 | (*v)[2 * i + 1]);
        }
        int best = -1, best_len = 1;
        for (int i = 0; i < 8;) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                ++j;
            }
            if (j - i > best_len) {
                best = i;
                best_len = j - i;
            }
            i = j > i ? j : i + 1;
        }
        std::string s;
        for (int i = 0; i < 8; ++i) {
            if (i == best) {
                s += "::";
                i += best_len - 1;
                continue;
            }
            if (!s.empty() && s.back() != ':') {
                s += ":";
            }
            s += fmt::format("{:x}", g[i]);
        }
        return json_string(s);
    }
    case type_kind::duration: {
        auto in = std::span<const char>(reinterpret_cast<const char*>(v->data()), v->size());
        int64_t parts[3] = {0, 0, 0};
        size_t pos = 0;
        for (auto& p : parts) {
            auto d = utils::try_decode_signed_vint(in.subspan(pos));
            if (!d) {
                return "{\"undecodable\": " + json_string(hex(*v)) + "}";
            }
            p = d->value;
            pos += d->length;
        }
        return json_string(fmt::format("{}mo{}d{}ns", parts[0], parts[1], parts[2]));
    }
    default: return json_string(t->to_string(*v));
    }
}

std::string compare_rows(const utils::json_value& expected, const std::vector<cql::column_spec>& columns,
                         const std::vector<std::vector<std::optional<bytes>>>& rows, const std::string& ks) {
    auto* ecols = expected.get("columns");
    auto* erows = expected.get("rows");
    if (!ecols || !erows) {
        return "expected " + canonical_json(expected) + ", got rows";
    }
    std::string got_cols;
    for (auto& c : columns) {
        got_cols += fmt::format("[{},{}]", json_string(c.name), json_string(replace_all(canonical_type_name(c.type), ks, "{ks}")));
    }
    std::string exp_cols;
    for (auto& c : ecols->items) {
        exp_cols += fmt::format("[{},{}]", json_string(c.items.at(0).text), json_string(c.items.at(1).text));
    }
    if (got_cols != exp_cols) {
        return "columns " + got_cols + " != expected " + exp_cols;
    }
    auto show = [&](const std::vector<std::optional<bytes>>& r) {
        std::string s = "[";
        for (size_t i = 0; i < r.size(); ++i) {
            s += (i ? "," : "") + canonical_value(columns[i].type, r[i]);
        }
        return s + "]";
    };
    std::string all_got;
    for (auto& r : rows) {
        all_got += show(r);
    }
    if (rows.size() != erows->items.size()) {
        return fmt::format("{} rows != expected {}: got {} expected {}", rows.size(), erows->items.size(), all_got,
                           canonical_json(*erows));
    }
    for (size_t i = 0; i < rows.size(); ++i) {
        auto& er = erows->items[i];
        for (size_t j = 0; j < columns.size(); ++j) {
            auto got = replace_all(canonical_value(columns[j].type, rows[i][j]), ks, "{ks}");
            if (j >= er.items.size() || !value_matches(er.items[j], got)) {
                return fmt::format("row {} column {}: got {} expected {} (rows {} expected {})", i, columns[j].name,
                                   got, j < er.items.size() ? canonical_json(er.items[j]) : "nothing", all_got,
                                   canonical_json(*erows));
            }
        }
    }
    return "";
}

} // namespace reef::testing
