// api_doc: GET /api-doc (the modules) and GET /api-doc/<module>/ (one module's swagger 1.2 document), generated
// from a route_table. Promises: a module is listed only when it has documented routes, and every listed module's
// document answers 200, as scylla-api-client requires before it runs any command.
#pragma once

#include "api/route_table.hh"

#include <string>
#include <string_view>

namespace reef::api {

// Adds the two undocumented routes to t; they read t's modules and routes when asked, so modules added later
// are listed too. t must outlive its use.
void register_api_doc(route_table& t);

// The documents themselves. `base_path` is the swagger basePath ("http://127.0.0.1:10000").
std::string api_doc_listing(const route_table& t);
// Throws not_found for a module that is unknown or has no documented route.
std::string api_doc_module(const route_table& t, std::string_view module, std::string_view base_path);

} // namespace reef::api
