// compaction_options: parsing and checking a table's compaction option map.
#include "compaction/compaction_options.hh"

#include "runtime/log.hh"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>

namespace reef::compaction {

namespace {

logger olog("compaction_options");

constexpr std::string_view class_prefix = "org.apache.cassandra.db.compaction.";

std::string lower(std::string_view s) {
    std::string out;
    for (char c : s) {
        out += char(std::tolower(uint8_t(c)));
    }
    return out;
}

std::string upper(std::string_view s) {
    std::string out;
    for (char c : s) {
        out += char(std::toupper(uint8_t(c)));
    }
    return out;
}

// Java's Integer.parseInt / Long.parseLong: an optional sign and decimal digits only.
std::optional<int64_t> parse_integer(std::string_view v) {
    int64_t out = 0;
    auto* b = v.data();
    if (!v.empty() && v.front() == '+') {
        ++b;
    }
    auto [ptr, ec] = std::from_chars(b, v.data() + v.size(), out);
    if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
        return std::nullopt;
    }
    return out;
}

std::optional<double> parse_double(std::string_view v) {
    try {
        size_t n = 0;
        std::string s(v);
        double d = std::stod(s, &n);
        if (n != s.size()) {
            return std::nullopt;
        }
        return d;
    } catch (...) {
        return std::nullopt;
    }
}

// Java's %f.
std::string java_f(double v) { return fmt::format("{:.6f}", v); }

class option_reader {
public:
    explicit option_reader(const std::map<std::string, std::string>& m) : _m(m) {}

