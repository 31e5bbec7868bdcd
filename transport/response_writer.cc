#include "transport/response_writer.hh"

#include "utils/big_endian.hh"

#include <stdexcept>

namespace reef::transport {

void response_writer::write_short(uint16_t v) {
    uint8_t b[2];
    utils::write_be_unchecked(b, v);
    _out.insert(_out.end(), b, b + 2);
}

void response_writer::write_int(int32_t v) {
    uint8_t b[4];
    utils::write_be_unchecked(b, v);
    _out.insert(_out.end(), b, b + 4);
}

void response_writer::write_long(int64_t v) {
    uint8_t b[8];
    utils::write_be_unchecked(b, v);
    _out.insert(_out.end(), b, b + 8);
}

void response_writer::write_string(std::string_view s) {
    if (s.size() > 0xffff) {
        throw std::length_error("a [string] of " + std::to_string(s.size()) + " bytes exceeds 65535");
    }
    write_short(uint16_t(s.size()));
    write_raw(to_bytes_view(s));
}

void response_writer::write_long_string(std::string_view s) {
    write_int(int32_t(s.size()));
    write_raw(to_bytes_view(s));
}

void response_writer::write_string_list(const std::vector<std::string>& l) {
    write_short(uint16_t(l.size()));
    for (auto& s : l) {
        write_string(s);
    }
}

void response_writer::write_bytes(const std::optional<bytes>& b) {
    if (!b) {
        write_int(-1);
        return;
    }
    write_int(int32_t(b->size()));
    write_raw(*b);
}

void response_writer::write_short_bytes(bytes_view b) {
    write_short(uint16_t(b.size()));
    write_raw(b);
}

void response_writer::write_string_multimap(const std::map<std::string, std::vector<std::string>>& m) {
    write_short(uint16_t(m.size()));
    for (auto& [k, v] : m) {
        write_string(k);
        write_string_list(v);
    }
}

void response_writer::write_type_option(const data_type& type) {
    auto t = type->without_reversal();
    auto native = [&](uint16_t id) { write_short(id); };
    auto custom = [&](const std::string& class_name) {
        write_short(0x0000);
        write_string(class_name);
    };
    switch (t->kind()) {
    case type_kind::ascii: return native(0x0001);
    case type_kind::bigint: return native(0x0002);
    case type_kind::blob: return native(0x0003);
    case type_kind::boolean: return native(0x0004);
    case type_kind::counter: return native(0x0005);
    case type_kind::decimal: return native(0x0006);
    case type_kind::double_: return native(0x0007);
    case type_kind::float_: return native(0x0008);
    case type_kind::int32: return native(0x0009);
    case type_kind::timestamp: return native(0x000B);
    case type_kind::uuid: return native(0x000C);
    case type_kind::text: return native(0x000D);
    case type_kind::varint: return native(0x000E);
    case type_kind::timeuuid: return native(0x000F);
    case type_kind::inet: return native(0x0010);
    case type_kind::date: return native(0x0011);
    case type_kind::time: return native(0x0012);
    case type_kind::smallint: return native(0x0013);
    case type_kind::tinyint: return native(0x0014);
    // v4 has no id for these: Cassandra sends their class names.
    case type_kind::duration: return custom("org.apache.cassandra.db.marshal.DurationType");
    case type_kind::empty: return custom("org.apache.cassandra.db.marshal.EmptyType");
    case type_kind::list:
        write_short(0x0020);
        return write_type_option(t->element_type());
    case type_kind::map:
        write_short(0x0021);
        write_type_option(t->key_type());
        return write_type_option(t->value_type());
    case type_kind::set:
        write_short(0x0022);
        return write_type_option(t->element_type());
    case type_kind::user: {
        auto& u = static_cast<const user_type_impl&>(*t);
        write_short(0x0030);
        write_string(u.keyspace());
        write_string(u.type_name());
        write_short(uint16_t(u.field_names().size()));
        for (size_t i = 0; i < u.field_names().size(); ++i) {
            write_string(u.field_names()[i]);
            write_type_option(u.field_types()[i]);
        }
        return;
    }
    case type_kind::tuple:
        write_short(0x0031);
        write_short(uint16_t(t->field_types().size()));
        for (auto& f : t->field_types()) {
            write_type_option(f);
        }
        return;
    // v4 has no vector id: a custom type, VectorType's class name, which drivers parse (v5 spec, "vector").
    case type_kind::vector:
    case type_kind::reversed:
    case type_kind::composite:
        return custom(t->class_name());
    }
    return custom(t->class_name());
}

namespace {

namespace rows_flags {
constexpr int32_t global_tables_spec = 0x0001;
constexpr int32_t has_more_pages = 0x0002;
constexpr int32_t no_metadata = 0x0004;
} // namespace rows_flags

bool shares_one_table(const std::vector<cql::column_spec>& cols) {
    if (cols.empty()) {
        return false;
    }
    for (auto& c : cols) {
        if (c.keyspace != cols.front().keyspace || c.table != cols.front().table) {
            return false;
        }
    }
    return true;
}

// The column specs after flags and counts: the global spec once, or each column's keyspace and table.
void write_column_specs(response_writer& w, const std::vector<cql::column_spec>& cols, bool global) {
    if (global) {
        w.write_string(cols.front().keyspace);
        w.write_string(cols.front().table);
    }
    for (auto& c : cols) {
        if (!global) {
            w.write_string(c.keyspace);
            w.write_string(c.table);
        }
        w.write_string(c.name);
        w.write_type_option(c.type);
    }
}

void write_rows_metadata(response_writer& w, const std::vector<cql::column_spec>& cols,
                         const std::optional<bytes>& paging_state, bool no_metadata) {
    bool global = !no_metadata && shares_one_table(cols);
    int32_t flags = (global ? rows_flags::global_tables_spec : 0) | (paging_state ? rows_flags::has_more_pages : 0) |
                    (no_metadata ? rows_flags::no_metadata : 0);
    w.write_int(flags);
    w.write_int(int32_t(cols.size()));
    if (paging_state) {
        w.write_bytes(*paging_state);
    }
    if (!no_metadata) {
        write_column_specs(w, cols, global);
    }
}

void write_prepared(response_writer& w, const cql::prepared_result& p) {
    w.write_short_bytes(p.id);
    bool global = shares_one_table(p.bind_variables);
    w.write_int(global ? rows_flags::global_tables_spec : 0);
    w.write_int(int32_t(p.bind_variables.size()));
    w.write_int(int32_t(p.partition_key_bind_indexes.size()));
    for (auto i : p.partition_key_bind_indexes) {
        w.write_short(i);
    }
    write_column_specs(w, p.bind_variables, global);
    write_rows_metadata(w, p.result_columns, std::nullopt, p.result_columns.empty());
}

const char* change_name(cql::schema_change::change_type c) {
    switch (c) {
    case cql::schema_change::change_type::created: return "CREATED";
    case cql::schema_change::change_type::updated: return "UPDATED";
    case cql::schema_change::change_type::dropped: return "DROPPED";
    }
    return "UPDATED";
}

const char* target_name(cql::schema_change::target_type t) {
    switch (t) {
    case cql::schema_change::target_type::keyspace: return "KEYSPACE";
    case cql::schema_change::target_type::table: return "TABLE";
    case cql::schema_change::target_type::type: return "TYPE";
    case cql::schema_change::target_type::function: return "FUNCTION";
    case cql::schema_change::target_type::aggregate: return "AGGREGATE";
    }
    return "KEYSPACE";
}

void write_schema_change(response_writer& w, const cql::schema_change& c) {
    w.write_string(change_name(c.change));
    w.write_string(target_name(c.target));
    w.write_string(c.keyspace);
    switch (c.target) {
    case cql::schema_change::target_type::keyspace:
        break;
    case cql::schema_change::target_type::table:
    case cql::schema_change::target_type::type:
        w.write_string(c.name);
        break;
    case cql::schema_change::target_type::function:
    case cql::schema_change::target_type::aggregate:
        w.write_string(c.name);
        w.write_string_list(c.argument_types);
        break;
    }
}

const char* write_type_name(cql::write_type t) {
    switch (t) {
    case cql::write_type::simple: return "SIMPLE";
    case cql::write_type::batch: return "BATCH";
    case cql::write_type::unlogged_batch: return "UNLOGGED_BATCH";
    case cql::write_type::counter: return "COUNTER";
    case cql::write_type::batch_log: return "BATCH_LOG";
    case cql::write_type::cas: return "CAS";
    case cql::write_type::view: return "VIEW";
    case cql::write_type::cdc: return "CDC";
    }
    return "SIMPLE";
}

} // namespace

bytes encode_result(const cql::result_message& m, bool skip_metadata) {
    response_writer w;
    std::visit(
        [&](const auto& r) {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, cql::void_result>) {
                w.write_int(0x0001);
            } else if constexpr (std::is_same_v<T, cql::result_set>) {
                w.write_int(0x0002);
                write_rows_metadata(w, r.metadata().columns, r.metadata().paging_state, skip_metadata);
                w.write_int(int32_t(r.row_count()));
                w.write_raw(r.encoded_rows());
            } else if constexpr (std::is_same_v<T, cql::set_keyspace_result>) {
                w.write_int(0x0003);
                w.write_string(r.keyspace);
            } else if constexpr (std::is_same_v<T, cql::prepared_result>) {
                w.write_int(0x0004);
                write_prepared(w, r);
            } else {
                static_assert(std::is_same_v<T, cql::schema_change>);
                w.write_int(0x0005);
                write_schema_change(w, r);
            }
        },
        m);
    return w.release();
}

