// nodetool_format: the pieces of Cassandra's nodetool text that Java formats, re-done in C++ for `reef nodetool`.
// Promises: the same characters as Cassandra 5.0's FileUtils.stringifyFileSize, String.format("%.Nf"), TableBuilder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reef::tools::nodetool {

// FileUtils.stringifyFileSize: "0 bytes", "1023 bytes", "1 KiB", "1.5 KiB", "1.43 MiB", "2.27 TiB" (DecimalFormat
// "#.##", half-even; a unit from 1024 of it on).
std::string file_size(double bytes);

// FBUtilities.prettyPrintMemory: "0B", "1023B", "1.500KiB", "1.465MiB", ... "5.000TiB" (three decimals from 1024 on).
std::string pretty_memory(int64_t bytes);

// String.format("%.<prec>f", v) as Java does it: the shortest digits of v (Double.toString's) rounded half-up, so
// 0.125 gives "0.13" where printf gives "0.12"; "NaN", "Infinity".
std::string java_fixed(double v, int prec);

// Double.toString(v) ("0.0", "1.5E-4", "NaN").
std::string java_double(double v);

// TableBuilder: rows of cells, each column padded to its widest cell (the last one too), columns joined by a
// delimiter (a space unless given), one line per row.
class text_table {
public:
    explicit text_table(std::string delimiter = " ") : _delimiter(std::move(delimiter)) {}
    void add(std::vector<std::string> row) { _rows.push_back(std::move(row)); }
    bool empty() const noexcept { return _rows.empty(); }
    std::string str() const;

private:
    std::string _delimiter;
    std::vector<std::vector<std::string>> _rows;
};

} // namespace reef::tools::nodetool
