// Tests of `reef sstable validate`: every corpus sstable is valid; a copy with a flipped Data.db byte, and
// sstables written (by our writer, checksums and all) with partitions or rows out of order, are each refused
// with a malformed_sstable_exception naming Data.db and the problem.
#include "db/memtable.hh"
#include "mutation/mutation.hh"
#include "reader/mutation_reader.hh"
#include "sstables/exceptions.hh"
#include "sstables/writer.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"
#include "tools/sstable_validate.hh"

#include <filesystem>
#include <fstream>

#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::sstables;

namespace {

// The error validate gives for d, or "" when it passes.
future<std::string> validate_error(descriptor d) {
    std::vector<descriptor> one{d};
    try {
        co_await tools::validate_sstables(one);
    } catch (const malformed_sstable_exception& e) {
        co_return std::string(e.what());
    }
    co_return std::string();
}

schema_ptr int_schema() {
    return schema_builder("ks", "t")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", int32_type(), column_kind::regular_column)
        .build();
}

bytes int_bytes(int32_t v) {
    return bytes{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

dht::decorated_key key_of(int32_t v) {
    auto b = int_bytes(v);
    return dht::decorated_key(partition_key(std::string(b.begin(), b.end())));
}

clustering_row row_of(int32_t ck) {
    clustering_row r{clustering_key_prefix({int_bytes(ck)}), row_marker{1000}, {}, {}};
    r.cells.apply(0, atomic_cell::make_live(1000, std::string(4, 'x')));
    return r;
}

// Writes the fragments as they are into an uncompressed sstable (the writer checks the partitions' Murmur3
// order, not the rows').
// partitioner: what Statistics.db says (the writer orders partitions by Murmur3 tokens whatever it says).
future<descriptor> write_as_is(const std::string& dir, int generation, std::vector<mutation_fragment> frags,
                               std::string partitioner = "org.apache.cassandra.dht.Murmur3Partitioner") {
    auto s = int_schema();
    descriptor d{dir, sstable_version::me, std::to_string(generation), "big"};
    auto reader = make_fragment_vector_reader(s, std::move(frags));
    writer_options o;
    o.compression.reset();
    o.partitioner = std::move(partitioner);
    co_await write_sstable(reader, s, d, o);
    co_await reader.close();
    co_return d;
}

} // namespace

REEF_TEST_CASE(test_validate_corpus_is_valid) {
    auto all = reef::testing::all_test_sstables();
    std::vector<descriptor> descs;
    for (auto& t : all) {
#ifdef REEF_DEBUG
        // The large sets take minutes under the sanitizers; dev mode checks them.
        if (std::filesystem::file_size(t.path(component_type::data)) > (1u << 20)) {
            continue;
        }
#endif
        auto error = co_await validate_error(t.desc);
        BOOST_CHECK_MESSAGE(error.empty(), t.name() << ": " << error);
        descs.push_back(t.desc);
    }
    // The summary of several sstables at once: one line.
    descs.resize(std::min<size_t>(descs.size(), 3));
    if (!descs.empty()) {
        auto summary = co_await tools::validate_sstables(descs);
        BOOST_CHECK_MESSAGE(summary.starts_with(std::to_string(descs.size()) + " sstables valid"), summary);
        BOOST_CHECK_EQUAL(std::count(summary.begin(), summary.end(), '\n'), 1);
    }
}

// Every checked (compressed, or with CRC.db) corpus sstable, one byte of Data.db flipped.
REEF_TEST_CASE(test_validate_refuses_a_flipped_byte) {
    size_t tried = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        if (!t.has(component_type::compression_info) && !t.has(component_type::crc)) {
            continue;
        }
#ifdef REEF_DEBUG
        if (std::filesystem::file_size(t.path(component_type::data)) > (256u << 10)) {
            continue;
        }
#endif
        ++tried;
        reef::testing::tmpdir dir;
        auto d = t.desc;
        d.directory = dir.path();
        for (auto& e : std::filesystem::directory_iterator(std::filesystem::path(t.path(component_type::data)).parent_path())) {
            auto name = e.path().filename().string();
            if (name.starts_with(std::string(to_string(d.version)) + "-" + d.generation + "-")) {
                std::filesystem::copy_file(e.path(), std::filesystem::path(dir.path()) / name);
            }
        }
        BOOST_REQUIRE_EQUAL(co_await validate_error(d), "");
        auto data = reef::testing::read_file(d.filename(component_type::data));
        data[data.size() / 2] ^= 0x20;
        {
            std::ofstream out(d.filename(component_type::data), std::ios::binary | std::ios::trunc);
            out.write(data.data(), std::streamsize(data.size()));
        }
        auto error = co_await validate_error(d);
        BOOST_CHECK_MESSAGE(error.find(d.filename(component_type::data)) != std::string::npos, t.name() << ": " << error);
    }
    BOOST_TEST_MESSAGE(tried << " corrupted copies refused");
}

REEF_TEST_CASE(test_validate_refuses_disorder) {
    reef::testing::tmpdir dir;
    // Two keys in Murmur3 order (a, b) whose ByteOrderedPartitioner order (their bytes) is the opposite: an
    // sstable that says it is byte-ordered but holds them as a, b is out of order.
    std::optional<dht::decorated_key> ka, kb;
    for (int32_t i = 2; !ka && i < 100; ++i) {
        if (key_of(i) < key_of(1)) {
            ka = key_of(i);
            kb = key_of(1);
        }
    }
    BOOST_REQUIRE(ka);
    auto a = *ka, b = *kb;
    // GCC 12 coroutines: no initializer lists inside a co_await expression; the streams are built first.
    std::vector<mutation_fragment> in_order{partition_start{a, {}}, row_of(1), row_of(2), partition_end{},
                                            partition_start{b, {}}, row_of(1), partition_end{}};
    std::vector<mutation_fragment> byte_disordered{partition_start{a, {}}, row_of(1), partition_end{},
                                                   partition_start{b, {}}, row_of(1), partition_end{}};
    std::vector<mutation_fragment> rows_swapped{partition_start{a, {}}, row_of(2), row_of(1), partition_end{}};
    std::vector<mutation_fragment> row_twice{partition_start{a, {}}, row_of(1), row_of(1), partition_end{}};
    // In order: valid.
    auto good = co_await write_as_is(dir.path(), 1, std::move(in_order));
    BOOST_CHECK_EQUAL(co_await validate_error(good), "");
    // Partitions out of the order of the partitioner Statistics.db names.
    auto swapped = co_await write_as_is(dir.path(), 2, std::move(byte_disordered),
                                        "org.apache.cassandra.dht.ByteOrderedPartitioner");
    auto e1 = co_await validate_error(swapped);
    BOOST_CHECK_MESSAGE(e1.find("partition out of order") != std::string::npos, e1);
    BOOST_CHECK_MESSAGE(e1.find(swapped.filename(component_type::data)) != std::string::npos, e1);
    // Rows out of clustering order, and a row twice.
    auto rows = co_await write_as_is(dir.path(), 3, std::move(rows_swapped));
    auto e2 = co_await validate_error(rows);
    BOOST_CHECK_MESSAGE(e2.find("position goes backwards") != std::string::npos, e2);
    auto twice = co_await write_as_is(dir.path(), 4, std::move(row_twice));
    auto e3 = co_await validate_error(twice);
    BOOST_CHECK_MESSAGE(e3.find("two rows with the same key") != std::string::npos, e3);
}
