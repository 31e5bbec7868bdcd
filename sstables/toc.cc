// TOC.txt parsing and component discovery. See toc.hh.
#include "sstables/toc.hh"

#include "runtime/blocking.hh"
#include "runtime/file.hh"
#include "sstables/exceptions.hh"

#include <filesystem>
#include <system_error>

namespace reef::sstables {

toc parse_toc(std::string_view text, const std::string& file) {
    toc t;
    size_t line_start = 0;
    while (line_start < text.size()) {
        size_t end = text.find('\n', line_start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        auto line = text.substr(line_start, end - line_start);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
            line.remove_suffix(1);
        }
        for (size_t i = 0; i < line.size(); ++i) {
            auto c = static_cast<unsigned char>(line[i]);
            if (c < 0x20 && c != '\t') {
                throw malformed_sstable_exception(file, line_start + i,
                                                  "expected a component name, found control byte " + std::to_string(c));
            }
        }
        if (!line.empty()) {
            auto c = parse_component(line);
            if (c == component_type::unknown) {
                t.unknown.emplace_back(line);
            } else {
                t.components.insert(c);
            }
        }
        line_start = end + 1;
    }
    if (!t.has(component_type::data)) {
        throw malformed_sstable_exception(file, text.size(), "expected Data.db among the components, not listed");
    }
    return t;
}

future<toc> read_toc(const descriptor& d) {
    auto name = d.filename(component_type::toc);
    auto text = co_await read_entire_file(name);
    co_return parse_toc(text, name);
}

future<toc> discover_components(const descriptor& d) {
    const descriptor* dp = &d;
    // Named locals, not a capturing temporary inside co_await (ARCHITECTURE.md, coroutine rule 2).
    auto list = [dp]() -> toc {
        toc t;
        std::error_code ec;
        auto dir = dp->directory.empty() ? std::string(".") : dp->directory;
        for (auto& entry : std::filesystem::directory_iterator(dir, ec)) {
            auto name = entry.path().filename().string();
            component_type c;
            try {
                auto found = descriptor::from_path(name, &c);
                if (found.version != dp->version || found.generation != dp->generation || found.format != dp->format) {
                    continue;
                }
            } catch (const std::invalid_argument&) {
                continue;
            }
            if (c == component_type::unknown) {
                t.unknown.push_back(name);
            } else {
                t.components.insert(c);
            }
        }
        if (ec) {
            throw std::system_error(ec, "listing " + dir);
        }
        return t;
    };
    auto t = co_await run_blocking(list);
    if (!t.has(component_type::data)) {
        throw malformed_sstable_exception(d.filename(component_type::data), "no such file: the sstable has no Data.db");
    }
    co_return t;
}

future<toc> read_or_discover_toc(const descriptor& d) {
    auto name = d.filename(component_type::toc);
    if (co_await file_exists(name)) {
        co_return co_await read_toc(d);
    }
    co_return co_await discover_components(d);
}

} // namespace reef::sstables
