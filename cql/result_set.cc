#include "cql/result_message.hh"

#include "utils/big_endian.hh"

#include <stdexcept>

namespace reef::cql {

void result_set::add_row(const std::vector<std::optional<bytes>>& cells) {
    if (cells.size() != column_count() || _cells_in_row != 0) {
        throw std::logic_error("result_set::add_row: row of " + std::to_string(cells.size()) + " cells, expected " +
                               std::to_string(column_count()));
    }
    for (const auto& c : cells) {
        add_cell(c ? std::optional<bytes_view>(*c) : std::nullopt);
    }
    end_row();
}

void result_set::add_cell(const std::optional<bytes_view>& cell) {
    if (_cells_in_row == column_count()) {
        throw std::logic_error("result_set::add_cell: row already has " + std::to_string(column_count()) + " cells");
    }
    uint8_t len[4];
    int32_t n = cell ? int32_t(cell->size()) : -1;
    utils::write_be_unchecked<int32_t>(reinterpret_cast<char*>(len), n);
    _encoded.insert(_encoded.end(), len, len + 4);
    if (cell) {
        _encoded.insert(_encoded.end(), cell->begin(), cell->end());
    }
    ++_cells_in_row;
}

void result_set::end_row() {
    if (_cells_in_row != column_count()) {
        throw std::logic_error("result_set::end_row: row of " + std::to_string(_cells_in_row) + " cells, expected " +
                               std::to_string(column_count()));
    }
    _cells_in_row = 0;
    ++_rows;
}

std::vector<std::vector<std::optional<bytes>>> result_set::rows() const {
    std::vector<std::vector<std::optional<bytes>>> out;
    out.reserve(_rows);
    size_t pos = 0;
    for (size_t r = 0; r < _rows; ++r) {
        auto& row = out.emplace_back();
        row.reserve(column_count());
        for (size_t c = 0; c < column_count(); ++c) {
            int32_t n = utils::read_be_unchecked<int32_t>(_encoded.data() + pos);
            pos += 4;
            if (n < 0) {
                row.emplace_back(std::nullopt);
            } else {
                row.emplace_back(bytes(_encoded.begin() + pos, _encoded.begin() + pos + n));
                pos += n;
            }
        }
    }
    return out;
}

} // namespace reef::cql
