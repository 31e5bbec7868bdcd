// POST /system/drop_sstable_caches (module system): every shard's row caches and sstable index caches emptied
// (database::drop_caches), as ScyllaDB's db.drop_caches() on every shard; cold-cache benchmarks call it.
#include "api/api_util.hh"
#include "api/table_modules.hh"
#include "db/database.hh"

namespace reef::api {

void register_system_caches(route_table& t, api_context& ctx) {
    ensure_module(t, "system", "The system related API");
    t.add(http_method::post, "/system/drop_sstable_caches",
          {"Drop the row caches and the sstables' index caches on every shard", "drop_sstable_caches"},
          [&ctx](http_request&) -> future<http_reply> {
              co_await ctx.db.local().drop_caches();
              co_return http_reply{};
          });
}

} // namespace reef::api
