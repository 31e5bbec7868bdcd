// The node process: `reef` with no subcommand, or `reef server`. It reads the configuration, locks its
// directories, starts the shards, reports ready, and on SIGTERM or SIGINT drains (node::drain) and exits 0; a
// second signal during the drain exits at once with 128 + the signal's number.
#pragma once

#include <string_view>

namespace reef::node {

// argv[0] is the program's name (skipped); `version` is what the ready line reports. Returns the exit code:
// 0 after a clean drain, 1 when start-up failed (the error logged) or a drain step failed, 2 for bad options.
int node_main(int argc, char** argv, std::string_view version);

} // namespace reef::node
