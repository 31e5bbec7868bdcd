// `reef nodetool [-h host] [-p port] COMMAND [args]`: ScyllaDB's nodetool over a node's REST API (port 10000),
// printing what Cassandra 5.0's nodetool prints. Promises: exit 0 on success; 1 with one line on stderr when the node
// cannot be reached or answers an error, or when the command line is wrong (with the hint Cassandra's nodetool gives).
#pragma once

namespace reef::tools {

// argv[0] is "nodetool".
int nodetool_main(int argc, char** argv);

} // namespace reef::tools
