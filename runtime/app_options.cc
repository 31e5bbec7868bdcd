// Shared command-line options. See app_options.hh.
#include "runtime/app_options.hh"

#include "runtime/log.hh"

namespace reef {

void runtime_options::add(program_options::options& opts) {
    opts.add("smp", "number of shards (0: one per available CPU)", &_smp, 0u, 0u, 1024u);
    opts.add("io-backend", "I/O backend: auto, io_uring, aio or pread", &_io_backend, "auto");
    opts.add("io-queue-depth", "operations each shard's backend keeps in flight", &_io_queue_depth, 256u, 4u, 32768u);
    opts.add("no-pin-threads", "do not pin shard threads to CPUs", &_no_pin);
    opts.add("default-log-level", "error, warn, info, debug or trace", &_default_log_level, "info");
    opts.add("logger-log-level", "per-logger levels, name=level[:name=level...] (repeatable)", &_logger_log_levels);
}

runtime_config runtime_options::to_config() const {
    apply_logging_settings(parse_logging_settings(_default_log_level, _logger_log_levels));
    runtime_config cfg;
    cfg.smp = _smp;
    cfg.io_backend = parse_io_backend_kind(_io_backend);
    cfg.io_queue_depth = _io_queue_depth;
    cfg.pin_threads = !_no_pin;
    return cfg;
}

} // namespace reef
