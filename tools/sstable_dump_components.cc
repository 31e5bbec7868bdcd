// dump-index, dump-summary, dump-compression-info. See sstable_dump_components.hh.
#include "tools/sstable_dump_components.hh"

#include "mutation/token.hh"
#include "schema/value_format.hh"
#include "sstables/components.hh"
#include "sstables/index_entry.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "sstables/toc.hh"
#include "utils/json_writer.hh"

namespace reef::tools {

using namespace reef::sstables;
using utils::json_writer;

namespace {

// What the serialization header tells about keys, when Statistics.db is readable.
struct key_types {
    data_type partition_key;
    std::vector<data_type> clustering;
    bool murmur3 = false;
    bool known = false;
};

future<key_types> read_key_types(const descriptor& d) {
    key_types k;
    try {
        auto st = co_await load_statistics(d);
        if (st.header) {
            k.partition_key = st.header->partition_key_type;
            k.clustering = st.header->clustering_types;
            k.known = true;
        }
        k.murmur3 = st.validation && st.validation->partitioner.ends_with("Murmur3Partitioner");
    } catch (const std::exception&) {
        // Keys print raw: the index can be dumped without Statistics.db (or with one we cannot read yet).
    }
    co_return k;
}

void write_key(json_writer& w, std::string_view key, const key_types& k) {
    auto bytes = to_bytes_view(key);
    w.begin_object(true);
    if (k.murmur3) {
        w.member("token", dht::murmur3_token(key).to_string());
    }
    w.member("raw", hex_encode(bytes));
    if (k.known && k.partition_key) {
        try {
            w.member("value", k.partition_key->to_string(bytes));
        } catch (const std::exception&) {
            // A key that does not parse with the header's type stays raw.
        }
    }
    w.end_object();
}

void write_deletion_time(json_writer& w, const deletion_time& d) {
    w.begin_object(true);
    if (d.live()) {
        w.member("live", true);
    } else {
        w.member("timestamp", d.marked_for_delete_at);
        w.member("deletion_time", d.local_deletion_time);
    }
    w.end_object();
}

void write_bound(json_writer& w, const clustering_bound& b, const key_types& k) {
    w.begin_object(true);
    w.member("kind", to_string(b.kind));
    w.key("values").begin_array(true);
    for (size_t i = 0; i < b.prefix.size(); ++i) {
        auto v = b.prefix.component(i);
        if (i < k.clustering.size()) {
            try {
                w.value(k.clustering[i]->to_string(v));
                continue;
            } catch (const std::exception&) {
            }
        }
        w.value(hex_encode(v));
    }
    w.end_array();
    w.end_object();
}

template <typename Fn>
future<std::string> for_each_sstable(std::vector<descriptor> sstables, Fn fn) {
    json_writer w;
    w.begin_object();
    w.key("sstables").begin_object();
    for (auto& d : sstables) {
        w.key(d.filename(component_type::data));
        co_await fn(w, d);
    }
    w.end_object();
    w.end_object();
    auto out = w.take();
    out += '\n';
    co_return out;
}

future<> dump_index(json_writer& w, const descriptor& d) {
    auto k = co_await read_key_types(d);
    auto name = d.filename(component_type::index);
    auto bytes = co_await read_entire_file(name);
    auto entries = parse_index_entries(bytes, d.version, name);
    w.begin_array();
    for (auto& e : entries) {
        w.begin_object();
        w.key("key");
        write_key(w, e.key.view(), k);
        w.member("pos", e.data_position);
        if (e.promoted) {
            auto& pi = *e.promoted;
            w.key("promoted_index").begin_object();
            w.member("header_length", pi.partition_header_length);
            w.key("partition_deletion");
            write_deletion_time(w, pi.partition_deletion);
            w.key("blocks").begin_array();
            if (k.known) {
                for (auto& b : pi.all_blocks(k.clustering, d.version, name)) {
                    w.begin_object();
                    w.key("first");
                    write_bound(w, b.first, k);
                    w.key("last");
                    write_bound(w, b.last, k);
                    w.member("offset", b.offset);
                    w.member("width", b.width);
                    if (b.end_open_marker) {
                        w.key("end_open_marker");
                        write_deletion_time(w, *b.end_open_marker);
                    }
                    w.end_object();
                }
            }
            w.end_array();
            w.key("offsets").begin_array(true);
            for (auto o : pi.offsets) {
                w.value(o);
            }
            w.end_array();
            w.end_object();
        }
        w.end_object();
    }
    w.end_array();
}

future<> dump_summary(json_writer& w, const descriptor& d) {
    auto k = co_await read_key_types(d);
    auto c = co_await load_components(d);
    auto& s = c.summary;
    w.begin_object();
    w.member("rebuilt_from_index", c.summary_rebuilt);
    w.key("header").begin_object();
    w.member("min_index_interval", s.min_index_interval);
    w.member("size", uint64_t(s.entries.size()));
    w.member("sampling_level", s.sampling_level);
    w.member("size_at_full_sampling", s.size_at_full_sampling);
    w.end_object();
    w.key("entries").begin_array();
    for (auto& e : s.entries) {
        w.begin_object(true);
        w.key("key");
        write_key(w, e.key, k);
        w.member("position", e.index_position);
        w.end_object();
    }
    w.end_array();
    w.key("first_key");
    write_key(w, s.first_key, k);
    w.key("last_key");
    write_key(w, s.last_key, k);
    w.end_object();
}

future<> dump_compression_info(json_writer& w, const descriptor& d) {
    auto c = co_await load_components(d);
    if (!c.compression) {
        w.begin_object().member("compressed", false).end_object();
        co_return;
    }
    auto& ci = *c.compression;
    w.begin_object();
    w.member("name", ci.compressor_class);
    w.key("options").begin_object(true);
    for (auto& [key, value] : ci.options) {
        w.member(key, value);
    }
    w.end_object();
    w.member("chunk_len", ci.chunk_length);
    if (has_max_compressed_length(d.version)) {
        w.member("max_compressed_length", ci.max_compressed_length);
    }
    w.member("data_len", ci.data_length);
    w.key("offsets").begin_array(true);
    for (auto o : ci.chunk_offsets) {
        w.value(o);
    }
    w.end_array();
    w.end_object();
}

} // namespace

future<std::string> dump_index_json(std::vector<descriptor> sstables) {
    return for_each_sstable(std::move(sstables), dump_index);
}

future<std::string> dump_summary_json(std::vector<descriptor> sstables) {
    return for_each_sstable(std::move(sstables), dump_summary);
}

future<std::string> dump_compression_info_json(std::vector<descriptor> sstables) {
    return for_each_sstable(std::move(sstables), dump_compression_info);
}

} // namespace reef::tools
