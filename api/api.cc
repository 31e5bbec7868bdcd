// The list of the API's modules: each module's routes live in a file of their own (api/<module>.cc).
#include "api/api.hh"

#include "api/system.hh"
#include "api/table_modules.hh"

namespace reef::api {

void register_api_routes(route_table& t, api_context& ctx) {
    t.add_module("storage_service", "The storage service API");
    t.add_module("column_family", "The column family API");
    t.add_module("cache_service", "The cache service API");
    t.add_module("gossiper", "The gossiper API");
    t.add_module("snitch", "The endpoint snitch info API");
    // One call per module file, in /api-doc's order.
    register_system(t, ctx);
    register_system_caches(t, ctx);
    register_node_info(t, ctx);
    register_column_family(t, ctx);
    register_cache_service(t, ctx);
}

} // namespace reef::api
