// Version and component names. See version.hh.
#include "sstables/version.hh"

#include <array>
#include <stdexcept>

namespace reef::sstables {

namespace {

constexpr std::array<std::string_view, 6> version_names{"mc", "md", "me", "na", "nb", "oa"};

constexpr std::array<std::string_view, 10> component_names{
    "Data.db", "Index.db", "Summary.db", "Filter.db", "Statistics.db",
    "CompressionInfo.db", "CRC.db", "Digest.crc32", "TOC.txt", "Scylla.db"};

} // namespace

std::optional<sstable_version> parse_version(std::string_view s) noexcept {
    for (size_t i = 0; i < version_names.size(); ++i) {
        if (version_names[i] == s) {
            return sstable_version(i);
        }
    }
    return std::nullopt;
}

std::string_view to_string(sstable_version v) noexcept { return version_names[size_t(v)]; }

std::string_view component_name(component_type c) noexcept {
    return c == component_type::unknown ? std::string_view("unknown") : component_names[size_t(c)];
}

component_type parse_component(std::string_view name) noexcept {
    for (size_t i = 0; i < component_names.size(); ++i) {
        if (component_names[i] == name) {
            return component_type(i);
        }
    }
    return component_type::unknown;
}

std::string descriptor::filename(component_type c) const {
    std::string name = std::string(to_string(version)) + "-" + generation + "-" + format + "-" +
                       std::string(component_name(c));
    return directory.empty() ? name : directory + "/" + name;
}

descriptor descriptor::from_path(std::string_view path, component_type* component) {
    auto fail = [&](const char* why) {
        throw std::invalid_argument("not an sstable component name: " + std::string(path) + " (" + why + ")");
    };
    descriptor d;
    auto slash = path.rfind('/');
    std::string_view name = path;
    if (slash != std::string_view::npos) {
        d.directory = std::string(path.substr(0, slash));
        name = path.substr(slash + 1);
    }
    // The last three dashes separate version, generation, format and component;
    // anything before them is the old keyspace-table prefix.
    std::array<size_t, 3> dash{};
    size_t end = name.size();
    for (int i = 2; i >= 0; --i) {
        auto p = name.rfind('-', end == 0 ? 0 : end - 1);
        if (p == std::string_view::npos || end == 0) {
            fail("expected <version>-<generation>-<format>-<component>");
        }
        dash[i] = p;
        end = p;
    }
    auto version_start = name.rfind('-', dash[0] == 0 ? 0 : dash[0] - 1);
    version_start = (version_start == std::string_view::npos || dash[0] == 0) ? 0 : version_start + 1;
    auto v = parse_version(name.substr(version_start, dash[0] - version_start));
    if (!v) {
        fail("unknown version");
    }
    d.version = *v;
    d.generation = std::string(name.substr(dash[0] + 1, dash[1] - dash[0] - 1));
    d.format = std::string(name.substr(dash[1] + 1, dash[2] - dash[1] - 1));
    if (d.generation.empty() || d.format.empty()) {
        fail("empty generation or format");
    }
    auto c = parse_component(name.substr(dash[2] + 1));
    if (component) {
        *component = c;
    }
    return d;
}

} // namespace reef::sstables
