// node::config: the node's configuration, read from a scylla.yaml-style file under ScyllaDB's key names and
// defaults, then overridden from the command line. Promises: a bad value stops with an error naming the key and
// where it came from (file and line, or the command-line option); an unknown key is only a warning.
#pragma once

#include "runtime/program_options.hh"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reef::node {

enum class commitlog_sync_mode { periodic, batch };

struct config {
    std::string cluster_name = "Test Cluster";
    // Where everything the node writes goes unless a directory below says otherwise (ScyllaDB's workdir).
    std::string workdir = "./reef-data";
    // Empty: <workdir>/data and <workdir>/commitlog (see data_directories() and commitlog_dir()).
    std::vector<std::string> data_file_directories;
    std::string commitlog_directory;
    commitlog_sync_mode commitlog_sync = commitlog_sync_mode::periodic;
    int64_t commitlog_sync_period_in_ms = 10000;
    int64_t commitlog_sync_batch_window_in_ms = 10000;
    int64_t commitlog_segment_size_in_mb = 64;
    // -1: sized from the node's memory (ScyllaDB's default).
    int64_t commitlog_total_space_in_mb = -1;
    // Loopback by default, so that a laptop runs a node as a normal user without exposing it.
    std::string listen_address = "127.0.0.1";
    std::string rpc_address = "127.0.0.1";
    uint16_t native_transport_port = 9042;
    uint16_t native_shard_aware_transport_port = 19042;
    // The largest CQL frame taken (ScyllaDB's default; Cassandra 4 has 16).
    int64_t native_transport_max_frame_size_in_mb = 256;
    // CQL requests a shard runs at once; one more is refused with ERROR overloaded (ScyllaDB's key).
    int64_t max_concurrent_requests_per_shard = 10000;
    // Empty: rpc_address (ScyllaDB's rule); see effective_api_address().
    std::string api_address;
    uint16_t api_port = 10000;
    // Empty: listen_address; see effective_prometheus_address().
    std::string prometheus_address;
    uint16_t prometheus_port = 9180;
    int64_t num_tokens = 256;
    bool auto_snapshot = true;
    bool developer_mode = false;
    int64_t read_request_timeout_in_ms = 5000;
    int64_t write_request_timeout_in_ms = 2000;
    int64_t range_request_timeout_in_ms = 10000;
    int64_t counter_write_request_timeout_in_ms = 5000;
    int64_t cas_contention_timeout_in_ms = 1000;
    int64_t truncate_request_timeout_in_ms = 60000;
    int64_t request_timeout_in_ms = 10000;
    // MB/s of compaction input for the node (each shard's compaction manager takes an equal share); 0 leaves
    // compaction unthrottled.
    int64_t compaction_throughput_mb_per_sec = 0;

    std::vector<std::string> data_directories() const;
    std::string commitlog_dir() const;
    const std::string& effective_api_address() const { return api_address.empty() ? rpc_address : api_address; }
    const std::string& effective_prometheus_address() const {
        return prometheus_address.empty() ? listen_address : prometheus_address;
    }
};

// A value the node cannot start with. what() names the key and its source ("reef.yaml:7: native_transport_port:
// ...", "--api-port: ...").
class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The YAML keys this configuration knows, in file order of the table.
std::vector<std::string> known_keys();

// Applies the YAML document `text` (a map of keys; empty is allowed) to cfg. `source` names it in errors and
// warnings. Unknown keys are appended to warnings; a null value keeps the current value. Throws config_error.
void apply_yaml(config& cfg, const std::string& text, const std::string& source, std::vector<std::string>& warnings);

// Reads and applies a file; a file that cannot be read is a config_error naming it.
void apply_yaml_file(config& cfg, const std::string& path, std::vector<std::string>& warnings);

// The command-line side: every scalar key as `--key-with-dashes VALUE` (booleans as flags), plus
// `--options-file` and `--workdir`. declare() adds them to opts; after opts.parse(), load() reads the options file
// (the given one, else ./reef.yaml if present, else none) and then applies the options given, which override it.
class config_options {
public:
    config_options();
    ~config_options();
    config_options(const config_options&) = delete;
    config_options& operator=(const config_options&) = delete;
    void declare(program_options::options& opts);
    // Returns the configuration; appends warnings (unknown keys, non-loopback addresses). Throws config_error.
    config load(const program_options::options& opts, std::vector<std::string>& warnings) const;
    // The file load() read ("" if none); valid after load().
    const std::string& source() const noexcept { return _source; }

private:
    std::string _options_file;
    // Per key, in known_keys() order: the option's text, or for booleans its flag. Options write through
    // pointers to these, so they are allocated once.
    std::unique_ptr<std::string[]> _values;
    std::unique_ptr<bool[]> _flags;
    mutable std::string _source;
};

// A size as Seastar's --memory takes it: bytes, or a number with a K, M, G or T suffix (powers of 1024). Throws
// config_error naming `option`.
uint64_t parse_memory_size(std::string_view text, std::string_view option);

// Warnings for addresses that are not loopback (a node reachable from the network).
void check_addresses(const config& cfg, std::vector<std::string>& warnings);

// "127.0.0.1", "::1", "localhost", anything in 127.0.0.0/8.
bool is_loopback_address(const std::string& address);

} // namespace reef::node
