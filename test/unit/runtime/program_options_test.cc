// Tests of reef::program_options: value forms, types and ranges, positional
// arguments, error messages and the --help text.
#include "runtime/program_options.hh"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace reef::program_options;

namespace {

// Every kind of option, as a benchmark's main() would declare them.
struct fixture {
    unsigned smp;
    int64_t offset;
    uint64_t bytes;
    int8_t tiny;
    double ratio;
    bool verbose;
    std::string name;
    std::vector<std::string> tags;
    std::vector<std::string> files;
    options opts{"reef perf-runtime", "Measures the shard runtime."};

    fixture() {
        opts.add("smp", "number of shards", &smp, 1, 1, 256)
            .add("offset", "where to start", &offset, -1)
            .add("bytes", "bytes per request", &bytes, 4096)
            .add("tiny", "a narrow integer", &tiny, 0)
            .add("ratio", "read share", &ratio, 0.5)
            .add("verbose", "print more", &verbose)
            .add("name", "run name", &name, "default-run")
            .add("tag", "a tag", &tags)
            .add_positional("files", "input files", &files);
    }

    void parse(std::vector<std::string_view> args) { opts.parse(args); }

    std::string error_of(std::vector<std::string_view> args) {
        try {
            opts.parse(args);
        } catch (const option_error& e) {
            return e.what();
        }
        return "<no exception>";
    }
};

} // namespace

BOOST_AUTO_TEST_CASE(test_defaults_are_stored_by_add) {
    fixture f;
    BOOST_CHECK_EQUAL(f.smp, 1u);
    BOOST_CHECK_EQUAL(f.offset, -1);
    BOOST_CHECK_EQUAL(f.bytes, 4096u);
    BOOST_CHECK_EQUAL(f.ratio, 0.5);
    BOOST_CHECK_EQUAL(f.verbose, false);
    BOOST_CHECK_EQUAL(f.name, "default-run");
    f.parse({});
    BOOST_CHECK_EQUAL(f.smp, 1u);
    BOOST_CHECK(!f.opts.was_set("smp"));
    BOOST_CHECK(!f.opts.help_requested());
    BOOST_CHECK(f.files.empty());
}

BOOST_AUTO_TEST_CASE(test_both_value_forms_and_every_type) {
    fixture f;
    f.parse({"--smp", "4", "--offset=-20", "--bytes", "18446744073709551615", "--tiny=-128", "--ratio",
             "0.25", "--verbose", "--name=a=b", "--tag", "x", "--tag=y", "--tag", "-z"});
    BOOST_CHECK_EQUAL(f.smp, 4u);
    BOOST_CHECK_EQUAL(f.offset, -20);
    BOOST_CHECK_EQUAL(f.bytes, UINT64_MAX);
    BOOST_CHECK_EQUAL(int(f.tiny), -128);
    BOOST_CHECK_EQUAL(f.ratio, 0.25);
    BOOST_CHECK_EQUAL(f.verbose, true);
    BOOST_CHECK_EQUAL(f.name, "a=b"); // only the first '=' separates
    BOOST_CHECK((f.tags == std::vector<std::string>{"x", "y", "-z"}));
    BOOST_CHECK(f.opts.was_set("smp"));
    BOOST_CHECK(f.opts.was_set("tag"));
    BOOST_CHECK(!f.opts.was_set("no-such"));
}

BOOST_AUTO_TEST_CASE(test_negative_value_after_space) {
    fixture f;
    f.parse({"--offset", "-5"});
    BOOST_CHECK_EQUAL(f.offset, -5);
}

BOOST_AUTO_TEST_CASE(test_flag_explicit_values) {
    fixture f;
    f.parse({"--verbose=false"});
    BOOST_CHECK_EQUAL(f.verbose, false);
    BOOST_CHECK(f.opts.was_set("verbose"));
    fixture g;
    g.parse({"--verbose=yes"});
    BOOST_CHECK_EQUAL(g.verbose, true);
    fixture h;
    BOOST_CHECK_EQUAL(h.error_of({"--verbose=maybe"}), "option --verbose: 'maybe' is not true or false");
    // A flag never takes the next argument as its value.
    fixture k;
    k.parse({"--verbose", "false"});
    BOOST_CHECK_EQUAL(k.verbose, true);
    BOOST_CHECK((k.files == std::vector<std::string>{"false"}));
}

BOOST_AUTO_TEST_CASE(test_positional_arguments) {
    fixture f;
    f.parse({"a.db", "--smp=2", "-", "b.db", "--", "--smp", "-x"});
    BOOST_CHECK_EQUAL(f.smp, 2u);
    BOOST_CHECK((f.files == std::vector<std::string>{"a.db", "-", "b.db", "--smp", "-x"}));

    unsigned smp;
    options no_positional("tool", "");
    no_positional.add("smp", "shards", &smp, 1);
    std::vector<std::string_view> args = {"--smp", "3", "stray"};
    BOOST_CHECK_EXCEPTION(no_positional.parse(args), option_error,
                          [](auto& e) { return std::string(e.what()) == "unexpected argument 'stray'"; });
}

