// validate-checksums. See sstable_validate.hh.
#include "tools/sstable_validate.hh"

#include "runtime/with_closeable.hh"
#include "sstables/components.hh"
#include "sstables/exceptions.hh"
#include "mutation/fragment_stream_validator.hh"
#include "runtime/file.hh"
#include "sstables/checksum.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "sstables/partitioner.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "utils/json_writer.hh"

#include <fmt/format.h>

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
        return with_closeable(make_data_source(f, c, 0, c.data_length(), integrity_check::yes), [](data_source& src) -> future<> {
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

struct scan_counts {
    uint64_t partitions = 0;
    uint64_t rows = 0;
    uint64_t fragments = 0;
};

// Data.db's whole stream through fragment_stream_validator; a broken rule is reported as the sstable's.
future<> check_order(const descriptor& d, const sstable_components& c, scan_counts& n) {
    auto stats_path = d.filename(component_type::statistics);
    auto st = co_await load_statistics(d);
    auto data_path = d.filename(component_type::data);
    auto header = std::make_shared<const serialization_header>(*st.header);
    auto s = schema_from_header(*header);
    mx_fragment_consumer::token_function token;
    try {
        token = partitioner_token_function(st.validation ? st.validation->partitioner : "");
    } catch (const std::invalid_argument& e) {
        throw malformed_sstable_exception(stats_path, std::string("cannot check the partition order: ") + e.what());
    }
    auto f = co_await open_file_dma(data_path, open_flags::ro);
    // The reader owns the data source over f: it is closed first, then f.
    co_await with_closeable(std::move(f), [&](file& f) {
        auto src = make_data_source(f, c, 0, c.data_length(), integrity_check::yes);
        auto reader = make_mx_full_scan_reader(s, header, std::move(src), data_path, c.data_length(),
                                               dht::partition_range::full(), std::move(token));
        return with_closeable(std::move(reader), [&](mutation_reader& reader) -> future<> {
            fragment_stream_validator validator(*s);
            try {
                while (true) {
                    if (reader.is_buffer_empty()) {
                        if (reader.is_end_of_stream()) {
                            break;
                        }
                        co_await reader.fill_buffer();
                        continue;
                    }
                    auto frag = reader.pop_mutation_fragment();
                    validator(frag);
                    n.partitions += std::holds_alternative<partition_start>(frag);
                    n.rows += std::holds_alternative<clustering_row>(frag);
                    ++n.fragments;
                }
                validator.on_end_of_stream();
            } catch (const invalid_fragment_stream& e) {
                throw malformed_sstable_exception(data_path, e.what());
            }
        });
    });
}

} // namespace

future<std::string> validate_sstables(std::vector<descriptor> sstables) {
    scan_counts n;
    for (auto& d : sstables) {
        auto c = co_await load_components(d);
        co_await read_checked(c);
        if (c.digest) {
            co_await verify_digest(d.filename(component_type::data), *c.digest);
        }
        co_await check_order(d, c, n);
    }
    co_return fmt::format("{} sstable{} valid: checksums, digests, and the order of {} partitions and {} rows "
                          "({} fragments)\n",
                          sstables.size(), sstables.size() == 1 ? "" : "s", n.partitions, n.rows, n.fragments);
}

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
