// api: the REST API's modules and routes, registered into one route table for the node's API server.
// Promises: every module listed by /api-doc has its /api-doc/<module>/ document and every route it lists.
#pragma once

#include "api/api_context.hh"
#include "api/route_table.hh"

namespace reef::api {

// Adds every module and its routes to t. The handlers keep a reference to ctx, which must outlive t's use.
void register_api_routes(route_table& t, api_context& ctx);

} // namespace reef::api
