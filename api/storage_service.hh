// storage_service's data endpoints (ScyllaDB's paths, parameters and shapes): flush, major compaction, keyspaces,
// drain, release version, snapshots, refresh from upload/, compaction throughput, logging levels.
#pragma once

#include "api/api_context.hh"
#include "api/route_table.hh"

namespace reef::api {

// Adds the routes to t (the storage_service module must have been added). They call ctx.db from the calling shard.
void register_storage_service(route_table& t, api_context& ctx);

} // namespace reef::api
