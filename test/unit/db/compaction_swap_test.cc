// Crash-safe swaps: a major compaction "crashes" (sstables::injected_crash from the swap's hook) after each of its
// steps, with a crash inside an input's deletion too, over two data directories and beside another shard's table
// in the same directories; a restart then holds the inputs or the output, never both, reads the model's answer at
// `now` (tombstones purged by the output never lose to data of a surviving input), and no temporary file is left.
// A compaction that fails (not a crash) leaves its inputs and nothing else. Bad swap logs are refused by name.
#include "compaction/compaction.hh"
#include "db/table.hh"
#include "mutation/mutation.hh"
#include "runtime/file.hh"
#include "sstables/swap_log.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

using namespace reef;
using namespace reef::testing;

namespace {

namespace fs = std::filesystem;

table_config config_for(const tmpdir& dir, unsigned shard) {
    table_config cfg;
    cfg.directory = dir.path() + "/d1/ks/t";
    cfg.more_directories = {dir.path() + "/d2/ks/t"};
    cfg.shard = shard;
    cfg.shard_count = 2;
    cfg.memtable_flush_threshold = SIZE_MAX;
    cfg.enable_cache = false;
    return cfg;
}

// What a query at `now` sees of the table and of the model.
future<std::vector<mutation>> query_table(table& t, deletion_time_type now) {
    auto r = t.make_reader(reader_permit(), read_options{});
    auto got = co_await read_validated(r, false);
    co_await r.close();
    std::vector<mutation> out;
    for (auto& m : mutations_from_fragments(t.schema(), got)) {
        if (auto q = model_query(m, now)) {
            out.push_back(std::move(*q));
        }
    }
    co_return out;
}

std::vector<mutation> query_model(const mutation_model& model, deletion_time_type now) {
    std::vector<mutation> out;
    for (auto& [k, m] : model) {
        if (auto q = model_query(m, now)) {
            out.push_back(std::move(*q));
        }
    }
    return out;
}

std::set<std::string> generations(const table& t) {
    std::set<std::string> out;
    for (auto& d : t.sstable_descriptors()) {
        out.insert(d.generation);
    }
    return out;
}

std::vector<std::string> table_directories(const table_config& cfg) {
    std::vector<std::string> dirs{cfg.directory};
    dirs.insert(dirs.end(), cfg.more_directories.begin(), cfg.more_directories.end());
    return dirs;
}

// Files a finished start-up must not leave: temporary TOCs and swap logs.
std::vector<std::string> leftovers(const table_config& cfg) {
    std::vector<std::string> out;
    for (auto& d : table_directories(cfg)) {
        for (auto& e : fs::recursive_directory_iterator(d)) {
            auto name = e.path().filename().string();
            if (name.ends_with(".tmp") || name.ends_with(".txn") || name.ends_with(".log")) {
                out.push_back(e.path().string());
            }
        }
    }
    return out;
}

// Writes `rounds` flushes of random mutations (tombstones among them) on the given keys.
future<> fill(table& t, mutation_model& model, mutation_generator& g, int rounds, int first_key) {
    auto s = t.schema();
    for (int round = 0; round < rounds; ++round) {
        int writes = g.rnd(3, 12);
        for (int w = 0; w < writes; ++w) {
            auto m = with_typed_values(s, g.make(pkey(first_key + g.rnd(0, 12)), 5));
            t.apply(m);
            apply_to_model(model, m);
        }
        co_await t.flush();
    }
}

// Malformed logs and what their error says.
std::vector<std::pair<std::string, std::string>> bad_logs() {
    return {{"input me-4-big-TOC.txt\n", "no end line"},
            {"input me-4-big-TOC.txt\nend", "without its newline"},
            {"input ../x/me-4-big-TOC.txt\nend\n", "expected a TOC.txt file name"},
            {"remove me-4-big-TOC.txt\nend\n", "expected 'input', 'output' or 'end'"},
            {"end\ninput me-4-big-TOC.txt\n", "text after the end line"}};
}

// The sstable of `gen` in whichever directory holds it.
std::optional<sstables::descriptor> find_sstable(const table_config& cfg, const std::string& gen) {
    for (auto& d : table_directories(cfg)) {
        auto desc = sstables::descriptor{d, sstables::sstable_version::me, gen, "big"};
        if (fs::exists(desc.filename(sstables::component_type::data))) {
            return desc;
        }
    }
    return std::nullopt;
}

} // namespace

