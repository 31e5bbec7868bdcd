// The list of the API's modules: each module's routes live in a file of their own (api/<module>.cc).
#include "api/api.hh"

#include "api/storage_service.hh"
#include "api/system.hh"
#include "api/table_modules.hh"

namespace reef::api {

void register_api_routes(route_table& t, api_context& ctx) {
    // One call per module file, in /api-doc's order. The table, cache and node files add their modules if no
    // earlier call did (api/table_modules.hh), so they come after system's and storage_service's.
    register_system(t, ctx);
    t.add_module("storage_service", "The storage service API");
    register_storage_service(t, ctx);
    register_system_caches(t, ctx);
    register_node_info(t, ctx);
    register_column_family(t, ctx);
    register_cache_service(t, ctx);
    register_compaction_manager(t, ctx);
}

} // namespace reef::api
