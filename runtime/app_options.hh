// The command-line options every reef program shares: shards, I/O backend,
// thread pinning, log levels. add() declares them, to_config() checks and applies them.
#pragma once

#include "runtime/app.hh"
#include "runtime/program_options.hh"

#include <string>
#include <vector>

namespace reef {

class runtime_options {
public:
    // Declares --smp, --io-backend, --io-queue-depth, --no-pin-threads,
    // --default-log-level and --logger-log-level.
    void add(program_options::options& opts);
    // Applies the log levels and returns the runtime configuration.
    // Throws std::invalid_argument naming a bad backend, level or logger.
    runtime_config to_config() const;

private:
    unsigned _smp = 0;
    std::string _io_backend = "auto";
    unsigned _io_queue_depth = 256;
    bool _no_pin = false;
    std::string _default_log_level = "info";
    std::vector<std::string> _logger_log_levels;
};

} // namespace reef
