// Helpers of tests that read the peer corpus (../shared/peer-sstables): finding it, skipping when it
// is absent (a failure under CI=true), and a small JSON reader that keeps every value's exact source text.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>
#include <zlib.h>

namespace reef::testing {

// The repository's root (the folder holding ARCHITECTURE.md and configure.py) above the working directory or
// above the test binary, or nullopt.
inline std::optional<std::filesystem::path> repo_root_dir() {
    namespace fs = std::filesystem;
    std::vector<fs::path> starts = {fs::current_path()};
    std::error_code ec;
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        starts.push_back(exe.parent_path());
    }
    for (auto dir : starts) {
        for (; !dir.empty(); dir = dir.parent_path()) {
            if (fs::exists(dir / "ARCHITECTURE.md") && fs::exists(dir / "configure.py")) {
                return dir;
            }
            if (dir == dir.parent_path()) {
                break;
            }
        }
    }
    return std::nullopt;
}

// The small sstable sets kept in the repository (test/resource/sstables, its README says what each holds), or
// nullopt when the folder is not there.
inline std::optional<std::filesystem::path> resource_sstables_dir() {
    auto root = repo_root_dir();
    if (!root || !std::filesystem::is_directory(*root / "test" / "resource" / "sstables")) {
        return std::nullopt;
    }
    return *root / "test" / "resource" / "sstables";
}

// The corpus folder (../shared/peer-sstables beside the repository), or nullopt.
inline std::optional<std::filesystem::path> peer_corpus_dir() {
    auto root = repo_root_dir();
    if (!root) {
        return std::nullopt;
    }
    auto corpus = *root / ".." / "shared" / "peer-sstables";
    if (!std::filesystem::is_directory(corpus)) {
        return std::nullopt;
    }
    return std::filesystem::canonical(corpus);
}

// The corpus, or nullopt after printing that the test skipped; with CI=true an absent corpus fails the test.
inline std::optional<std::filesystem::path> require_peer_corpus() {
    auto dir = peer_corpus_dir();
    if (!dir) {
        const char* ci = std::getenv("CI");
        if (ci && std::string_view(ci) == "true") {
            BOOST_FAIL("the peer corpus (../shared/peer-sstables) is missing and CI=true");
        }
        BOOST_TEST_MESSAGE("skipped: the peer corpus (../shared/peer-sstables) is absent");
        std::printf("skipped: the peer corpus (../shared/peer-sstables) is absent\n");
    }
    return dir;
}

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A file's text, gunzipped when its name ends in .gz; nullopt when it is longer than max_bytes.
inline std::optional<std::string> read_corpus_file(const std::filesystem::path& p,
                                                   size_t max_bytes = std::string::npos) {
    if (p.extension() != ".gz") {
        auto text = read_file(p);
        return text.size() > max_bytes ? std::nullopt : std::optional<std::string>(std::move(text));
    }
    gzFile f = gzopen(p.c_str(), "rb");
    BOOST_REQUIRE_MESSAGE(f, "cannot open " << p);
    std::string out;
    char buf[65536];
    int n;
    while ((n = gzread(f, buf, sizeof(buf))) > 0) {
        out.append(buf, size_t(n));
        if (out.size() > max_bytes) {
            gzclose(f);
            return std::nullopt;
        }
    }
    gzclose(f);
    BOOST_REQUIRE_MESSAGE(n == 0, "cannot decompress " << p);
    return out;
}

// A dataset's oracle dump: expected.json, or expected.json.gz when it is large.
inline std::filesystem::path expected_json_path(const std::filesystem::path& dataset) {
    auto plain = dataset / "expected.json";
    return std::filesystem::exists(plain) ? plain : dataset / "expected.json.gz";
}

// A parsed JSON value that remembers its source text (so 1E+300 stays 1E+300).
struct json_value {
    enum class kind { null, boolean, number, string, array, object } type;
    std::string raw;
    // string: the unescaped text.
    std::string text;
    std::vector<json_value> items;
    std::vector<std::pair<std::string, json_value>> members;

    const json_value* get(std::string_view key) const {
        for (auto& [k, v] : members) {
            if (k == key) {
                return &v;
            }
        }
        return nullptr;
    }
};

class json_reader {
    std::string_view _s;
    size_t _pos = 0;

