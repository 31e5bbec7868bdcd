// `reef sstable dump-data --schema`: a table's CQL schema checked against an sstable's serialization header
// (the header names and types the columns the dump prints; the schema must agree with it, column by column).
#pragma once

#include "schema/schema.hh"
#include "sstables/serialization_header.hh"

#include <string>

namespace reef::tools {

// Throws std::invalid_argument naming the sstable (file) and the first column where s and h disagree: the
// partition key's type, the clustering columns' number and types (as compared: reversed for DESC), and every
// static and regular column the header lists (it must be in s, of the same kind and type). Columns of s that
// the header lacks are fine: they were added after the sstable was written.
void check_schema_against_header(const schema& s, const sstables::serialization_header& h, const std::string& file);

// The last CREATE TABLE of the CQL script at path; throws std::invalid_argument naming the file when it
// cannot be read or has no table, and the parser's error (line, column) when it is not valid CQL.
schema_ptr load_schema_file(const std::string& path);

} // namespace reef::tools