    const std::string* find(std::string_view key) {
        _known.insert(std::string(key));
        auto it = _m.find(std::string(key));
        return it == _m.end() ? nullptr : &it->second;
    }
    std::optional<int64_t> integer(std::string_view key) {
        auto* v = find(key);
        if (!v) {
            return std::nullopt;
        }
        auto n = parse_integer(*v);
        if (!n) {
            throw invalid_compaction_options(fmt::format("{} is not a parsable int (base10) for {}", *v, key));
        }
        return n;
    }
    std::optional<double> number(std::string_view key) {
        auto* v = find(key);
        if (!v) {
            return std::nullopt;
        }
        auto n = parse_double(*v);
        if (!n) {
            throw invalid_compaction_options(fmt::format("{} is not a parsable float for {}", *v, key));
        }
        return n;
    }
    // Cassandra's wording differs per option: `refusal` is formatted with the value.
    std::optional<bool> boolean(std::string_view key, std::string_view refusal) {
        auto* v = find(key);
        if (!v) {
            return std::nullopt;
        }
        auto l = lower(*v);
        if (l != "true" && l != "false") {
            throw invalid_compaction_options(fmt::vformat(refusal, fmt::make_format_args(*v)));
        }
        return l == "true";
    }
    // The keys no find() asked for, in the map's order.
    std::vector<std::string> unknown() const {
        std::vector<std::string> out;
        for (auto& [k, v] : _m) {
            if (!_known.contains(k)) {
                out.push_back(k);
            }
        }
        return out;
    }

private:
    const std::map<std::string, std::string>& _m;
    std::set<std::string> _known;
};

void read_common(option_reader& r, compaction_options& o) {
    if (auto v = r.boolean("enabled", "enabled should either be 'true' or 'false', not {}")) {
        o.enabled = *v;
    }
    if (auto v = r.number("tombstone_threshold")) {
        if (*v < 0) {
            throw invalid_compaction_options(
                fmt::format("tombstone_threshold must be greater than 0, but was {}", java_f(*v)));
        }
        if (*v > 1) {
            throw invalid_compaction_options(fmt::format("tombstone_threshold value ({}) must be between 0.0 and 1.0", *r.find("tombstone_threshold")));
        }
        o.tombstone_threshold = *v;
    }
    if (auto v = r.integer("tombstone_compaction_interval")) {
        if (*v < 0) {
            throw invalid_compaction_options(
                fmt::format("tombstone_compaction_interval must be nonnegative, but was {}", *v));
        }
        o.tombstone_compaction_interval = *v;
    }
    if (auto v = r.boolean("unchecked_tombstone_compaction",
                           "'unchecked_tombstone_compaction' should be either 'true' or 'false', not '{}'")) {
        o.unchecked_tombstone_compaction = *v;
    }
    r.boolean("log_all", "'log_all' should be either 'true' or 'false', not '{}'");
    r.boolean("only_purge_repaired_tombstones", "only_purge_repaired_tombstones should either be 'true' or 'false', not {}");
    r.find("provide_overlapping_tombstones");
}

void read_thresholds(option_reader& r, compaction_options& o) {
    auto threshold = [&](std::string_view key, int& out) {
        auto* v = r.find(key);
        if (!v) {
            return;
        }
        auto n = parse_integer(*v);
        if (!n || *n > INT32_MAX || *n < INT32_MIN) {
            throw invalid_compaction_options(fmt::format("Invalid value {} for '{}'", *v, key));
        }
        out = int(*n);
    };
    threshold("min_threshold", o.min_threshold);
    threshold("max_threshold", o.max_threshold);
    if (o.min_threshold <= 0 || o.max_threshold <= 0) {
        throw invalid_compaction_options("Disabling compaction by setting compaction thresholds to 0 has been removed,"
                                         " set the compaction option 'enabled' to false instead.");
    }
    if (o.min_threshold < 2) {
        throw invalid_compaction_options(fmt::format("min_threshold value ({}) must be bigger or equal to 2", o.min_threshold));
    }
    if (o.max_threshold < 2) {
        throw invalid_compaction_options(fmt::format("max_threshold value ({}) must be bigger or equal to 2", o.max_threshold));
    }
    if (o.min_threshold > o.max_threshold) {
        throw invalid_compaction_options(
            fmt::format("Min compaction threshold (got {}) cannot be greater than max compaction threshold (got {})",
                        o.min_threshold, o.max_threshold));
    }
}

void read_size_tiered(option_reader& r, compaction_options& o) {
    if (auto v = r.integer("min_sstable_size")) {
        if (*v < 0) {
            throw invalid_compaction_options(fmt::format("min_sstable_size must be non negative: {}", *v));
        }
        o.min_sstable_size = uint64_t(*v);
    }
    if (auto v = r.number("bucket_low")) {
        if (*v <= 0 || *v >= 1) {
            throw invalid_compaction_options(
                fmt::format("bucket_low value ({}) must be between 0.0 and 1.0", *r.find("bucket_low")));
        }
        o.bucket_low = *v;
    }
    if (auto v = r.number("bucket_high")) {
        if (*v <= 1) {
            throw invalid_compaction_options(
                fmt::format("bucket_high value ({}) must be greater than 1.0", *r.find("bucket_high")));
        }
        o.bucket_high = *v;
    }
    if (o.bucket_high <= o.bucket_low) {
        throw invalid_compaction_options(fmt::format("bucket_high value ({}) is less than or equal to the bucket_low value ({})",
                                                     o.bucket_high, o.bucket_low));
    }
}

void read_time_window(option_reader& r, compaction_options& o) {
    if (auto* v = r.find("compaction_window_unit")) {
        auto u = upper(*v);
        if (u == "MINUTES") {
            o.compaction_window_unit = window_unit::minutes;
        } else if (u == "HOURS") {
            o.compaction_window_unit = window_unit::hours;
        } else if (u == "DAYS") {
            o.compaction_window_unit = window_unit::days;
        } else {
            throw invalid_compaction_options(fmt::format("{} is not valid for compaction_window_unit", *v));
        }
    }
    if (auto v = r.integer("compaction_window_size")) {
        if (*v < 1) {
            throw invalid_compaction_options(fmt::format("{} must be greater than 1 for compaction_window_size", *v));
        }
        o.compaction_window_size = int(std::min<int64_t>(*v, INT32_MAX));
    }
    if (auto* v = r.find("timestamp_resolution")) {
        static const std::map<std::string, int64_t> units{
            {"NANOSECONDS", 0}, {"MICROSECONDS", 1}, {"MILLISECONDS", 1000}, {"SECONDS", 1000000},
            {"MINUTES", 60000000}, {"HOURS", 3600000000}, {"DAYS", 86400000000}};
        auto it = units.find(upper(*v));
        // Cassandra takes any TimeUnit but nanoseconds' precision; ScyllaDB refuses coarser than milliseconds.
        if (it == units.end() || it->second == 0 || it->second > 1000) {
            throw invalid_compaction_options(fmt::format("{} is not valid for timestamp_resolution", *v));
        }
        o.timestamp_resolution_micros = it->second;
    }
    if (auto v = r.integer("expired_sstable_check_frequency_seconds"); v && *v < 0) {
        throw invalid_compaction_options(
            fmt::format("expired_sstable_check_frequency_seconds must not be negative, but was {}", *v));
    }
    r.boolean("unsafe_aggressive_sstable_expiration",
              "unsafe_aggressive_sstable_expiration should either be 'true' or 'false', not {}");
    r.boolean("enable_optimized_twcs_queries", "enable_optimized_twcs_queries value ({}) must be \"true\" or \"false\"");
}

std::string short_name(std::string_view cls) {
    return std::string(cls.starts_with(class_prefix) ? cls.substr(class_prefix.size()) : cls);
}

} // namespace

int64_t compaction_options::window_seconds() const noexcept {
    int64_t unit = compaction_window_unit == window_unit::minutes ? 60
                   : compaction_window_unit == window_unit::hours ? 3600
                                                                  : 86400;
    return unit * compaction_window_size;
}

