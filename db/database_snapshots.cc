// database's snapshots: taking them (hard links, manifest.json and schema.cql as Cassandra 5.0 writes them),
// listing what every data directory holds, and clearing them.
#include "db/database.hh"
#include "db/database_helpers.hh"
#include "db/schema_describe.hh"
#include "db/schema_tables.hh"

#include "runtime/blocking.hh"
#include "runtime/smp.hh"
#include "utils/json_writer.hh"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sys/stat.h>
#include <tuple>

namespace reef {

using namespace db_detail;

namespace {

namespace fs = std::filesystem;

// Cassandra's Instant in JSON (Jackson's ISO_INSTANT): "2023-11-14T22:13:20.123Z", the fraction left out when 0.
std::string iso_instant(int64_t millis) {
    time_t secs = time_t(millis / 1000);
    struct tm tm {};
    gmtime_r(&secs, &tm);
    char buf[40];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    std::string out = buf;
    if (millis % 1000) {
        char frac[8];
        snprintf(frac, sizeof(frac), ".%03d", int(millis % 1000));
        out += frac;
    }
    return out + "Z";
}

// manifest.json as Cassandra 5.0.9 writes it (SnapshotManifest through Jackson's pretty printer): the Data.db files
// of the snapshot directory, created_at, expires_at (no TTL: null) and ephemeral.
std::string manifest_json(const std::vector<std::string>& data_files, int64_t created_millis) {
    utils::json_writer w;
    w.begin_object().key("files").begin_array(true);
    for (auto& f : data_files) {
        w.value(f);
    }
    w.end_array();
    w.member("created_at", iso_instant(created_millis));
    w.key("expires_at").null();
    w.member("ephemeral", false);
    w.end_object();
    return w.take();
}

bool valid_tag(const std::string& tag) {
    return !tag.empty() && tag.find('/') == std::string::npos && tag != "." && tag != "..";
}

// A table directory's name, "<table>-<id as 32 hex digits>": the table's name, or nothing for another directory.
std::optional<std::string> table_of_directory(const std::string& name) {
    if (name.size() < 34 || name[name.size() - 33] != '-') {
        return std::nullopt;
    }
    auto id = std::string_view(name).substr(name.size() - 32);
    if (!std::all_of(id.begin(), id.end(), [](char c) { return std::isxdigit(uint8_t(c)); })) {
        return std::nullopt;
    }
    return name.substr(0, name.size() - 33);
}

// Calls f(keyspace, table, table directory) for each table directory under the data directories, in the keyspaces
// given (all when empty).
template <typename F>
void for_each_table_directory(const std::vector<std::string>& data_dirs, const std::vector<std::string>& keyspaces,
                              F f) {
    for (auto& data : data_dirs) {
        if (!fs::is_directory(data)) {
            continue;
        }
        for (auto& ks : fs::directory_iterator(data)) {
            auto ks_name = ks.path().filename().string();
            if (!ks.is_directory() ||
                (!keyspaces.empty() && std::find(keyspaces.begin(), keyspaces.end(), ks_name) == keyspaces.end())) {
                continue;
            }
            for (auto& t : fs::directory_iterator(ks.path())) {
                if (auto name = table_of_directory(t.path().filename().string()); name && t.is_directory()) {
                    f(ks_name, *name, t.path());
                }
            }
        }
    }
}

} // namespace

std::vector<std::string> database::data_directories() const {
    std::vector<std::string> out{_cfg.data_directory};
    out.insert(out.end(), _cfg.more_data_directories.begin(), _cfg.more_data_directories.end());
    return out;
}

future<> database::snapshot_table_local(table& t, const std::string& tag, std::vector<std::string>& linked) {
    // The sstables' names (generations are unique across the data directories): each file is linked within its own
    // directory, into that directory's snapshots/<tag>/.
    std::vector<std::string> prefixes;
    for (auto& d : t.sstable_descriptors()) {
        auto toc = std::filesystem::path(d.filename(sstables::component_type::toc)).filename().string();
        prefixes.push_back(toc.substr(0, toc.size() - std::string_view("TOC.txt").size()));
    }
    auto dirs = table_directories(*t.schema());
    for (auto& dir : dirs) {
        auto target = dir + "/snapshots/" + tag;
        auto names = co_await run_blocking([&dir, &target, &prefixes] {
            fs::create_directories(target);
            std::vector<std::string> out;
            for (auto& e : fs::directory_iterator(dir)) {
                auto name = e.path().filename().string();
                if (!e.is_regular_file()) {
                    continue;
                }
                bool ours = std::any_of(prefixes.begin(), prefixes.end(), [&](auto& p) { return name.starts_with(p); });
                // Not a partial write's TOC.txt.tmp (a flush does not run during the snapshot, this is for safety).
                if (ours && !name.ends_with(".tmp")) {
                    fs::create_hard_link(e.path(), fs::path(target) / name);
                    out.push_back(name);
                }
            }
            return out;
        });
        linked.insert(linked.end(), names.begin(), names.end());
    }
}

future<> database::write_snapshot_metadata(schema_ptr s, std::string tag, std::vector<std::string> files) {
    // In each data directory, manifest.json lists the Data.db files there (all shards' links: read back from the
    // directory) and schema.cql recreates the table, as Cassandra writes them, so the snapshot can be restored by
    // hand or streamed by sstableloader.
    auto cql = snapshot_schema_cql(*s);
    auto created = now_millis();
    auto dirs = table_directories(*s);
    for (auto& dir : dirs) {
        auto target = dir + "/snapshots/" + tag;
        co_await run_blocking([&target, &cql, &files, created] {
            fs::create_directories(target);
            files.clear();
            for (auto& e : fs::directory_iterator(target)) {
                auto name = e.path().filename().string();
                if (name.ends_with("-Data.db")) {
                    files.push_back(name);
                }
            }
            std::sort(files.begin(), files.end());
            std::ofstream manifest(target + "/manifest.json");
            manifest << manifest_json(files, created);
            std::ofstream schema_file(target + "/schema.cql");
            schema_file << cql;
            if (!manifest.flush() || !schema_file.flush()) {
                throw std::runtime_error(target + ": cannot write the snapshot's manifest.json or schema.cql");
            }
        });
    }
}

future<> database::snapshot_tables(std::string tag, std::vector<table_id> ids, bool skip_flush) {
    auto link = [tag, ids, skip_flush](database& db) -> future<> {
        for (auto& id : ids) {
            auto it = db._tables.find(id);
            if (it == db._tables.end()) {
                continue;
            }
            auto t = it->second->t;
            if (!skip_flush) {
                co_await t->flush();
            }
            std::vector<std::string> linked;
            co_await db.snapshot_table_local(*t, tag, linked);
        }
    };
    co_await _container->invoke_on_all(link);
    for (auto& id : ids) {
        if (auto it = _tables.find(id); it != _tables.end()) {
            co_await write_snapshot_metadata(it->second->t->schema(), tag, std::vector<std::string>());
        }
    }
}

future<> database::snapshot(std::string tag, std::vector<std::string> keyspaces, std::vector<std::string> tables,
                            bool skip_flush) {
    if (!valid_tag(tag)) {
        throw std::invalid_argument("snapshot: bad tag '" + tag + "'");
    }
    if (!tables.empty() && keyspaces.size() != 1) {
        throw std::invalid_argument("snapshot: tables can be given with exactly one keyspace");
    }
    if (keyspaces.empty()) {
        for (auto& [name, ks] : _keyspaces) {
            if (!schema_tables::is_system_keyspace(name)) {
                keyspaces.push_back(name);
            }
        }
    }
    std::vector<schema_ptr> schemas;
    for (auto& ks : keyspaces) {
        if (!_keyspaces.contains(ks)) {
            throw std::invalid_argument("snapshot: keyspace " + ks + " does not exist");
        }
        if (tables.empty()) {
            auto all = tables_of(ks);
            schemas.insert(schemas.end(), all.begin(), all.end());
        }
        for (auto& name : tables) {
            auto s = find_schema(ks, name);
            if (!s) {
                throw std::invalid_argument("snapshot: table " + qualified(ks, name) + " does not exist");
            }
            schemas.push_back(std::move(s));
        }
    }
    std::vector<table_id> ids;
    std::vector<std::pair<std::string, std::string>> targets;  // (snapshot directory, table)
    for (auto& s : schemas) {
        for (auto& dir : table_directories(*s)) {
            targets.emplace_back(dir + "/snapshots/" + tag, qualified(s->keyspace(), s->table()));
        }
        ids.push_back(s->id());
    }
    co_await run_blocking([&targets, &tag] {
        for (auto& [dir, name] : targets) {
            if (fs::exists(dir)) {
                throw std::invalid_argument("snapshot: " + name + " already has a snapshot named " + tag);
            }
        }
    });
    co_await snapshot_tables(std::move(tag), std::move(ids), skip_flush);
}

future<std::vector<snapshot_details>> database::list_snapshots() const {
    auto dirs = data_directories();
    auto out = co_await run_blocking([&dirs] {
        std::map<std::tuple<std::string, std::string, std::string>, snapshot_details> found;
        for_each_table_directory(dirs, {}, [&](const std::string& ks, const std::string& table, const fs::path& dir) {
            auto snaps = dir / "snapshots";
            if (!fs::is_directory(snaps)) {
                return;
            }
            for (auto& snap : fs::directory_iterator(snaps)) {
                if (!snap.is_directory()) {
                    continue;
                }
                auto tag = snap.path().filename().string();
                auto& d = found[{tag, ks, table}];
                d.tag = tag;
                d.keyspace = ks;
                d.table = table;
                for (auto& f : fs::directory_iterator(snap.path())) {
                    struct stat st {}, live {};
                    if (::stat(f.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
                        continue;
                    }
                    d.total_bytes += uint64_t(st.st_size);
                    auto same = dir / f.path().filename();
                    bool shared = ::stat(same.c_str(), &live) == 0 && live.st_ino == st.st_ino && live.st_dev == st.st_dev;
                    if (!shared) {
                        d.live_bytes += uint64_t(st.st_size);
                    }
                }
            }
        });
        std::vector<snapshot_details> out;
        for (auto& [key, d] : found) {
            out.push_back(std::move(d));
        }
        return out;
    });
    co_return out;
}

future<> database::clear_snapshot(std::string tag, std::vector<std::string> keyspaces, std::string table) {
    if (!tag.empty() && !valid_tag(tag)) {
        throw std::invalid_argument("clear snapshot: bad tag '" + tag + "'");
    }
    auto dirs = data_directories();
    co_await run_blocking([&dirs, &tag, &keyspaces, &table] {
        for_each_table_directory(dirs, keyspaces, [&](const std::string&, const std::string& name, const fs::path& dir) {
            if (!table.empty() && name != table) {
                return;
            }
            auto snaps = dir / "snapshots";
            if (!tag.empty()) {
                fs::remove_all(snaps / tag);
            } else if (fs::is_directory(snaps)) {
                for (auto& snap : fs::directory_iterator(snaps)) {
                    fs::remove_all(snap.path());
                }
            }
        });
    });
}

} // namespace reef