// Every crash point of a major compaction, against the model.
REEF_TEST_CASE(test_compaction_crash_at_every_step) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    auto s = random_test_schemas().front();
    mutation_generator g(s, seed);
    unsigned rolled_back = 0, completed = 0, purged = 0;
    size_t outputs = 0;  // the most sstables a split compaction left
    // Steps: logged, outputs written, committed, an input deleted (per input), done; then no crash at all.
    const int inputs = 4;
    const int steps = 3 + inputs + 1;
    // split: one output, or a run of outputs of about 512 bytes each (as an LCS table's major compaction writes).
    for (uint64_t split : {uint64_t(0), uint64_t(512)})
    for (int crash_at = 0; crash_at <= steps; ++crash_at) {
        for (int mid_deletion = 0; mid_deletion < 2; ++mid_deletion) {
            BOOST_TEST_CONTEXT("seed " << seed << " split " << split << " crash at step " << crash_at
                               << " mid deletion " << mid_deletion) {
                tmpdir dir;
                auto cfg0 = config_for(dir, 0);
                auto cfg1 = config_for(dir, 1);
                mutation_model model0, model1;
                // Past gc_grace half the time: the output purges tombstones with the data they shadow.
                deletion_time_type now = g.rnd(0, 12) + (g.rnd(0, 1) ? s->options().gc_grace_seconds : 0);
                std::set<std::string> input_gens, neighbour_gens;
                std::string step_name;
                {
                    table t0(s, cfg0), t1(s, cfg1);
                    co_await t0.start();
                    co_await t1.start();
                    co_await fill(t0, model0, g, inputs, 0);
                    co_await fill(t1, model1, g, 2, 100);
                    input_gens = generations(t0);
                    neighbour_gens = generations(t1);
                    BOOST_REQUIRE_EQUAL(input_gens.size(), size_t(inputs));
                    int step = 0;
                    std::vector<std::string> names;
                    co_await t0.stop();
                    // The same directory, now with the hook (a restart without a crash first: nothing to do).
                    table_config hooked = cfg0;
                    hooked.swap_hook = [&](const std::string& name) {
                        names.push_back(name);
                        if (step++ == crash_at) {
                            step_name = name;
                            throw sstables::injected_crash();
                        }
                    };
                    table t(s, hooked);
                    co_await t.start();
                    BOOST_REQUIRE(generations(t) == input_gens);
                    bool crashed = false;
                    try {
                        compaction::compaction_control ctl;
                        co_await compaction::compact_sstables(t, t.sstables(), compaction::job_kind::regular, now, ctl,
                                                              split);
                    } catch (const sstables::injected_crash&) {
                        crashed = true;
                    }
                    BOOST_REQUIRE_EQUAL(crashed, crash_at < steps);
                    if (!crashed) {
                        BOOST_REQUIRE_EQUAL(names.size(), size_t(steps));
                    }
                    co_await t.stop();
                    co_await t1.stop();
                }
                // A crash inside the next input's deletion: its TOC renamed, Data.db gone (delete_sstable_files'
                // order), the rest left.
                if (mid_deletion && step_name == "input deleted") {
                    for (auto& gen : input_gens) {
                        if (auto d = find_sstable(cfg0, gen)) {
                            fs::rename(d->filename(sstables::component_type::toc),
                                       d->filename(sstables::component_type::toc) + ".tmp");
                            fs::remove(d->filename(sstables::component_type::data));
                            break;
                        }
                    }
                }
                // The other shard starts first: it leaves shard 0's swap and files alone.
                table n(s, cfg1);
                co_await n.start();
                BOOST_CHECK(generations(n) == neighbour_gens);
                auto na = co_await query_table(n, now);
                auto nb = query_model(model1, now);
                BOOST_REQUIRE_MESSAGE(na == nb, "the neighbour:\n" << describe(na) << "!=\n" << describe(nb));
                co_await n.stop();

                table t(s, cfg0);
                co_await t.start();
                auto got = generations(t);
                bool before_commit = crash_at < 2;
                if (before_commit) {
                    BOOST_REQUIRE_MESSAGE(got == input_gens, "expected the inputs back after a crash at " << step_name);
                    ++rolled_back;
                } else {
                    if (!split) {
                        BOOST_REQUIRE_LE(got.size(), 1u);
                    }
                    outputs = std::max(outputs, got.size());
                    for (auto& gen : got) {
                        BOOST_REQUIRE_MESSAGE(!input_gens.count(gen), "an input survived a committed swap");
                    }
                    completed += crash_at < steps;
                    purged += got.empty();
                }
                auto a = co_await query_table(t, now);
                auto b = query_model(model0, now);
                BOOST_REQUIRE_MESSAGE(a == b, "after a crash at " << step_name << ":\n" << describe(a) << "!=\n"
                                                                  << describe(b));
                co_await t.stop();
                auto left = leftovers(cfg0);
                BOOST_REQUIRE_MESSAGE(left.empty(), "left behind: " << (left.empty() ? std::string() : left.front()));
                // Nothing of the inputs is left on disk after a committed swap.
                if (!before_commit) {
                    for (auto& gen : input_gens) {
                        BOOST_CHECK(!find_sstable(cfg0, gen));
                    }
                }
            }
        }
    }
    BOOST_TEST_MESSAGE(rolled_back << " rolled back, " << completed << " completed, " << purged
                                   << " compactions purged everything");
    BOOST_CHECK_GT(rolled_back, 0u);
    BOOST_CHECK_GT(completed, 0u);
    BOOST_CHECK_GT(outputs, 1u);
}