compaction_options parse_compaction_options(const std::map<std::string, std::string>& m) {
    compaction_options o;
    option_reader r(m);
    if (auto* cls = r.find("class")) {
        o.class_name = *cls;
    }
    auto name = short_name(o.class_name);
    if (name == "SizeTieredCompactionStrategy") {
        o.type = strategy_type::size_tiered;
    } else if (name == "TimeWindowCompactionStrategy") {
        o.type = strategy_type::time_window;
    } else if (name == "LeveledCompactionStrategy" || name == "UnifiedCompactionStrategy" ||
               name == "IncrementalCompactionStrategy") {
        o.type = strategy_type::other;
    } else {
        throw invalid_compaction_options(fmt::format("Unable to find compaction strategy class '{}'", o.class_name));
    }
    read_common(r, o);
    if (o.type == strategy_type::other) {
        // Their own options are not checked here: they are compacted size-tiered with the defaults.
        if (auto v = r.boolean("enabled", "enabled should either be 'true' or 'false', not {}")) {
            o.enabled = *v;
        }
        compaction_options d;
        d.type = o.type;
        d.class_name = o.class_name;
        d.enabled = o.enabled;
        if (name != "UnifiedCompactionStrategy") {
            // LCS (Cassandra's default 160 MiB) and ICS (ScyllaDB's 1000 MiB): the size of a run's sstables.
            int64_t mb = name == "LeveledCompactionStrategy" ? 160 : 1000;
            if (auto v = r.integer("sstable_size_in_mb")) {
                if (*v > INT32_MAX) {  // Java's Integer.parseInt refuses it
                    throw invalid_compaction_options(
                        fmt::format("{} is not a parsable int (base10) for sstable_size_in_mb", *v));
                }
                if (*v < 1) {
                    throw invalid_compaction_options(
                        fmt::format("sstable_size_in_mb must be larger than 0, but was {}", *v));
                }
                mb = *v;
            }
            d.max_sstable_size = uint64_t(mb) << 20;
        }
        return d;
    }
    read_thresholds(r, o);
    read_size_tiered(r, o);
    if (o.type == strategy_type::time_window) {
        read_time_window(r, o);
    }
    if (auto unknown = r.unknown(); !unknown.empty()) {
        std::string list;
        for (auto& k : unknown) {
            list += (list.empty() ? "" : ", ") + k;
        }
        throw invalid_compaction_options(fmt::format("Properties specified [{}] are not understood by {}", list, name));
    }
    return o;
}

std::map<std::string, std::string> parse_map_literal(std::string_view lit) {
    std::map<std::string, std::string> out;
    size_t pos = 0;
    auto fail = [&](std::string_view what) {
        throw invalid_compaction_options(fmt::format("malformed option map {} at offset {}: {}", lit, pos, what));
    };
    auto skip_spaces = [&] {
        while (pos < lit.size() && std::isspace(uint8_t(lit[pos]))) {
            ++pos;
        }
    };
    auto value = [&]() -> std::string {
        skip_spaces();
        std::string v;
        if (pos < lit.size() && lit[pos] == '\'') {
            for (++pos;; ++pos) {
                if (pos >= lit.size()) {
                    fail("unterminated string");
                }
                if (lit[pos] == '\'') {
                    if (pos + 1 < lit.size() && lit[pos + 1] == '\'') {
                        v += '\'';
                        ++pos;
                        continue;
                    }
                    ++pos;
                    return v;
                }
                v += lit[pos];
            }
        }
        while (pos < lit.size() && lit[pos] != ',' && lit[pos] != ':' && lit[pos] != '}' &&
               !std::isspace(uint8_t(lit[pos]))) {
            v += lit[pos++];
        }
        if (v.empty()) {
            fail("a key or value expected");
        }
        return v;
    };
    skip_spaces();
    if (pos >= lit.size() || lit[pos] != '{') {
        fail("'{' expected");
    }
    ++pos;
    skip_spaces();
    if (pos < lit.size() && lit[pos] == '}') {
        return out;
    }
    for (;;) {
        auto k = value();
        skip_spaces();
        if (pos >= lit.size() || lit[pos] != ':') {
            fail("':' expected");
        }
        ++pos;
        out[k] = value();
        skip_spaces();
        if (pos < lit.size() && lit[pos] == ',') {
            ++pos;
            continue;
        }
        if (pos < lit.size() && lit[pos] == '}') {
            return out;
        }
        fail("',' or '}' expected");
    }
}

compaction_options compaction_options_of(const schema& s) {
    auto it = s.options().other.find("compaction");
    if (it == s.options().other.end()) {
        return {};
    }
    try {
        return parse_compaction_options(parse_map_literal(it->second));
    } catch (const invalid_compaction_options& e) {
        olog.warn("{}.{}: compaction options {} refused ({}); size-tiered with the defaults", s.keyspace(), s.table(),
                  it->second, e.what());
        return {};
    }
}

} // namespace reef::compaction
