// Named loggers (`static reef::logger rlog("sstable");`) and the process-wide registry that sets their levels.
// A disabled level costs one relaxed atomic load; each enabled line reaches stderr in a single write().
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef {

// Ordered by verbosity: a logger at level L emits every message whose level is <= L.
enum class log_level : int { error, warn, info, debug, trace };

// "error", "warn", "info", "debug", "trace".
std::string_view to_string(log_level level) noexcept;

// Accepts the names above in any letter case; throws std::invalid_argument naming the bad text.
log_level parse_log_level(std::string_view text);

class logger {
    std::string _name;
    std::atomic<int> _level;

public:
    // Registers in global_logger_registry() at the registry's default level.
    // Throws std::invalid_argument if a live logger already has this name.
    explicit logger(std::string name);
    ~logger();
    logger(const logger&) = delete;
    logger& operator=(const logger&) = delete;

    const std::string& name() const noexcept { return _name; }
    log_level level() const noexcept { return log_level(_level.load(std::memory_order_relaxed)); }
    void set_level(log_level level) noexcept { _level.store(int(level), std::memory_order_relaxed); }
    bool is_enabled(log_level level) const noexcept {
        return int(level) <= _level.load(std::memory_order_relaxed);
    }

    // Formats only when the level is enabled. Never throws: a failure to
    // format is reported in the line instead, so logging from a destructor
    // or a catch block is safe.
    template <typename... Args>
    void log(log_level level, fmt::format_string<Args...> format, Args&&... args) noexcept {
        if (is_enabled(level)) {
            do_log(level, format, fmt::make_format_args(args...));
        }
    }
    template <typename... Args>
    void error(fmt::format_string<Args...> format, Args&&... args) noexcept {
        log(log_level::error, format, std::forward<Args>(args)...);
    }
    template <typename... Args>
    void warn(fmt::format_string<Args...> format, Args&&... args) noexcept {
        log(log_level::warn, format, std::forward<Args>(args)...);
    }
    template <typename... Args>
    void info(fmt::format_string<Args...> format, Args&&... args) noexcept {
        log(log_level::info, format, std::forward<Args>(args)...);
    }
    template <typename... Args>
    void debug(fmt::format_string<Args...> format, Args&&... args) noexcept {
        log(log_level::debug, format, std::forward<Args>(args)...);
    }
    template <typename... Args>
    void trace(fmt::format_string<Args...> format, Args&&... args) noexcept {
        log(log_level::trace, format, std::forward<Args>(args)...);
    }

private:
    void do_log(log_level level, fmt::string_view format, fmt::format_args args) noexcept;
};

// Every live logger by name. All members may be called from any thread.
class logger_registry {
    mutable std::mutex _mutex;
    std::map<std::string, logger*, std::less<>> _loggers;
    log_level _default_level = log_level::info;

public:
    // Called by logger's constructor (which sets the default level) and destructor.
    void register_logger(logger* l);
    void unregister_logger(logger* l) noexcept;

    // Throw std::invalid_argument naming the logger when no logger has that name.
    void set_logger_level(std::string_view name, log_level level);
    log_level get_logger_level(std::string_view name) const;

    // Sets every live logger, and the level loggers created later start at.
    void set_all_loggers_level(log_level level);
    log_level default_level() const;

    // Sorted.
    std::vector<std::string> get_all_logger_names() const;
};

// The one registry. Usable from static initializers and destructors in any
// translation unit, whatever their order.
logger_registry& global_logger_registry();

// Receives each line without its trailing newline instead of stderr; calls
// are serialized, so the sink need not be thread-safe, but it must not log.
// An empty function restores stderr.
void set_log_sink(std::function<void(std::string_view line)> sink);

// What --default-log-level and --logger-log-level asked for.
struct logging_settings {
    log_level default_level = log_level::info;
    std::vector<std::pair<std::string, log_level>> logger_levels;
};

// Parses one --logger-log-level value, "name=level[:name=level...]".
// Throws std::invalid_argument naming the bad entry, logger or level.
std::vector<std::pair<std::string, log_level>> parse_logger_log_levels(std::string_view spec);

// Parses the values of --default-log-level and of every --logger-log-level given.
logging_settings parse_logging_settings(std::string_view default_level,
                                        std::span<const std::string> logger_log_levels);

// Sets the default first, then each named logger. Checks every name before
// changing anything, so a typo leaves all levels as they were; throws
// std::invalid_argument naming the unknown logger.
void apply_logging_settings(const logging_settings& settings);

} // namespace reef
