// Tests of reef::logger: level filtering, the line format, the registry and
// the --logger-log-level / --default-log-level syntax.
#include "runtime/log.hh"
#include "runtime/shard.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fcntl.h>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace reef;

namespace {

// Installs a sink collecting lines for the lifetime of the object.
struct captured_lines {
    std::vector<std::string> lines;
    captured_lines() {
        set_log_sink([this](std::string_view line) { lines.emplace_back(line); });
    }
    ~captured_lines() { set_log_sink({}); }
};

// Counts how often fmt formats it, to prove disabled levels do not format.
struct format_counter {
    int* calls;
};

std::string error_of(auto&& fn) {
    try {
        fn();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "<no exception>";
}

const std::regex line_format(
    R"(^(ERROR|WARN |INFO |DEBUG|TRACE) \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} \[shard (\d+)\] ([a-z_]+) - (.*)$)");

} // namespace

template <>
struct fmt::formatter<format_counter> : fmt::formatter<std::string_view> {
    auto format(const format_counter& c, fmt::format_context& ctx) const {
        ++*c.calls;
        return fmt::formatter<std::string_view>::format("counted", ctx);
    }
};

BOOST_AUTO_TEST_CASE(test_level_filtering) {
    captured_lines cap;
    logger log("test_filtering");
    BOOST_CHECK(log.level() == log_level::info);
    log.trace("t");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 3u);
    BOOST_CHECK(cap.lines[0].ends_with("test_filtering - i"));
    BOOST_CHECK(cap.lines[1].ends_with("test_filtering - w"));
    BOOST_CHECK(cap.lines[2].ends_with("test_filtering - e"));

    log.set_level(log_level::error);
    log.warn("w2");
    log.error("e2");
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 4u);
    BOOST_CHECK(cap.lines[3].ends_with(" - e2"));

    log.set_level(log_level::trace);
    log.trace("t2");
    log.log(log_level::debug, "d2");
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 6u);
    BOOST_CHECK(cap.lines[4].starts_with("TRACE "));
    BOOST_CHECK(cap.lines[5].starts_with("DEBUG "));
}

BOOST_AUTO_TEST_CASE(test_disabled_level_does_not_format) {
    captured_lines cap;
    logger log("test_lazy");
    int calls = 0;
    log.debug("{}", format_counter{&calls});
    BOOST_CHECK_EQUAL(calls, 0);
    BOOST_CHECK(cap.lines.empty());
    log.info("{}", format_counter{&calls});
    BOOST_CHECK_EQUAL(calls, 1);
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 1u);
    BOOST_CHECK(cap.lines[0].ends_with("test_lazy - counted"));
}

BOOST_AUTO_TEST_CASE(test_line_format) {
    captured_lines cap;
    logger log("test_format");
    log.info("hello {} {}", 42, std::string("world"));
    log.error("bad {:>4}|", "x");
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 2u);
    std::smatch m;
    BOOST_REQUIRE_MESSAGE(std::regex_match(cap.lines[0], m, line_format), cap.lines[0]);
    BOOST_CHECK_EQUAL(m[1].str(), "INFO ");
    BOOST_CHECK_EQUAL(m[2].str(), "0");
    BOOST_CHECK_EQUAL(m[3].str(), "test_format");
    BOOST_CHECK_EQUAL(m[4].str(), "hello 42 world");
    // "INFO" is padded to the width of "ERROR", so messages line up.
    BOOST_CHECK(cap.lines[0].starts_with("INFO  2"));
    BOOST_REQUIRE_MESSAGE(std::regex_match(cap.lines[1], m, line_format), cap.lines[1]);
    BOOST_CHECK_EQUAL(m[1].str(), "ERROR");
    BOOST_CHECK_EQUAL(m[4].str(), "bad    x|");
    BOOST_CHECK(cap.lines[1].starts_with("ERROR 2"));
}

BOOST_AUTO_TEST_CASE(test_line_names_the_calling_shard) {
    captured_lines cap;
    logger log("test_shard");
    std::thread t([&] {
        internal::current_shard = 3;
        log.warn("from three");
    });
    t.join();
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 1u);
    std::smatch m;
    BOOST_REQUIRE(std::regex_match(cap.lines[0], m, line_format));
    BOOST_CHECK_EQUAL(m[2].str(), "3");
}