bytes encode_error(const cql::cql_error& e) {
    response_writer w;
    w.write_int(int32_t(e.code()));
    std::string_view msg = e.what();
    w.write_string(msg.substr(0, 0xffff));
    auto& d = e.details();
    switch (e.code()) {
    case cql::error_code::unavailable:
        w.write_consistency(d.consistency);
        w.write_int(d.block_for);
        w.write_int(d.received);
        break;
    case cql::error_code::write_timeout:
        w.write_consistency(d.consistency);
        w.write_int(d.received);
        w.write_int(d.block_for);
        w.write_string(write_type_name(d.wtype));
        break;
    case cql::error_code::read_timeout:
        w.write_consistency(d.consistency);
        w.write_int(d.received);
        w.write_int(d.block_for);
        w.write_byte(d.data_present ? 1 : 0);
        break;
    case cql::error_code::read_failure:
        w.write_consistency(d.consistency);
        w.write_int(d.received);
        w.write_int(d.block_for);
        w.write_int(1);
        w.write_byte(d.data_present ? 1 : 0);
        break;
    case cql::error_code::function_failure:
        w.write_string(d.keyspace);
        w.write_string(d.table);
        w.write_string_list({});
        break;
    case cql::error_code::write_failure:
        w.write_consistency(d.consistency);
        w.write_int(d.received);
        w.write_int(d.block_for);
        w.write_int(1);
        w.write_string(write_type_name(d.wtype));
        break;
    case cql::error_code::already_exists:
        w.write_string(d.keyspace);
        w.write_string(d.table);
        break;
    case cql::error_code::unprepared:
        w.write_short_bytes(d.unprepared_id);
        break;
    default:
        break;
    }
    return w.release();
}

bytes encode_error(std::exception_ptr ex) {
    try {
        std::rethrow_exception(ex);
    } catch (const cql::cql_error& e) {
        return encode_error(e);
    } catch (const std::exception& e) {
        return encode_error(cql::cql_error(cql::error_code::server_error, e.what()));
    } catch (...) {
        return encode_error(cql::cql_error(cql::error_code::server_error, "unknown exception"));
    }
}

bytes encode_supported(const std::map<std::string, std::vector<std::string>>& options) {
    response_writer w;
    w.write_string_multimap(options);
    return w.release();
}

bytes encode_schema_change_event(const cql::schema_change& c) {
    response_writer w;
    w.write_string("SCHEMA_CHANGE");
    write_schema_change(w, c);
    return w.release();
}

} // namespace reef::transport
