// The `system` module: the node's uptime and its loggers' levels (list, get, set one, set all).
// Promises: a level set here applies at once on every shard (loggers are process-wide); an unknown logger is 400.
#pragma once

#include "api/api_context.hh"
#include "api/route_table.hh"

namespace reef::api {

// Adds module `system` and its routes.
void register_system(route_table& t, api_context& ctx);

} // namespace reef::api
