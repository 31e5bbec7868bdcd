// See permit_checked_source.hh.
#include "reader/permit_checked_source.hh"

namespace reef {

namespace {

class permit_checked_source final : public data_source_impl {
public:
    permit_checked_source(data_source src, reader_permit permit, std::string_view file)
        : _src(std::move(src)), _units(permit.consume_memory(0)), _permit(std::move(permit)), _file(file) {}

    future<temporary_buffer> get() override {
        _permit.check_timeout(_file);
        auto b = co_await _src.get();
        _units.reset(b.size());
        co_return b;
    }

    future<temporary_buffer> skip(uint64_t n) override {
        _permit.check_timeout(_file);
        auto b = co_await _src.skip(n);
        _units.reset(b.size());
        co_return b;
    }

    future<> close() override {
        _units.reset(0);
        return _src.close();
    }

private:
    data_source _src;
    reader_permit::resource_units _units;
    reader_permit _permit;
    std::string_view _file;
};

} // namespace

data_source make_permit_checked_source(data_source src, reader_permit permit, std::string_view file) {
    return data_source(std::make_unique<permit_checked_source>(std::move(src), std::move(permit), file));
}

} // namespace reef
