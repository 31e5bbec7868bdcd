// See permit_checked_source.hh.
#include "reader/permit_checked_source.hh"

namespace reef {

namespace {

class permit_checked_source final : public data_source_impl {
public:
    permit_checked_source(data_source src, reader_permit permit, std::string_view file)
        : _src(std::move(src)), _units(permit.consume_memory(0)), _permit(std::move(permit)), _file(file) {}

    // Not coroutines: a buffer the source has ready comes back ready, with no frame made for it.
    future<temporary_buffer> get() override {
        try {
            _permit.check_timeout(_file);
        } catch (...) {
            return make_exception_future<temporary_buffer>(std::current_exception());
        }
        return charged(_src.get());
    }

    future<temporary_buffer> skip(uint64_t n) override {
        try {
            _permit.check_timeout(_file);
        } catch (...) {
            return make_exception_future<temporary_buffer>(std::current_exception());
        }
        return charged(_src.skip(n));
    }

    future<> close() override {
        _units.reset(0);
        return _src.close();
    }

private:
    // The buffer f gives, its bytes charged to the permit in place of the last one's.
    future<temporary_buffer> charged(future<temporary_buffer> f) {
        if (!f.available()) {
            return charged_later(std::move(f));
        }
        try {
            auto b = f.await_resume();
            _units.reset(b.size());
            return make_ready_future<temporary_buffer>(std::move(b));
        } catch (...) {
            return make_exception_future<temporary_buffer>(std::current_exception());
        }
    }
    future<temporary_buffer> charged_later(future<temporary_buffer> f) {
        auto b = co_await std::move(f);
        _units.reset(b.size());
        co_return b;
    }

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