BOOST_AUTO_TEST_CASE(test_runtime_format_error_is_reported_not_thrown) {
    captured_lines cap;
    logger log("test_bad_format");
    log.info(fmt::runtime("{:d}"), "not a number");
    BOOST_REQUIRE_EQUAL(cap.lines.size(), 1u);
    BOOST_CHECK_MESSAGE(cap.lines[0].find("failed to format log message \"{:d}\"") != std::string::npos,
                        cap.lines[0]);
}

// Without a sink, lines go to file descriptor 2, one write() each, so lines
// logged at once from several threads come out whole.
BOOST_AUTO_TEST_CASE(test_stderr_lines_do_not_interleave) {
    char path[] = "/tmp/reef_log_test_XXXXXX";
    int fd = mkstemp(path);
    BOOST_REQUIRE(fd >= 0);
    ::unlink(path);
    int append_fd = ::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_WRONLY | O_APPEND);
    BOOST_REQUIRE(append_fd >= 0);
    int saved_stderr = ::dup(STDERR_FILENO);
    BOOST_REQUIRE(saved_stderr >= 0);

    logger log("test_stderr");
    constexpr int threads = 4, lines_per_thread = 300;
    std::string long_text(200, 'x');
    ::dup2(append_fd, STDERR_FILENO);
    {
        std::vector<std::thread> ts;
        for (int i = 0; i < threads; ++i) {
            ts.emplace_back([&, i] {
                internal::current_shard = unsigned(i);
                for (int j = 0; j < lines_per_thread; ++j) {
                    log.info("thread {} line {} {}", i, j, long_text);
                }
            });
        }
        for (auto& t : ts) {
            t.join();
        }
    }
    ::dup2(saved_stderr, STDERR_FILENO);
    ::close(saved_stderr);
    ::close(append_fd);

    std::string contents;
    char buf[65536];
    ssize_t n;
    ::lseek(fd, 0, SEEK_SET);
    while ((n = ::read(fd, buf, sizeof(buf))) > 0) {
        contents.append(buf, size_t(n));
    }
    ::close(fd);

    BOOST_REQUIRE(!contents.empty());
    BOOST_CHECK_EQUAL(contents.back(), '\n');
    std::vector<int> next_line(threads, 0);
    size_t count = 0, pos = 0;
    while (pos < contents.size()) {
        auto end = contents.find('\n', pos);
        BOOST_REQUIRE(end != std::string::npos);
        std::string line = contents.substr(pos, end - pos);
        pos = end + 1;
        ++count;
        std::smatch m;
        BOOST_REQUIRE_MESSAGE(std::regex_match(line, m, line_format), line);
        int shard = std::stoi(m[2].str());
        BOOST_REQUIRE(shard >= 0 && shard < threads);
        // Each thread's lines arrive whole and in its own order.
        BOOST_REQUIRE_EQUAL(m[4].str(),
                            fmt::format("thread {} line {} {}", shard, next_line[shard]++, long_text));
    }
    BOOST_CHECK_EQUAL(count, size_t(threads * lines_per_thread));
}

BOOST_AUTO_TEST_CASE(test_registry_names_and_levels) {
    auto& reg = global_logger_registry();
    {
        logger a("test_reg_a"), b("test_reg_b");
        auto names = reg.get_all_logger_names();
        BOOST_CHECK(std::is_sorted(names.begin(), names.end()));
        BOOST_CHECK(std::count(names.begin(), names.end(), "test_reg_a") == 1);
        BOOST_CHECK(std::count(names.begin(), names.end(), "test_reg_b") == 1);

        reg.set_logger_level("test_reg_a", log_level::trace);
        BOOST_CHECK(a.level() == log_level::trace);
        BOOST_CHECK(b.level() == log_level::info);
        BOOST_CHECK(reg.get_logger_level("test_reg_a") == log_level::trace);

        BOOST_CHECK_EQUAL(error_of([&] { reg.set_logger_level("no_such_logger", log_level::debug); }),
                          "unknown logger 'no_such_logger'");
        BOOST_CHECK_EQUAL(error_of([&] { logger dup("test_reg_a"); }), "logger 'test_reg_a' registered twice");
        // The failed duplicate must not have unregistered the original.
        reg.set_logger_level("test_reg_a", log_level::warn);
        BOOST_CHECK(a.level() == log_level::warn);

        reg.set_all_loggers_level(log_level::error);
        BOOST_CHECK(a.level() == log_level::error);
        BOOST_CHECK(b.level() == log_level::error);
        // Loggers created later start at the new default.
        logger c("test_reg_c");
        BOOST_CHECK(c.level() == log_level::error);
        reg.set_all_loggers_level(log_level::info);
    }
    auto names = reg.get_all_logger_names();
    BOOST_CHECK(std::count(names.begin(), names.end(), "test_reg_a") == 0);
    BOOST_CHECK_EQUAL(error_of([&] { reg.get_logger_level("test_reg_b"); }), "unknown logger 'test_reg_b'");
    // The name is free again.
    logger again("test_reg_a");
    BOOST_CHECK(again.level() == log_level::info);
}

