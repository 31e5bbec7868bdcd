// Java's number formatting and Cassandra's TableBuilder for nodetool's text. See nodetool_format.hh.
#include "tools/nodetool_format.hh"

#include "utils/java_double_format.hh"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <fmt/format.h>

namespace reef::tools::nodetool {

namespace {

// DecimalFormat("#.##"): at most two decimals, half-even, no trailing zeros, no point without decimals.
std::string two_decimals_at_most(double v) {
    double hundredths = std::nearbyint(v * 100);  // the default rounding mode is to nearest, ties to even
    auto n = static_cast<uint64_t>(hundredths);
    std::string s = fmt::format("{}", n / 100);
    unsigned frac = n % 100;
    if (frac != 0) {
        s += '.';
        s += char('0' + frac / 10);
        if (frac % 10 != 0) {
            s += char('0' + frac % 10);
        }
    }
    return s;
}

} // namespace

std::string file_size(double bytes) {
    constexpr double kib = 1024.0, mib = kib * 1024, gib = mib * 1024, tib = gib * 1024;
    if (bytes >= tib) {
        return two_decimals_at_most(bytes / tib) + " TiB";
    }
    if (bytes >= gib) {
        return two_decimals_at_most(bytes / gib) + " GiB";
    }
    if (bytes >= mib) {
        return two_decimals_at_most(bytes / mib) + " MiB";
    }
    if (bytes >= kib) {
        return two_decimals_at_most(bytes / kib) + " KiB";
    }
    return two_decimals_at_most(bytes) + " bytes";
}

std::string pretty_memory(int64_t bytes) {
    constexpr int64_t kib = 1024, mib = kib * 1024, gib = mib * 1024, tib = gib * 1024;
    for (auto [unit, name] : {std::pair{tib, "TiB"}, std::pair{gib, "GiB"}, std::pair{mib, "MiB"}, std::pair{kib, "KiB"}}) {
        if (bytes >= unit) {
            return java_fixed(double(bytes) / double(unit), 3) + name;
        }
    }
    return fmt::format("{}B", bytes);
}

std::string java_double(double v) { return utils::java_double_to_string(v); }

std::string java_fixed(double v, int prec) {
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "Infinity" : "-Infinity";
    }
    // The shortest digits and the decimal point's place: "1.2345E-5" is digits 12345 with the point at -4.
    std::string s = utils::java_double_to_string(std::fabs(v));
    int exp10 = 0;
    if (auto e = s.find('E'); e != std::string::npos) {
        exp10 = std::stoi(s.substr(e + 1));
        s.resize(e);
    }
    auto dot = s.find('.');
    std::string digits = s.substr(0, dot) + s.substr(dot + 1);
    int point = int(dot) + exp10;  // digits[0, point) are the integer part
    // Pad so that the integer part and prec decimals exist, then round half-up at point + prec.
    if (point <= 0) {
        digits.insert(0, size_t(1 - point), '0');
        point = 1;
    }
    if (int(digits.size()) < point + prec + 1) {
        digits.append(size_t(point + prec + 1 - int(digits.size())), '0');
    }
    bool up = digits[size_t(point + prec)] >= '5';
    digits.resize(size_t(point + prec));
    if (up) {
        int i = int(digits.size()) - 1;
        for (; i >= 0 && digits[size_t(i)] == '9'; --i) {
            digits[size_t(i)] = '0';
        }
        if (i < 0) {
            digits.insert(0, 1, '1');
            ++point;
        } else {
            ++digits[size_t(i)];
        }
    }
    std::string out = std::signbit(v) ? "-" : "";
    out += digits.substr(0, size_t(point));
    if (prec > 0) {
        out += '.';
        out += digits.substr(size_t(point));
    }
    return out;
}

std::string text_table::str() const {
    std::vector<size_t> widths;
    for (auto& row : _rows) {
        widths.resize(std::max(widths.size(), row.size()), 0);
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    std::string out;
    for (auto& row : _rows) {
        for (size_t i = 0; i < widths.size(); ++i) {
            const std::string& cell = i < row.size() ? row[i] : std::string();
            out += cell;
            out.append(widths[i] - cell.size(), ' ');
            if (i + 1 < widths.size()) {
                out += _delimiter;
            }
        }
        out += '\n';
    }
    return out;
}

} // namespace reef::tools::nodetool
