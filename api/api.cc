// The list of the API's modules: each module's routes live in a file of their own (api/<module>.cc).
#include "api/api.hh"

#include "api/storage_service.hh"
#include "api/system.hh"

namespace reef::api {

void register_api_routes(route_table& t, api_context& ctx) {
    // One call per module file, in /api-doc's order.
    register_system(t, ctx);
    t.add_module("storage_service", "The storage service API");
    register_storage_service(t, ctx);
}

} // namespace reef::api
