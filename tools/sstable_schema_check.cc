// See sstable_schema_check.hh.
#include "tools/sstable_schema_check.hh"

#include "cql/cql_parser.hh"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace reef::tools {

namespace {

const char* kind_name(column_kind k) {
    switch (k) {
    case column_kind::partition_key: return "a partition key column";
    case column_kind::clustering_key: return "a clustering column";
    case column_kind::static_column: return "a static column";
    case column_kind::regular_column: return "a regular column";
    }
    return "a column";
}

void check_columns(const schema& s, const std::vector<sstables::serialization_header_column>& cols, bool is_static,
                   const std::string& file) {
    auto wanted = is_static ? column_kind::static_column : column_kind::regular_column;
    for (auto& c : cols) {
        auto* def = s.find_column(c.name);
        if (!def) {
            throw std::invalid_argument(fmt::format("{}: the sstable has {} '{}' ({}) that the schema {}.{} lacks",
                                                    file, kind_name(wanted), c.name, c.type->cql_name(),
                                                    s.keyspace(), s.table()));
        }
        if (def->kind != wanted) {
            throw std::invalid_argument(fmt::format("{}: column '{}' is {} in the sstable but {} in the schema",
                                                    file, c.name, kind_name(wanted), kind_name(def->kind)));
        }
        if (def->type->class_name() != c.type->class_name()) {
            throw std::invalid_argument(fmt::format("{}: column '{}' is {} in the sstable but {} in the schema",
                                                    file, c.name, c.type->cql_name(), def->type->cql_name()));
        }
    }
}

} // namespace

void check_schema_against_header(const schema& s, const sstables::serialization_header& h, const std::string& file) {
    auto pk = s.partition_key_type();
    if (pk->class_name() != h.partition_key_type->class_name()) {
        throw std::invalid_argument(fmt::format("{}: the partition key ({}) is {} in the sstable but {} in the schema",
                                                file, s.partition_key().size() == 1 ? s.partition_key()[0].name : "composite",
                                                h.partition_key_type->class_name(), pk->class_name()));
    }
    auto ck = s.clustering_types();
    if (ck.size() != h.clustering_types.size()) {
        throw std::invalid_argument(fmt::format("{}: the sstable has {} clustering columns, the schema {}.{} has {}",
                                                file, h.clustering_types.size(), s.keyspace(), s.table(), ck.size()));
    }
    for (size_t i = 0; i < ck.size(); ++i) {
        if (ck[i]->class_name() != h.clustering_types[i]->class_name()) {
            throw std::invalid_argument(fmt::format("{}: clustering column '{}' is {} in the sstable but {} in the schema",
                                                    file, s.clustering_key()[i].name,
                                                    h.clustering_types[i]->class_name(), ck[i]->class_name()));
        }
    }
    check_columns(s, h.static_columns, true, file);
    check_columns(s, h.regular_columns, false, file);
}

schema_ptr load_schema_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw std::invalid_argument(fmt::format("cannot read the schema file {}", path));
    }
    std::stringstream text;
    text << in.rdbuf();
    cql_catalog catalog;
    try {
        parse_cql(text.str(), catalog);
    } catch (const std::exception& e) {
        throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
    }
    if (catalog.tables.empty()) {
        throw std::invalid_argument(fmt::format("{}: no CREATE TABLE statement", path));
    }
    return catalog.tables.back();
}

} // namespace reef::tools
