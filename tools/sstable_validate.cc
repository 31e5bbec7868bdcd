// validate-checksums. See sstable_validate.hh.
#include "tools/sstable_validate.hh"

#include "runtime/file.hh"
#include "runtime/with_closeable.hh"
#include "sstables/components.hh"
#include "sstables/exceptions.hh"
#include "utils/json_writer.hh"

namespace reef::tools {

using namespace reef::sstables;

namespace {

struct validation {
    bool has_checksums = false;
    bool has_digest = false;
    bool valid_checksums = true;
    bool valid_digest = true;
    std::string error;
};

// Reads all of Data.db through its checked source: every chunk's CRC32 is checked on the way.
future<> read_checked(const sstable_components& c) {
    auto f = co_await open_file_dma(c.desc.filename(component_type::data), open_flags::ro);
    co_await with_closeable(std::move(f), [&](file& f) {
        return with_closeable(make_data_source(f, c, 0, c.data_length()), [](data_source& src) -> future<> {
            while (!(co_await src.get()).empty()) {
            }
        });
    });
}

future<validation> validate(const descriptor& d) {
    validation v;
    // A component that does not load is reported, not thrown: the other sstables still get checked.
    std::optional<sstable_components> c;
    try {
        c = co_await load_components(d);
    } catch (const malformed_sstable_exception& e) {
        v.valid_checksums = v.valid_digest = false;
        v.error = e.what();
        co_return v;
    }
    v.has_checksums = c->compression || c->crc;
    v.has_digest = bool(c->digest);
    try {
        co_await read_checked(*c);
    } catch (const malformed_sstable_exception& e) {
        v.valid_checksums = false;
        v.error = e.what();
    }
    if (c->digest) {
        try {
            co_await verify_digest(d.filename(component_type::data), *c->digest);
        } catch (const malformed_sstable_exception& e) {
            v.valid_digest = false;
            if (v.error.empty()) {
                v.error = e.what();
            }
        }
    }
    co_return v;
}

} // namespace

future<std::string> validate_checksums_json(std::vector<descriptor> sstables) {
    utils::json_writer w;
    w.begin_object();
    w.key("sstables").begin_object();
    for (auto& d : sstables) {
        auto v = co_await validate(d);
        w.key(d.filename(component_type::data)).begin_object();
        w.member("has_checksums", v.has_checksums);
        w.member("has_digest", v.has_digest);
        w.member("valid_checksums", v.valid_checksums);
        w.member("valid_digest", v.valid_digest);
        if (!v.error.empty()) {
            w.member("error", v.error);
        }
        w.end_object();
    }
    w.end_object();
    w.end_object();
    auto out = w.take();
    out += '\n';
    co_return out;
}

} // namespace reef::tools
