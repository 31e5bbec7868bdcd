// open_sstable: an opened sstable holds what was written (timestamp bounds, the bloom filter's keys, every partition
// through read_handles()), and an open that fails half-way (a summary pointing past Index.db's end) closes the files it
// had opened and names the bad component. A reader of a shared sstable keeps it, and holds its reader gate until
// the reader closes.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "sstables/sstable.hh"
#include "sstables/shared_sstable_readers.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/memtable_sstable.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

// 20 partitions of `rows` rows each, generated from seed, written as one sstable.
future<descriptor> write_twenty_partitions(const tmpdir& dir, const schema_ptr& s, uint64_t seed, int rows) {
    mutation_generator g(s, seed);
    auto mt = std::make_shared<memtable>(s);
    for (int p = 0; p < 20; ++p) {
        mt->apply(with_typed_values(s, g.make(pkey(p), rows)));
    }
    co_return co_await write_memtable_sstable(dir, s, mt, 1);
}

size_t open_fds() {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        (void)e;
        ++n;
    }
    return n;
}

} // namespace

REEF_TEST_CASE(opened_sstable_holds_what_was_written) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        BOOST_TEST_CONTEXT("seed " << seed) {
            tmpdir dir;
            auto s = random_test_wide_schema();
            mutation_generator g(s, seed);
            auto mt = std::make_shared<memtable>(s);
            int partitions = g.rnd(1, 60);
            for (int p = 0; p < partitions; ++p) {
                mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), g.rnd(1, 5))));
            }
            auto d = co_await write_memtable_sstable(dir, s, mt, 1);
            cache::cache_tracker tracker(size_t(64) << 20);
            auto sst = co_await open_sstable(d, tracker);
            BOOST_CHECK_EQUAL(sst->min_timestamp(), mt->min_timestamp());
            BOOST_CHECK_EQUAL(sst->max_timestamp(), mt->max_timestamp());
            BOOST_CHECK_EQUAL(sst->summary().points.size(), mt->partitions().size());
            for (auto& [k, p] : mt->partitions()) {
                BOOST_CHECK(sst->may_contain(k));
            }
            // Readers named, not built inside the co_await: coroutine rule 2.
            auto got_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), read_options{});
            auto got = co_await read_and_close(std::move(got_reader));
            auto expected_reader = make_memtable_reader(mt, s, read_options{});
            auto expected = co_await read_and_close(std::move(expected_reader));
            BOOST_CHECK(canonical_mutations(s, got, false) == canonical_mutations(s, expected, false));
            co_await sst->close();
        }
    }
}

REEF_TEST_CASE(failed_open_closes_its_files) {
    tmpdir dir;
    auto s = random_test_wide_schema();
    auto d = co_await write_twenty_partitions(dir, s, 7, 2);
    // Index.db cut short: the summary's later entries point past its end, found once Data.db and Index.db are open.
    std::filesystem::resize_file(d.filename(component_type::index), 1);
    cache::cache_tracker tracker(size_t(64) << 20);
    auto before = open_fds();
    std::string error;
    try {
        co_await open_sstable(d, tracker);
    } catch (const malformed_sstable_exception& e) {
        error = e.what();
    }
    BOOST_CHECK_MESSAGE(error.find(d.filename(component_type::summary)) != std::string::npos, error);
    BOOST_CHECK_EQUAL(open_fds(), before);
}

// A reader made from a shared_sstable (forward, reversed, located) keeps the sstable alive when every other owner has
// dropped it, and holds its reader gate until the reader is closed: the table closes that gate before it closes the
// sstable and removes its files.
REEF_TEST_CASE(shared_sstable_readers_hold_the_sstable_until_closed) {
    tmpdir dir;
    auto s = random_test_wide_schema();
    auto d = co_await write_twenty_partitions(dir, s, 11, 3);
    cache::cache_tracker tracker(size_t(64) << 20);
    for (int kind = 0; kind < 3; ++kind) {
        BOOST_TEST_CONTEXT("reader kind " << kind) {
            auto sst = co_await open_sstable(d, tracker);
            std::weak_ptr<sstable> weak = sst;
            auto& readers = sst->readers();
            read_options o;
            if (kind == 1) {
                o.order = read_order::reversed;
            }
            auto r = kind == 2 ? make_located_sstable_reader(sst, s, reader_permit(), o, {})
                               : make_sstable_reader(sst, s, reader_permit(), o);
            sst.reset();
            BOOST_CHECK(!weak.expired());
            bool gate_closed = false;
            spawn([&readers, &gate_closed]() -> future<> {
                co_await readers.close();
                gate_closed = true;
            });
            size_t fragments = 0;
            while (auto f = co_await r()) {
                ++fragments;
            }
            BOOST_CHECK_EQUAL(fragments > 0, kind != 2);
            for (int i = 0; i < 10; ++i) {
                co_await yield();
            }
            BOOST_CHECK(!gate_closed);
            co_await r.close();
            for (int i = 0; i < 100 && !gate_closed; ++i) {
                co_await yield();
            }
            BOOST_CHECK(gate_closed);
            sst = weak.lock();
            BOOST_REQUIRE(sst);
            co_await sst->close();
        }
    }
}
