// database: schema changes (keyspaces, user types, tables, truncate), decided on shard 0 one at a time and applied
// on every shard; and each shard's part of them (replacing or removing a table, with its snapshot).
#include "db/database.hh"
#include "db/database_helpers.hh"

#include "runtime/smp.hh"

namespace reef {

using namespace db_detail;

namespace {

// Whether t is, or contains, the user type ks.name.
bool type_uses(const data_type& t, const std::string& ks, const std::string& name) {
    if (auto* ut = dynamic_cast<const user_type_impl*>(t.get()); ut && ut->keyspace() == ks && ut->type_name() == name) {
        return true;
    }
    return std::any_of(t->field_types().begin(), t->field_types().end(),
                       [&](const data_type& f) { return type_uses(f, ks, name); });
}

} // namespace

// ---- schema changes: each public call hops to shard 0, which decides under _schema_sem ----

namespace {

// Runs fn() holding sem, so that the decisions of shard 0 come one at a time.
template <typename Func>
future<> serialized(semaphore& sem, Func& fn) {
    co_await sem.wait();
    std::exception_ptr err;
    try {
        co_await fn();
    } catch (...) {
        err = std::current_exception();
    }
    sem.signal();
    if (err) {
        std::rethrow_exception(err);
    }
}

} // namespace

future<> database::create_keyspace(keyspace_definition ks) {
    if (this_shard_id() != 0) {
        auto hop = [ks](database& db) { return db.create_keyspace(ks); };
        co_return co_await _container->invoke_on(0, hop);
    }
    ks = schema_tables::normalized(std::move(ks));
    auto decide = [this, &ks]() -> future<> {
        if (schema_tables::is_system_keyspace(ks.name) || _keyspaces.contains(ks.name)) {
            throw schema_change_error("keyspace " + ks.name + " already exists");
        }
        if (ks.name.empty()) {
            throw schema_change_error("a keyspace needs a name");
        }
        co_await apply_schema_mutations(schema_tables::create_keyspace_mutations(ks, next_schema_timestamp()));
        auto install = [ks](database& db) { db._keyspaces[ks.name] = ks; };
        co_await _container->invoke_on_all(install);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
}

future<> database::alter_keyspace(keyspace_definition ks) {
    if (this_shard_id() != 0) {
        auto hop = [ks](database& db) { return db.alter_keyspace(ks); };
        co_return co_await _container->invoke_on(0, hop);
    }
    ks = schema_tables::normalized(std::move(ks));
    auto decide = [this, &ks]() -> future<> {
        if (schema_tables::is_system_keyspace(ks.name)) {
            throw schema_change_error("cannot alter the system keyspace " + ks.name);
        }
        if (!_keyspaces.contains(ks.name)) {
            throw schema_change_error("keyspace " + ks.name + " does not exist");
        }
        // The keyspaces row rewritten whole (its replication map is one frozen value).
        co_await apply_schema_mutations(schema_tables::create_keyspace_mutations(ks, next_schema_timestamp()));
        auto install = [ks](database& db) { db._keyspaces[ks.name] = ks; };
        co_await _container->invoke_on_all(install);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
}

future<> database::drop_keyspace(std::string name) {
    if (this_shard_id() != 0) {
        auto hop = [name](database& db) { return db.drop_keyspace(name); };
        co_return co_await _container->invoke_on(0, hop);
    }
    auto decide = [this, &name]() -> future<> {
        if (schema_tables::is_system_keyspace(name)) {
            throw schema_change_error("cannot drop the system keyspace " + name);
        }
        if (!_keyspaces.contains(name)) {
            throw schema_change_error("keyspace " + name + " does not exist");
        }
        co_await apply_schema_mutations(schema_tables::drop_keyspace_mutations(name, next_schema_timestamp()));
        std::vector<std::pair<table_id, std::string>> drops;
        for (auto& s : tables_of(name)) {
            drops.emplace_back(s->id(), _cfg.auto_snapshot ? "dropped-" + std::to_string(now_millis()) + "-" + s->table()
                                                           : std::string());
        }
        auto remove = [name, drops](database& db) -> future<> {
            for (auto& [id, tag] : drops) {
                co_await db.remove_table_local(id, tag);
            }
            db._keyspaces.erase(name);
            std::erase_if(db._types, [&name](auto& t) { return t.first.first == name; });
        };
        co_await _container->invoke_on_all(remove);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
}

future<> database::create_type(data_type type, bool replace) {
    if (this_shard_id() != 0) {
        auto hop = [type, replace](database& db) { return db.create_type(type, replace); };
        co_return co_await _container->invoke_on(0, hop);
    }
    auto decide = [this, &type, replace]() -> future<> {
        auto* ut = dynamic_cast<const user_type_impl*>(type.get());
        if (!ut) {
            throw schema_change_error("create_type: " + type->cql_name() + " is not a user type");
        }
        if (!_keyspaces.contains(ut->keyspace()) || schema_tables::is_system_keyspace(ut->keyspace())) {
            throw schema_change_error("keyspace " + ut->keyspace() + " does not exist");
        }
        std::pair<std::string, std::string> key{ut->keyspace(), ut->type_name()};
        if (_types.contains(key) && !replace) {
            throw schema_change_error("type " + qualified(key.first, key.second) + " already exists");
        }
        auto multi = type->is_multi_cell() ? type
                                           : user_type(ut->keyspace(), ut->type_name(), ut->field_names(),
                                                       ut->declared_field_types(), true);
        co_await apply_schema_mutations(schema_tables::type_mutations(*ut, next_schema_timestamp()));
        auto install = [key, multi](database& db) { db._types[key] = multi; };
        co_await _container->invoke_on_all(install);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
}

future<> database::drop_type(std::string keyspace, std::string name) {
    if (this_shard_id() != 0) {
        auto hop = [keyspace, name](database& db) { return db.drop_type(keyspace, name); };
        co_return co_await _container->invoke_on(0, hop);
    }
    auto decide = [this, &keyspace, &name]() -> future<> {
        std::pair<std::string, std::string> key{keyspace, name};
        if (!_types.contains(key)) {
            throw schema_change_error("type " + qualified(keyspace, name) + " does not exist");
        }
        // Cassandra refuses to drop a type a table or another type uses.
        auto uses = [&](const data_type& t) { return type_uses(t, keyspace, name); };
        for (auto& [other, t] : _types) {
            if (other != key && uses(t)) {
                throw schema_change_error("type " + qualified(keyspace, name) + " is used by type " +
                                          qualified(other.first, other.second));
            }
        }
        for (auto& s : tables_of(keyspace)) {
            for (auto* c : s->columns_in_declaration_order()) {
                if (uses(c->type)) {
                    throw schema_change_error("type " + qualified(keyspace, name) + " is used by column " + c->name +
                                              " of " + qualified(keyspace, s->table()));
                }
            }
        }
        co_await apply_schema_mutations(schema_tables::drop_type_mutations(keyspace, name, next_schema_timestamp()));
        auto remove = [key](database& db) { db._types.erase(key); };
        co_await _container->invoke_on_all(remove);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
}

future<schema_ptr> database::create_table(schema_ptr s) {
    if (this_shard_id() != 0) {
        auto hop = [s](database& db) { return db.create_table(s); };
        co_return co_await _container->invoke_on(0, hop);
    }
    schema_ptr created;
    auto decide = [this, &s, &created]() -> future<> {
        if (!_keyspaces.contains(s->keyspace()) || schema_tables::is_system_keyspace(s->keyspace())) {
            throw schema_change_error("keyspace " + s->keyspace() + " does not exist");
        }
        if (_by_name.contains({s->keyspace(), s->table()})) {
            throw schema_change_error("table " + qualified(s->keyspace(), s->table()) + " already exists");
        }
        created = schema_builder(*s).with_id(utils::make_time_uuid()).build();
        co_await apply_schema_mutations(schema_tables::table_mutations(*created, next_schema_timestamp()));
        auto install = [created](database& db) { return db.add_table_local(created); };
        co_await _container->invoke_on_all(install);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
    co_return created;
}

future<schema_ptr> database::alter_table(std::string keyspace, std::string table, std::vector<column_definition> add,
                                         std::vector<std::string> drop) {
    if (this_shard_id() != 0) {
        auto hop = [keyspace, table, add, drop](database& db) { return db.alter_table(keyspace, table, add, drop); };
        co_return co_await _container->invoke_on(0, hop);
    }
    schema_ptr altered;
    auto decide = [&, this]() -> future<> {
        auto old = find_schema(keyspace, table);
        if (!old || schema_tables::is_system_keyspace(keyspace)) {
            throw schema_change_error("table " + qualified(keyspace, table) + " does not exist");
        }
        schema_builder b(*old);
        try {
            for (auto& name : drop) {
                auto* c = old->find_column(name);
                if (c && c->is_primary_key()) {
                    throw schema_change_error("cannot drop primary key column " + name + " of " + qualified(keyspace, table));
                }
                b.without_column(name);
            }
            for (auto& c : add) {
                if (c.kind != column_kind::static_column && c.kind != column_kind::regular_column) {
                    throw schema_change_error("ALTER TABLE ADD takes static or regular columns, not " + c.name);
                }
                b.with_column(c.name, c.type, c.kind);
            }
            altered = b.build();
        } catch (const std::invalid_argument& e) {
            throw schema_change_error(e.what());
        }
        co_await apply_schema_mutations(schema_tables::table_mutations(*altered, next_schema_timestamp(), old.get()));
        auto install = [altered](database& db) { return db.replace_table_local(altered->id(), altered); };
        co_await _container->invoke_on_all(install);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
    co_return altered;
}

namespace {

// Why `altered` cannot replace `old` as a version of the same table, or "" when it can.
std::string alter_refusal(const schema& old, const schema& altered) {
    if (altered.id() != old.id()) {
        return "the table's id cannot change";
    }
    auto same_key = [](const std::vector<column_definition>& a, const std::vector<column_definition>& b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (size_t i = 0; i < a.size(); ++i) {
            if (a[i].type->cql_name() != b[i].type->cql_name() || a[i].order != b[i].order) {
                return false;
            }
        }
        return true;
    };
    if (!same_key(old.partition_key(), altered.partition_key()) ||
        !same_key(old.clustering_key(), altered.clustering_key())) {
        return "the primary key's columns cannot change (only their names)";
    }
    return "";
}

} // namespace

future<schema_ptr> database::alter_table(schema_ptr altered) {
    if (this_shard_id() != 0) {
        auto hop = [altered](database& db) { return db.alter_table(altered); };
        co_return co_await _container->invoke_on(0, hop);
    }
    auto decide = [&, this]() -> future<> {
        auto& keyspace = altered->keyspace();
        auto& table = altered->table();
        auto old = find_schema(keyspace, table);
        if (!old || schema_tables::is_system_keyspace(keyspace)) {
            throw schema_change_error("table " + qualified(keyspace, table) + " does not exist");
        }
        if (auto why = alter_refusal(*old, *altered); !why.empty()) {
            throw schema_change_error("cannot alter " + qualified(keyspace, table) + ": " + why);
        }
        co_await apply_schema_mutations(schema_tables::table_mutations(*altered, next_schema_timestamp(), old.get()));
        auto install = [altered](database& db) { return db.replace_table_local(altered->id(), altered); };
        co_await _container->invoke_on_all(install);
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
    co_return altered;
}

future<> database::drop_table(std::string keyspace, std::string table) {
    if (this_shard_id() != 0) {
        auto hop = [keyspace, table](database& db) { return db.drop_table(keyspace, table); };
        co_return co_await _container->invoke_on(0, hop);
    }
    auto decide = [&, this]() -> future<> {
        auto s = find_schema(keyspace, table);
        if (!s || schema_tables::is_system_keyspace(keyspace)) {
            throw schema_change_error("table " + qualified(keyspace, table) + " does not exist");
        }
        co_await apply_schema_mutations(schema_tables::drop_table_mutations(keyspace, table, next_schema_timestamp()));
        std::string tag = _cfg.auto_snapshot ? "dropped-" + std::to_string(now_millis()) + "-" + table : std::string();
        auto id = s->id();
        auto remove = [id, tag](database& db) { return db.remove_table_local(id, tag); };
        co_await _container->invoke_on_all(remove);
        if (!tag.empty()) {
            co_await write_snapshot_metadata(s, tag, std::vector<std::string>());
        }
        co_await notify_schema_changed();
    };
    co_await serialized(_schema_sem, decide);
}

future<> database::truncate(std::string keyspace, std::string table) {
    if (this_shard_id() != 0) {
        auto hop = [keyspace, table](database& db) { return db.truncate(keyspace, table); };
        co_return co_await _container->invoke_on(0, hop);
    }
    auto decide = [&, this]() -> future<> {
        auto s = find_schema(keyspace, table);
        if (!s) {
            throw schema_change_error("table " + qualified(keyspace, table) + " does not exist");
        }
        if (schema_tables::is_system_keyspace(keyspace)) {
            // Its record would go to system.local, paused if it were the table truncated; the schema tables hold
            // the schema.
            throw schema_change_error("cannot truncate system table " + qualified(keyspace, table));
        }
        // Cassandra's order: the truncation record (each shard's commitlog position) is durable before the data
        // goes, so that after a crash either the old table is whole or replay skips what was truncated.
        std::string tag = _cfg.auto_snapshot ? "truncated-" + std::to_string(now_millis()) + "-" + table : std::string();
        auto id = s->id();
        schema_tables::truncation_record record;
        record.truncated_at_millis = now_millis();
        std::exception_ptr err;
        try {
            for (unsigned shard = 0; shard < smp::count(); ++shard) {
                auto prepare = [id, tag](database& db) { return db.prepare_truncate_local(id, tag); };
                record.positions.push_back(co_await _container->invoke_on(shard, prepare));
            }
            std::vector<mutation> ms;
            ms.push_back(schema_tables::truncation_record_mutation(id, record, next_schema_timestamp()));
            co_await apply_schema_mutations(std::move(ms));
        } catch (...) {
            err = std::current_exception();
        }
        // Without the record the old version resumes everywhere; with it, every shard truncates.
        bool abort = err != nullptr;
        for (unsigned shard = 0; shard < smp::count(); ++shard) {
            auto position = shard < record.positions.size() ? record.positions[shard] : commitlog::replay_position{};
            auto finish = [id, position, abort](database& db) { return db.finish_truncate_local(id, position, abort); };
            try {
                co_await _container->invoke_on(shard, finish);
            } catch (...) {
                // Every shard still resumes its table; the first error is reported.
                if (!err) {
                    err = std::current_exception();
                }
            }
        }
        if (err) {
            std::rethrow_exception(err);
        }
        if (!tag.empty()) {
            co_await write_snapshot_metadata(s, tag, std::vector<std::string>());
        }
    };
    co_await serialized(_schema_sem, decide);
}

// ---- this shard's part of table changes ----

future<> database::remove_table_local(table_id id, std::string snapshot_tag) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        co_return;
    }
    auto entry = std::move(it->second);
    _tables.erase(it);
    _truncated_at.erase(id);
    auto& s = entry->t->schema();
    _by_name.erase({s->keyspace(), s->table()});
    // Writes waiting on a replacement find no table now; those between their commitlog add and their apply hold
    // the entry's gate, which dies with it.
    entry->resumed.broadcast();
    co_await entry->writes->close();
    auto t = entry->t;
    if (!snapshot_tag.empty()) {
        co_await t->flush();
        std::vector<std::string> linked;
        co_await snapshot_table_local(*t, snapshot_tag, linked);
    }
    co_await t->stop();
    for (auto& d : t->sstable_descriptors()) {
        co_await sstables::delete_sstable_files(d);
    }
}

future<> database::replace_table_local(table_id id, schema_ptr s) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        throw no_such_table("no table " + qualified(s->keyspace(), s->table()) + " on shard " +
                            std::to_string(this_shard_id()));
    }
    auto& e = *it->second;
    e.paused = true;
    auto old = e.t;
    std::exception_ptr err;
    try {
        // Writes already past their commitlog add land in the old version before it is flushed.
        co_await e.writes->close();
        e.writes = std::make_unique<gate>();
        // Everything the old version holds goes to sstables, so the new version reads it from there (sstables of
        // the old columns are upgraded as they are read).
        co_await old->flush();
        co_await old->stop();
        auto fresh = make_table(s);
        co_await fresh->start();
        e.t = std::move(fresh);
    } catch (...) {
        err = std::current_exception();
    }
    e.paused = false;
    e.resumed.broadcast();
    if (err) {
        std::rethrow_exception(err);
    }
}

future<commitlog::replay_position> database::prepare_truncate_local(table_id id, std::string snapshot_tag) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        throw no_such_table("no table " + utils::to_string(id) + " on shard " + std::to_string(this_shard_id()));
    }
    auto& e = *it->second;
    e.paused = true;
    // Its compactions stop now (they resume if the truncation is aborted, at the next flush).
    co_await _compaction_manager->stop_compactions(*e.t, "the table is truncated");
    // Writes already past their commitlog add land in the old version; later ones wait for finish.
    co_await e.writes->close();
    e.writes = std::make_unique<gate>();
    if (!snapshot_tag.empty()) {
        co_await e.t->flush();
        std::vector<std::string> linked;
        co_await snapshot_table_local(*e.t, snapshot_tag, linked);
    }
    co_return _commitlog->last_position();
}

future<> database::finish_truncate_local(table_id id, commitlog::replay_position position, bool abort) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        co_return;
    }
    auto& e = *it->second;
    if (!e.paused) {
        co_return;  // not prepared on this shard (a failure before it)
    }
    std::exception_ptr err;
    if (!abort) {
        try {
            auto old = e.t;
            _truncated_at[id] = position;
            co_await old->stop();
            for (auto& d : old->sstable_descriptors()) {
                co_await sstables::delete_sstable_files(d);
            }
            // The dropped memtables' entries no longer pin their segments.
            co_await _commitlog->discard_completed_segments(id, position);
            auto fresh = make_table(old->schema());
            co_await fresh->start();
            e.t = std::move(fresh);
        } catch (...) {
            err = std::current_exception();
        }
    }
    e.paused = false;
    e.resumed.broadcast();
    if (err) {
        std::rethrow_exception(err);
    }
}

} // namespace reef