// A compaction whose output write fails after the output was committed (not a crash): the swap is aborted, the
// inputs stay in the set and on disk, and nothing else is left (no output, no log).
REEF_TEST_CASE(test_failed_compaction_leaves_only_its_inputs) {
    uint64_t seed = pick_seed();
    auto s = random_test_schemas().front();
    mutation_generator g(s, seed);
    tmpdir dir;
    auto cfg = config_for(dir, 0);
    auto fail = std::make_shared<bool>(false);
    cfg.write_sstable = [fail](mutation_reader& r, schema_ptr s, sstables::descriptor d,
                               sstables::writer_options o) -> future<sstables::written_sstable> {
        auto w = co_await sstables::write_sstable(r, std::move(s), d, std::move(o));
        if (*fail) {
            throw std::runtime_error("injected failure after the output's commit");
        }
        co_return w;
    };
    mutation_model model;
    table t(s, cfg);
    co_await t.start();
    co_await fill(t, model, g, 3, 0);
    auto before = generations(t);
    *fail = true;
    bool failed = false;
    try {
        co_await t.compact_all(0);
    } catch (const std::runtime_error&) {
        failed = true;
    }
    BOOST_CHECK(failed);
    BOOST_CHECK(generations(t) == before);
    auto a = co_await query_table(t, 0);
    BOOST_REQUIRE(a == query_model(model, 0));
    co_await t.stop();
    BOOST_CHECK(leftovers(cfg).empty());
    size_t tocs = 0;
    for (auto& d : table_directories(cfg)) {
        for (auto& e : fs::directory_iterator(d)) {
            tocs += e.path().filename().string().ends_with("-TOC.txt");
        }
    }
    BOOST_CHECK_EQUAL(tocs, before.size());
}

// A swap log that is not whole or not ours is refused with its name, never guessed at; an unfinished one (.tmp:
// its rename never happened, nothing was committed under it) is removed.
REEF_TEST_CASE(test_recover_swaps_refuses_bad_logs) {
    tmpdir dir;
    auto log_dir = sstables::swap_log_directory(dir.path());
    fs::create_directories(log_dir);
    std::vector<std::string> dirs{dir.path()};
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(log_dir + "/" + name) << text;
    };
    write("swap-4.txn.tmp", "input me-4-big-TOC.txt\n");
    auto r = co_await sstables::recover_swaps(dir.path(), dirs);
    BOOST_CHECK_EQUAL(r.temporary, 1u);
    BOOST_CHECK(!fs::exists(log_dir + "/swap-4.txn.tmp"));
    for (auto& [text, what] : bad_logs()) {
        write("swap-4.log", text);
        std::string message;
        try {
            co_await sstables::recover_swaps(dir.path(), dirs);
        } catch (const std::runtime_error& e) {
            message = e.what();
        }
        BOOST_CHECK_MESSAGE(message.find("swap-4.log") != std::string::npos && message.find(what) != std::string::npos,
                            "'" << text << "' gave '" << message << "'");
    }
    // Another owner's log is left alone.
    write("swap-5.log", "input me-5-big-TOC.txt\nend\n");
    fs::remove(log_dir + "/swap-4.log");
    auto r2 = co_await sstables::recover_swaps(dir.path(), dirs, [](const std::string& id) { return id == "4"; });
    BOOST_CHECK_EQUAL(r2.completed, 0u);
    BOOST_CHECK(fs::exists(log_dir + "/swap-5.log"));
}