    void blank() {
        while (_pos < _s.size() && std::isspace(static_cast<unsigned char>(_s[_pos]))) {
            ++_pos;
        }
    }
    [[noreturn]] void fail(std::string_view what) {
        throw std::runtime_error(std::string("json: ") + std::string(what) + " at " + std::to_string(_pos));
    }
    std::string string() {
        ++_pos;
        std::string out;
        while (true) {
            if (_pos >= _s.size()) {
                fail("unterminated string");
            }
            char c = _s[_pos++];
            if (c == '"') {
                return out;
            }
            if (c != '\\') {
                out += c;
                continue;
            }
            char e = _s[_pos++];
            switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'u': {
                unsigned cp = std::stoul(std::string(_s.substr(_pos, 4)), nullptr, 16);
                _pos += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && _s.substr(_pos, 2) == "\\u") {
                    unsigned lo = std::stoul(std::string(_s.substr(_pos + 2, 4)), nullptr, 16);
                    _pos += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                if (cp < 0x80) {
                    out += char(cp);
                } else if (cp < 0x800) {
                    out += char(0xC0 | (cp >> 6));
                    out += char(0x80 | (cp & 0x3F));
                } else if (cp < 0x10000) {
                    out += char(0xE0 | (cp >> 12));
                    out += char(0x80 | ((cp >> 6) & 0x3F));
                    out += char(0x80 | (cp & 0x3F));
                } else {
                    out += char(0xF0 | (cp >> 18));
                    out += char(0x80 | ((cp >> 12) & 0x3F));
                    out += char(0x80 | ((cp >> 6) & 0x3F));
                    out += char(0x80 | (cp & 0x3F));
                }
                break;
            }
            default: out += e;
            }
        }
    }
public:
    explicit json_reader(std::string_view s) : _s(s) {}
    bool done() {
        blank();
        return _pos >= _s.size();
    }
    json_value value() {
        blank();
        if (_pos >= _s.size()) {
            fail("unexpected end");
        }
        size_t start = _pos;
        json_value v;
        char c = _s[_pos];
        if (c == '{') {
            v.type = json_value::kind::object;
            ++_pos;
            blank();
            if (_s[_pos] == '}') {
                ++_pos;
            } else {
                while (true) {
                    blank();
                    auto k = string();
                    blank();
                    if (_s[_pos++] != ':') {
                        fail("expected ':'");
                    }
                    v.members.emplace_back(k, value());
                    blank();
                    char d = _s[_pos++];
                    if (d == '}') {
                        break;
                    }
                    if (d != ',') {
                        fail("expected ',' or '}'");
                    }
                }
            }
        } else if (c == '[') {
            v.type = json_value::kind::array;
            ++_pos;
            blank();
            if (_s[_pos] == ']') {
                ++_pos;
            } else {
                while (true) {
                    v.items.push_back(value());
                    blank();
                    char d = _s[_pos++];
                    if (d == ']') {
                        break;
                    }
                    if (d != ',') {
                        fail("expected ',' or ']'");
                    }
                }
            }
        } else if (c == '"') {
            v.type = json_value::kind::string;
            v.text = string();
        } else if (_s.substr(_pos, 4) == "null") {
            v.type = json_value::kind::null;
            _pos += 4;
        } else if (_s.substr(_pos, 4) == "true" || _s.substr(_pos, 5) == "false") {
            v.type = json_value::kind::boolean;
            _pos += _s[_pos] == 't' ? 4 : 5;
        } else {
            v.type = json_value::kind::number;
            while (_pos < _s.size() && std::string_view("+-0123456789.eE").find(_s[_pos]) != std::string_view::npos) {
                ++_pos;
            }
            if (_pos == start) {
                fail("unexpected character");
            }
        }
        v.raw = std::string(_s.substr(start, _pos - start));
        if (v.type != json_value::kind::string) {
            v.text = v.raw;
        }
        return v;
    }
};

// Every JSON document of a file (a multi-sstable expected.json holds several arrays one after the other).
inline std::vector<json_value> read_json_documents(std::string_view text) {
    json_reader r(text);
    std::vector<json_value> docs;
    while (!r.done()) {
        docs.push_back(r.value());
    }
    return docs;
}

} // namespace reef::testing
