// table_modules: the registration functions of the REST API's table, cache and node modules (api/column_family.cc,
// cache_service.cc, node_info.cc, system_caches.cc). Promises: each adds its module unless an earlier registration
// did (system, storage_service: call api/system.cc's and api/storage_service.cc's first, as they add theirs).
#pragma once

#include "api/api_context.hh"
#include "api/route_table.hh"

namespace reef::api {

// Module column_family: table names, per-table metrics, sstables per level.
void register_column_family(route_table& t, api_context& ctx);
// Module cache_service: the row cache's figures; the key and counter caches Reef does not have answer 0.
void register_cache_service(route_table& t, api_context& ctx);
// storage_service's node and ring endpoints (hostid, tokens, load, describe_ring, ...), and modules gossiper and
// snitch: one node owning the whole ring.
void register_node_info(route_table& t, api_context& ctx);
// Module compaction_manager: running compactions, pending and completed tasks, stop.
void register_compaction_manager(route_table& t, api_context& ctx);
// POST /system/drop_sstable_caches (module system).
void register_system_caches(route_table& t, api_context& ctx);

} // namespace reef::api
