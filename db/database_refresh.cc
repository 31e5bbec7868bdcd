// database's refresh (nodetool refresh, POST /storage_service/sstables/{keyspace}): the sstables of a table's
// upload/ directories validated, rewritten by each shard into its own sstables, added together, then removed.
#include "db/database.hh"
#include "db/database_helpers.hh"
#include "db/table.hh"

#include "runtime/blocking.hh"
#include "runtime/log.hh"
#include "runtime/smp.hh"
#include "sstables/shared_sstable_readers.hh"

#include <algorithm>
#include <filesystem>

namespace reef {

using namespace db_detail;

namespace {

logger refresh_log("refresh");

namespace fs = std::filesystem;

// The sstables in the upload directories, by path: each named by its TOC.txt; a Data.db without one is refused.
std::vector<sstables::descriptor> list_uploads(const std::vector<std::string>& upload_dirs) {
    std::vector<std::string> tocs;
    for (auto& dir : upload_dirs) {
        if (!fs::is_directory(dir)) {
            continue;
        }
        for (auto& e : fs::directory_iterator(dir)) {
            auto path = e.path().string();
            if (path.ends_with("-TOC.txt")) {
                tocs.push_back(path);
            } else if (path.ends_with("-Data.db")) {
                auto toc = path.substr(0, path.size() - std::string_view("Data.db").size()) + "TOC.txt";
                if (!fs::exists(toc)) {
                    throw refresh_error(path + ": no TOC.txt beside it (a partial copy?)");
                }
            }
        }
    }
    std::sort(tocs.begin(), tocs.end());
    std::vector<sstables::descriptor> out;
    for (auto& toc : tocs) {
        try {
            out.push_back(sstables::descriptor::from_path(toc));
        } catch (const std::exception& e) {
            throw refresh_error(toc + ": not an sstable name Reef reads (" + e.what() + ")");
        }
    }
    return out;
}

std::string type_name(const data_type& t) { return t->cql_name(); }

// The sstable's keys and columns against the table's (what its serialization header says it holds).
void check_header(const schema& s, const sstables::serialization_header& h, const std::string& file) {
    auto table = qualified(s.keyspace(), s.table());
    if (!(*h.partition_key_type == *s.partition_key_type())) {
        throw refresh_error(file + ": its partition key is " + type_name(h.partition_key_type) + ", " + table +
                            "'s is " + type_name(s.partition_key_type()));
    }
    auto ck = s.clustering_types();
    bool same_ck = ck.size() == h.clustering_types.size();
    for (size_t i = 0; same_ck && i < ck.size(); ++i) {
        same_ck = *ck[i] == *h.clustering_types[i];
    }
    if (!same_ck) {
        throw refresh_error(file + ": its clustering columns differ from " + table + "'s (" +
                            std::to_string(h.clustering_types.size()) + " against " + std::to_string(ck.size()) + ")");
    }
    auto check = [&](const std::vector<sstables::serialization_header_column>& cols,
                     const std::vector<column_definition>& defs, const char* kind) {
        for (auto& c : cols) {
            auto it = std::find_if(defs.begin(), defs.end(), [&](auto& d) { return d.name == c.name; });
            if (it == defs.end() || !(*it->type == *c.type)) {
                throw refresh_error(file + ": " + kind + " column " + c.name + " " + type_name(c.type) +
                                    " is not a column of " + table);
            }
        }
    };
    check(h.static_columns, s.static_columns(), "static");
    check(h.regular_columns, s.regular_columns(), "regular");
}

// Reef's tables are in Murmur3 token order: an sstable of another partitioner would be read (and rewritten) in
// another order, so it is refused (Cassandra refuses it too).
void check_partitioner(const sstables::statistics& st, const std::string& file) {
    static const std::string murmur3 = "org.apache.cassandra.dht.Murmur3Partitioner";
    if (st.validation && !st.validation->partitioner.empty() && st.validation->partitioner != murmur3) {
        throw refresh_error(file + ": written with " + st.validation->partitioner + ", not the node's " + murmur3);
    }
}

// Opens d, checks it against s and reads it whole; a failure is a refresh_error naming d's Data.db.
future<> validate_upload(schema_ptr s, sstables::descriptor d) {
    auto file = d.filename(sstables::component_type::data);
    std::exception_ptr err;
    try {
        auto sst = co_await sstables::open_sstable(d);
        std::exception_ptr read_err;
        try {
            check_partitioner(sst->statistics(), file);
            check_header(*s, *sst->header(), file);
            auto r = sstables::make_sstable_full_scan_reader(sst, s);
            try {
                while (!r.done()) {
                    co_await r.fill_buffer();
                    while (!r.is_buffer_empty()) {
                        r.pop_mutation_fragment();
                    }
                }
            } catch (...) {
                read_err = std::current_exception();
            }
            co_await r.close();
        } catch (...) {
            read_err = std::current_exception();
        }
        co_await sst->readers().close();
        co_await sst->close();
        if (read_err) {
            std::rethrow_exception(read_err);
        }
    } catch (const refresh_error&) {
        throw;
    } catch (const std::exception& e) {
        std::string what = e.what();
        auto message = what.find(file) != std::string::npos ? "cannot load an sstable from upload/: " + what
                                                            : file + ": cannot be loaded: " + what;
        err = std::make_exception_ptr(refresh_error(message));
    }
    if (err) {
        std::rethrow_exception(err);
    }
}

} // namespace

future<size_t> database::load_new_sstables(std::string keyspace, std::string table) {
    auto s = find_schema(keyspace, table);
    if (!s) {
        throw no_such_table("no table " + qualified(keyspace, table));
    }
    auto run = [s](database& db) { return db.load_new_sstables_on_shard0(s); };
    auto n = co_await _container->invoke_on(0, run);
    co_return n;
}

future<size_t> database::load_new_sstables_on_shard0(schema_ptr s) {
    auto units = co_await get_units(_refresh_sem, 1);
    std::vector<std::string> upload_dirs;
    for (auto& dir : table_directories(*s)) {
        upload_dirs.push_back(dir + "/upload");
    }
    auto uploads = co_await run_blocking([&upload_dirs] { return list_uploads(upload_dirs); });
    if (uploads.empty()) {
        co_return 0;
    }
    // Every sstable checked before any is loaded: a bad one leaves the table and the upload directory as they were.
    for (auto& d : uploads) {
        co_await validate_upload(s, d);
    }
    auto id = s->id();
    auto stage = [id, uploads](database& db) -> future<> {
        auto t = db.find_table_shared(id);
        if (!t) {
            throw no_such_table("refresh: the table was dropped");
        }
        auto shard = this_shard_id();
        auto count = smp::count();
        co_await t->stage_import(uploads, [shard, count](const dht::decorated_key& k) {
            return dht::shard_of(k.get_token(), count) == shard;
        });
    };
    std::exception_ptr err;
    try {
        co_await _container->invoke_on_all(stage);
    } catch (...) {
        err = std::current_exception();
    }
    if (err) {
        auto abort = [id](database& db) -> future<> {
            if (auto t = db.find_table_shared(id)) {
                co_await t->abort_staged();
            }
        };
        co_await _container->invoke_on_all(abort);
        std::rethrow_exception(err);
    }
    auto commit = [id](database& db) -> future<> {
        if (auto t = db.find_table_shared(id)) {
            t->commit_staged();
        }
        co_return;
    };
    co_await _container->invoke_on_all(commit);
    for (auto& d : uploads) {
        co_await sstables::delete_sstable_files(d);
    }
    refresh_log.info("refresh of {}: loaded {} sstables from upload/", qualified(s->keyspace(), s->table()),
                     uploads.size());
    co_return uploads.size();
}

} // namespace reef