BOOST_AUTO_TEST_CASE(test_argv_skips_program_name) {
    fixture f;
    const char* argv[] = {"reef", "--smp", "8", "file"};
    f.opts.parse(4, argv);
    BOOST_CHECK_EQUAL(f.smp, 8u);
    BOOST_CHECK((f.files == std::vector<std::string>{"file"}));
}

BOOST_AUTO_TEST_CASE(test_value_errors_name_option_and_value) {
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp", "abc"}), "option --smp: 'abc' is not an unsigned integer");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp=-1"}), "option --smp: '-1' is not an unsigned integer");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp=4x"}), "option --smp: '4x' is not an unsigned integer");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp="}), "option --smp: '' is not an unsigned integer");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp", "0"}), "option --smp: '0' is out of range [1, 256]");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp", "257"}), "option --smp: '257' is out of range [1, 256]");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp", "99999999999999999999"}),
                      "option --smp: '99999999999999999999' is out of range [1, 256]");
    BOOST_CHECK_EQUAL(fixture().error_of({"--tiny=128"}), "option --tiny: '128' is out of range [-128, 127]");
    BOOST_CHECK_EQUAL(fixture().error_of({"--offset=1.5"}), "option --offset: '1.5' is not an integer");
    BOOST_CHECK_EQUAL(fixture().error_of({"--bytes=18446744073709551616"}),
                      "option --bytes: '18446744073709551616' is out of range [0, 18446744073709551615]");
    BOOST_CHECK_EQUAL(fixture().error_of({"--ratio", "half"}), "option --ratio: 'half' is not a number");
    BOOST_CHECK_EQUAL(fixture().error_of({"--ratio=inf"}), "option --ratio: 'inf' is not a number");
}

BOOST_AUTO_TEST_CASE(test_structural_errors) {
    BOOST_CHECK_EQUAL(fixture().error_of({"--smpp", "2"}), "unknown option --smpp");
    BOOST_CHECK_EQUAL(fixture().error_of({"--nope=1"}), "unknown option --nope");
    BOOST_CHECK_EQUAL(fixture().error_of({"-v"}), "unknown option -v (options start with --)");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp"}), "option --smp: missing value");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp", "--verbose"}), "option --smp: missing value");
    BOOST_CHECK_EQUAL(fixture().error_of({"--smp=1", "--smp=2"}), "option --smp given more than once");
    BOOST_CHECK_EQUAL(fixture().error_of({"--help=1"}), "option --help takes no value");

    unsigned x;
    options o("tool", "");
    o.add("x", "", &x, 0);
    BOOST_CHECK_THROW(o.add("x", "", &x, 0), std::logic_error);
    BOOST_CHECK_THROW(o.add("help", "", &x, 0), std::logic_error);
}

BOOST_AUTO_TEST_CASE(test_help) {
    fixture f;
    f.parse({"--smp=2", "--help"});
    BOOST_CHECK(f.opts.help_requested());
    BOOST_CHECK_EQUAL(f.opts.help(),
                      "Usage: reef perf-runtime [options] [files...]\n"
                      "\n"
                      "Measures the shard runtime.\n"
                      "\n"
                      "Options:\n"
                      "  --help              show this help and exit\n"
                      "  --smp <unsigned>    number of shards (default: 1)\n"
                      "  --offset <int>      where to start (default: -1)\n"
                      "  --bytes <unsigned>  bytes per request (default: 4096)\n"
                      "  --tiny <int>        a narrow integer (default: 0)\n"
                      "  --ratio <number>    read share (default: 0.5)\n"
                      "  --verbose           print more\n"
                      "  --name <string>     run name (default: default-run)\n"
                      "  --tag <string>...   a tag (repeatable)\n"
                      "\n"
                      "Arguments:\n"
                      "  files               input files\n");
}

// An option with no help text (a test hook) parses like any other but is not listed.
BOOST_AUTO_TEST_CASE(test_hidden_option) {
    options opts("reef server", "Runs.");
    int64_t delay = 0;
    bool shown = false;
    opts.add("test-delay-ms", "", &delay, 0);
    opts.add("shown", "a listed flag", &shown);
    const char* args[] = {"reef", "--test-delay-ms", "250"};
    opts.parse(3, args);
    BOOST_CHECK_EQUAL(delay, 250);
    BOOST_CHECK(opts.help().find("test-delay") == std::string::npos);
    BOOST_CHECK(opts.help().find("--shown") != std::string::npos);
}
