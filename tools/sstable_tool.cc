// The `reef sstable` verbs and their table. See sstable_tool.hh.
#include "tools/sstable_tool.hh"

#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/program_options.hh"
#include "sstables/exceptions.hh"
#include "sstables/version.hh"
#include "tools/sstable_dump_components.hh"
#include "tools/sstable_dump_data.hh"
#include "tools/sstable_dump_statistics.hh"
#include "tools/sstable_query.hh"
#include "tools/sstable_rewrite.hh"
#include "tools/sstable_schema_check.hh"
#include "tools/sstable_validate.hh"
#include "tools/sstable_write.hh"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace reef::tools {

namespace {

// What the command line gives a verb besides its sstables.
struct verb_context {
    // The clock (seconds since the epoch) that decides which TTL'd data counts as expired.
    int64_t now;
    // Verbs that write sstables: where, and how.
    rewrite_options rewrite;
    // --schema: the table the sstables are checked against (write: the table written); null without it.
    schema_ptr schema;
    // query: what to read; --stats: print the figures to stderr.
    query_options query;
    bool stats = false;
    // upgrade's options.
    upgrade_options upgrade;
    // write's options and its --input file's text.
    write_json_options write;
    std::string input;
};

future<std::string> run_query(std::vector<sstables::descriptor> d, const verb_context& c) {
    auto opts = c.query;
    opts.now = c.now;
    opts.schema = c.schema;
    std::vector<query_stats> stats;
    auto out = co_await query_sstables(std::move(d), std::move(opts), c.stats ? &stats : nullptr);
    for (auto& s : stats) {
        fmt::print(stderr, "{}", format_query_stats(s));
    }
    co_return out;
}

// A verb turns the sstables named on the command line into the text it prints.
struct verb {
    const char* name;
    const char* help;
    future<std::string> (*run)(std::vector<sstables::descriptor>, const verb_context&);
    // Whether the output depends on the clock (then the verb takes --now).
    bool uses_clock = false;
    // Whether the verb writes sstables (then it takes --out and --uncompressed).
    bool writes = false;
    // Whether the verb takes --schema.
    bool uses_schema = false;
    // Whether the verb takes the query options (--partition, --where, --reversed, --bypass-cache, --stats).
    bool queries = false;
    // What else it takes: 0 nothing, 1 upgrade's options, 2 write's (then no sstables).
    int extra = 0;
};

const verb verbs[] = {
    {"dump-data", "Data.db's partitions, rows and tombstones as JSON, as Cassandra's sstabledump -t prints them",
     [](std::vector<sstables::descriptor> d, const verb_context& c) { return dump_data_json(std::move(d), c.now, c.schema); },
     true, false, true},
    {"query", "reads through the index as a query does (a partition, clustering restrictions, reversed) and "
              "prints the fragments in dump-data's JSON structure (without positions)",
     run_query, true, false, true, true},
    {"dump-index", "Index.db's entries (keys, Data.db positions, promoted indexes) as JSON",
     [](std::vector<sstables::descriptor> d, const verb_context&) { return dump_index_json(std::move(d)); }},
    {"dump-summary", "Summary.db (or the summary rebuilt from Index.db when it is missing) as JSON",
     [](std::vector<sstables::descriptor> d, const verb_context&) { return dump_summary_json(std::move(d)); }},
    {"dump-statistics", "Statistics.db (table of contents, validation, compaction, stats, serialization header) as JSON",
     [](std::vector<sstables::descriptor> d, const verb_context&) { return dump_statistics_json(std::move(d)); }},
    {"dump-compression-info", "CompressionInfo.db (compressor, options, chunk length, chunk offsets) as JSON",
     [](std::vector<sstables::descriptor> d, const verb_context&) { return dump_compression_info_json(std::move(d)); }},
    {"upgrade", "rewrites each sstable of any readable version (mc, md, na, nb; me with --all) as me, with its "
                "compression, into --output or beside it",
     [](std::vector<sstables::descriptor> d, const verb_context& c) { return upgrade_sstables(std::move(d), c.upgrade); },
     false, false, false, false, 1},
    {"write", "writes the JSON of --input (what dump-data prints: one array per sstable) as me sstables of the "
              "--schema table into --output",
     [](std::vector<sstables::descriptor>, const verb_context& c) {
         return write_sstables_from_json(c.schema, c.input, c.write);
     },
     false, false, true, false, 2},
    {"rewrite", "upgrade's older form: every sstable (me too) into --out, same generation, LZ4 or --uncompressed",
     [](std::vector<sstables::descriptor> d, const verb_context& c) { return rewrite_sstables(std::move(d), c.rewrite); },
     false, true},
    {"validate-checksums", "checks every Data.db chunk's CRC32 and the whole-file digest; JSON per sstable",
     [](std::vector<sstables::descriptor> d, const verb_context&) { return validate_checksums_json(std::move(d)); }},
    {"validate", "checks every checksum and the order of partitions and of rows within each; exit status 1 with "
                 "the first problem",
     [](std::vector<sstables::descriptor> d, const verb_context&) { return validate_sstables(std::move(d)); }},
};

void usage(FILE* out) {
    std::fprintf(out, "usage: reef sstable <verb> [options] <sstable component path>...\n\nverbs:\n");
    for (auto& v : verbs) {
        std::fprintf(out, "  %-24s %s\n", v.name, v.help);
    }
    std::fprintf(out, "\n`reef sstable <verb> --help` lists a verb's options.\n");
}

} // namespace

