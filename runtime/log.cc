#include "runtime/log.hh"

#include "runtime/shard.hh"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

namespace reef {

namespace {

constexpr std::string_view level_names[] = {"error", "warn", "info", "debug", "trace"};
constexpr std::string_view level_tags[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

struct sink_state {
    std::atomic<bool> installed{false};
    std::mutex mutex;
    std::function<void(std::string_view)> sink;
};

// Leaked on purpose: static destructors that log must still find it.
sink_state& the_sink() {
    static auto* s = new sink_state;
    return *s;
}

// localtime_r takes a process-wide lock, so each thread formats a given
// second only once.
std::string_view format_seconds(std::time_t t) {
    thread_local std::time_t cached_second = -1;
    thread_local char cached[32];
    thread_local size_t cached_len = 0;
    if (t != cached_second) {
        std::tm tm;
        localtime_r(&t, &tm);
        cached_len = std::strftime(cached, sizeof(cached), "%Y-%m-%d %H:%M:%S", &tm);
        cached_second = t;
    }
    return {cached, cached_len};
}

void write_to_stderr(const char* data, size_t len) noexcept {
    while (len > 0) {
        ssize_t n = ::write(STDERR_FILENO, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; // nowhere left to report it
        }
        data += n;
        len -= size_t(n);
    }
}

void emit(fmt::memory_buffer& line) noexcept {
    auto& s = the_sink();
    if (s.installed.load(std::memory_order_acquire)) {
        std::lock_guard lock(s.mutex);
        if (s.sink) {
            try {
                s.sink(std::string_view(line.data(), line.size()));
            } catch (...) {
            }
            return;
        }
    }
    line.push_back('\n');
    write_to_stderr(line.data(), line.size());
}

std::string lowercase(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

} // namespace

std::string_view to_string(log_level level) noexcept {
    return level_names[int(level)];
}

log_level parse_log_level(std::string_view text) {
    auto lower = lowercase(text);
    for (int i = 0; i < int(std::size(level_names)); ++i) {
        if (lower == level_names[i]) {
            return log_level(i);
        }
    }
    throw std::invalid_argument(
        fmt::format("unknown log level '{}' (expected error, warn, info, debug or trace)", text));
}

logger::logger(std::string name)
        : _name(std::move(name))
        , _level(int(log_level::info)) {
    global_logger_registry().register_logger(this);
}

logger::~logger() {
    global_logger_registry().unregister_logger(this);
}

void logger::do_log(log_level level, fmt::string_view format, fmt::format_args args) noexcept {
    try {
        auto now = std::chrono::system_clock::now();
        auto seconds = std::chrono::time_point_cast<std::chrono::seconds>(now);
        auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now - seconds).count();
        fmt::memory_buffer line;
        auto out = std::back_inserter(line);
        fmt::format_to(out, "{:<5} {},{:03d} [shard {}] {} - ", level_tags[int(level)],
                       format_seconds(std::chrono::system_clock::to_time_t(seconds)), millis,
                       this_shard_id(), _name);
        auto prefix_len = line.size();
        try {
            fmt::vformat_to(out, format, args);
        } catch (const std::exception& e) {
            line.resize(prefix_len);
            fmt::format_to(out, "<failed to format log message \"{}\": {}>",
                           std::string_view(format.data(), format.size()), e.what());
        }
        emit(line);
    } catch (...) {
        // Out of memory while building the line: dropping it is all we can do.
    }
}

void logger_registry::register_logger(logger* l) {
    std::lock_guard lock(_mutex);
    auto [it, inserted] = _loggers.emplace(l->name(), l);
    if (!inserted) {
        throw std::invalid_argument(fmt::format("logger '{}' registered twice", l->name()));
    }
    // Under the lock, so a concurrent set_all_loggers_level cannot miss it.
    l->set_level(_default_level);
}

void logger_registry::unregister_logger(logger* l) noexcept {
    std::lock_guard lock(_mutex);
    auto it = _loggers.find(l->name());
    if (it != _loggers.end() && it->second == l) {
        _loggers.erase(it);
    }
}

void logger_registry::set_logger_level(std::string_view name, log_level level) {
    std::lock_guard lock(_mutex);
    auto it = _loggers.find(name);
    if (it == _loggers.end()) {
        throw std::invalid_argument(fmt::format("unknown logger '{}'", name));
    }
    it->second->set_level(level);
}

log_level logger_registry::get_logger_level(std::string_view name) const {
    std::lock_guard lock(_mutex);
    auto it = _loggers.find(name);
    if (it == _loggers.end()) {
        throw std::invalid_argument(fmt::format("unknown logger '{}'", name));
    }
    return it->second->level();
}

void logger_registry::set_all_loggers_level(log_level level) {
    std::lock_guard lock(_mutex);
    _default_level = level;
    for (auto& [name, l] : _loggers) {
        l->set_level(level);
    }
}

log_level logger_registry::default_level() const {
    std::lock_guard lock(_mutex);
    return _default_level;
}

std::vector<std::string> logger_registry::get_all_logger_names() const {
    std::lock_guard lock(_mutex);
    std::vector<std::string> names;
    names.reserve(_loggers.size());
    for (auto& [name, l] : _loggers) {
        names.push_back(name);
    }
    return names;
}

logger_registry& global_logger_registry() {
    // Leaked on purpose: loggers are namespace-scope statics in many
    // translation units, constructed and destroyed in no order we control.
    static auto* registry = new logger_registry;
    return *registry;
}

void set_log_sink(std::function<void(std::string_view line)> sink) {
    auto& s = the_sink();
    std::lock_guard lock(s.mutex);
    s.installed.store(bool(sink), std::memory_order_release);
    s.sink = std::move(sink);
}

std::vector<std::pair<std::string, log_level>> parse_logger_log_levels(std::string_view spec) {
    std::vector<std::pair<std::string, log_level>> out;
    while (true) {
        auto colon = spec.find(':');
        auto entry = spec.substr(0, colon);
        auto eq = entry.find('=');
        if (eq == std::string_view::npos || eq == 0) {
            throw std::invalid_argument(
                fmt::format("--logger-log-level: bad entry '{}', expected name=level", entry));
        }
        auto name = entry.substr(0, eq);
        auto level_text = entry.substr(eq + 1);
        log_level level;
        try {
            level = parse_log_level(level_text);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("--logger-log-level: logger '{}': {}", name, e.what()));
        }
        out.emplace_back(std::string(name), level);
        if (colon == std::string_view::npos) {
            return out;
        }
        spec.remove_prefix(colon + 1);
    }
}

logging_settings parse_logging_settings(std::string_view default_level,
                                        std::span<const std::string> logger_log_levels) {
    logging_settings settings;
    try {
        settings.default_level = parse_log_level(default_level);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("--default-log-level: {}", e.what()));
    }
    for (auto& spec : logger_log_levels) {
        auto levels = parse_logger_log_levels(spec);
        settings.logger_levels.insert(settings.logger_levels.end(), levels.begin(), levels.end());
    }
    return settings;
}

void apply_logging_settings(const logging_settings& settings) {
    auto& registry = global_logger_registry();
    auto names = registry.get_all_logger_names();
    for (auto& [name, level] : settings.logger_levels) {
        if (!std::binary_search(names.begin(), names.end(), name)) {
            throw std::invalid_argument(fmt::format("--logger-log-level: unknown logger '{}'", name));
        }
    }
    registry.set_all_loggers_level(settings.default_level);
    for (auto& [name, level] : settings.logger_levels) {
        registry.set_logger_level(name, level);
    }
}

} // namespace reef