BOOST_AUTO_TEST_CASE(test_parse_log_level) {
    BOOST_CHECK(parse_log_level("error") == log_level::error);
    BOOST_CHECK(parse_log_level("warn") == log_level::warn);
    BOOST_CHECK(parse_log_level("INFO") == log_level::info);
    BOOST_CHECK(parse_log_level("Debug") == log_level::debug);
    BOOST_CHECK(parse_log_level("trace") == log_level::trace);
    BOOST_CHECK_EQUAL(to_string(log_level::warn), "warn");
    BOOST_CHECK_EQUAL(error_of([] { parse_log_level("verbose"); }),
                      "unknown log level 'verbose' (expected error, warn, info, debug or trace)");
    BOOST_CHECK_EQUAL(error_of([] { parse_log_level(""); }),
                      "unknown log level '' (expected error, warn, info, debug or trace)");
}

BOOST_AUTO_TEST_CASE(test_parse_logger_log_levels) {
    auto levels = parse_logger_log_levels("sstable=debug:cache=trace:io=error");
    BOOST_REQUIRE_EQUAL(levels.size(), 3u);
    BOOST_CHECK_EQUAL(levels[0].first, "sstable");
    BOOST_CHECK(levels[0].second == log_level::debug);
    BOOST_CHECK_EQUAL(levels[1].first, "cache");
    BOOST_CHECK(levels[1].second == log_level::trace);
    BOOST_CHECK_EQUAL(levels[2].first, "io");
    BOOST_CHECK(levels[2].second == log_level::error);

    BOOST_CHECK_EQUAL(error_of([] { parse_logger_log_levels("sstable"); }),
                      "--logger-log-level: bad entry 'sstable', expected name=level");
    BOOST_CHECK_EQUAL(error_of([] { parse_logger_log_levels("a=info:=debug"); }),
                      "--logger-log-level: bad entry '=debug', expected name=level");
    BOOST_CHECK_EQUAL(error_of([] { parse_logger_log_levels("a=info:"); }),
                      "--logger-log-level: bad entry '', expected name=level");
    BOOST_CHECK_EQUAL(error_of([] { parse_logger_log_levels("a=info:cache=loud"); }),
                      "--logger-log-level: logger 'cache': unknown log level 'loud' "
                      "(expected error, warn, info, debug or trace)");
}

BOOST_AUTO_TEST_CASE(test_apply_logging_settings) {
    logger a("test_apply_a"), b("test_apply_b");
    std::vector<std::string> specs = {"test_apply_a=trace", "test_apply_b=error"};
    auto settings = parse_logging_settings("warn", specs);
    apply_logging_settings(settings);
    BOOST_CHECK(a.level() == log_level::trace);
    BOOST_CHECK(b.level() == log_level::error);
    BOOST_CHECK(global_logger_registry().default_level() == log_level::warn);

    BOOST_CHECK_EQUAL(error_of([] { parse_logging_settings("noisy", {}); }),
                      "--default-log-level: unknown log level 'noisy' "
                      "(expected error, warn, info, debug or trace)");

    // An unknown name changes nothing, not even the loggers named before it.
    std::vector<std::string> bad = {"test_apply_a=debug:test_apply_typo=debug"};
    BOOST_CHECK_EQUAL(error_of([&] { apply_logging_settings(parse_logging_settings("info", bad)); }),
                      "--logger-log-level: unknown logger 'test_apply_typo'");
    BOOST_CHECK(a.level() == log_level::trace);
    BOOST_CHECK(b.level() == log_level::error);
    BOOST_CHECK(global_logger_registry().default_level() == log_level::warn);
    global_logger_registry().set_all_loggers_level(log_level::info);
}