int sstable_main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    std::string_view name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        usage(stdout);
        return 0;
    }
    const verb* v = nullptr;
    for (auto& candidate : verbs) {
        if (name == candidate.name) {
            v = &candidate;
        }
    }
    if (!v) {
        std::fprintf(stderr, "reef sstable: unknown verb '%s'\n\n", argv[1]);
        usage(stderr);
        return 2;
    }
    program_options::options opts(fmt::format("reef sstable {}", v->name), v->help);
    runtime_options rt;
    rt.add(opts);
    std::vector<std::string> paths;
    if (v->extra != 2) {
        opts.add_positional("sstable", "any component file of an sstable (e.g. me-1-big-Data.db)", &paths);
    }
    verb_context ctx{std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count()};
    if (v->uses_clock) {
        opts.add("now", "the clock in seconds since the epoch, for the \"expired\" flags of TTL'd data "
                        "(the default is the wall clock)", &ctx.now, ctx.now);
    }
    if (v->writes) {
        opts.add("out", "the directory the sstables are written to", &ctx.rewrite.out_dir);
        opts.add("uncompressed", "write Data.db uncompressed (with CRC.db) instead of LZ4", &ctx.rewrite.uncompressed);
    }
    std::string partition;
    if (v->queries) {
        opts.add("partition", "the partition key, as sstabledump -k takes it: dump-data's \"key\" components joined "
                              "by ':' (in a composite key a ':' inside a component is escaped as \\:); all partitions without it",
                 &partition, "");
        opts.add("where", "clustering restrictions in CQL: \"ck1 = 3 AND ck2 >= 'a' AND ck2 < 'f'\", "
                          "\"(ck1, ck2) > (1, 'x')\" (names from --schema, else clustering_0, clustering_1, ...)",
                 &ctx.query.where, "");
        opts.add("reversed", "rows in reversed clustering order (ORDER BY DESC)", &ctx.query.reversed);
        opts.add("bypass-cache", "read without the shard's index caches (BYPASS CACHE)", &ctx.query.bypass_cache);
        opts.add("stats", "print to stderr the reads and bytes per component file and the cache hits and misses",
                 &ctx.stats);
    }
    std::string schema_path;
    if (v->uses_schema && v->extra == 2) {
        opts.add("schema", "a CQL file whose last CREATE TABLE is the table written (required)", &schema_path, "");
    } else if (v->uses_schema) {
        opts.add("schema", "a CQL file whose last CREATE TABLE the sstables' serialization headers are checked "
                           "against (names and types; a mismatch is an error naming the column)",
                 &schema_path, "");
    }
    std::string input_path;
    if (v->extra == 1) {
        opts.add("output", "the directory the me sstables are written to (default: each beside its source)",
                 &ctx.upgrade.output_dir, "");
        opts.add("all", "also rewrite sstables that are me already", &ctx.upgrade.all);
        opts.add("uncompressed", "write Data.db uncompressed (with CRC.db) whatever the source's compression",
                 &ctx.upgrade.uncompressed);
    } else if (v->extra == 2) {
        opts.add("input", "the JSON file (dump-data's output, or the same structure)", &input_path, "");
        opts.add("output", "the directory the sstables are written to (created if need be)", &ctx.write.output_dir, "");
        opts.add("partitioner", "Murmur3Partitioner or ByteOrderedPartitioner: the order partitions must come in, "
                                "recorded in Statistics.db", &ctx.write.partitioner, ctx.write.partitioner);
    }
    runtime_config cfg;
    std::vector<sstables::descriptor> sstables;
    try {
        opts.parse(argc - 1, argv + 1);
        if (opts.help_requested()) {
            fmt::print("{}", opts.help());
            return 0;
        }
        cfg = rt.to_config();
        if (paths.empty() && v->extra != 2) {
            throw std::invalid_argument("no sstable given");
        }
        if (v->extra == 2) {
            if (schema_path.empty() || input_path.empty() || ctx.write.output_dir.empty()) {
                throw std::invalid_argument("--schema, --input and --output are required");
            }
        }
        for (auto& p : paths) {
            sstables.push_back(sstables::descriptor::from_path(p));
        }
        if (!schema_path.empty()) {
            ctx.schema = load_schema_file(schema_path);
        }
        if (v->queries && opts.was_set("partition")) {
            ctx.query.partition = partition;
        }
        if (!input_path.empty()) {
            std::ifstream in(input_path, std::ios::binary);
            if (!in) {
                throw std::invalid_argument("cannot read " + input_path);
            }
            std::stringstream ss;
            ss << in.rdbuf();
            ctx.input = ss.str();
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef sstable {}: {}\n", v->name, e.what());
        return 2;
    }
    // One shard is plenty for reading a few files.
    cfg.smp = 1;
    cfg.pin_threads = false;
    std::string out;
    try {
        int rc = run(cfg, [&]() -> future<int> {
            out = co_await v->run(std::move(sstables), ctx);
            co_return 0;
        });
        if (rc != 0) {
            return rc;
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef sstable {}: {}\n", v->name, e.what());
        return 1;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

} // namespace reef::tools
