// TOC.txt: the list of an sstable's component files, one name per line; and, for an sstable whose TOC is
// missing, the same list discovered from the files of its directory.
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace reef::sstables {

struct toc {
    std::set<component_type> components;
    // Names we do not know (a future component, ScyllaDB's extras): kept, not fatal.
    std::vector<std::string> unknown;

    bool has(component_type c) const { return components.count(c) != 0; }
};

// Parses TOC.txt's text (file names it in errors). Blank lines and trailing spaces or CRs are ignored; a line
// that is not a component name goes to `unknown`; a TOC without Data.db, or with a NUL or other control byte
// (a binary file), is malformed.
toc parse_toc(std::string_view text, const std::string& file);

// Reads d's TOC.txt; throws malformed_sstable_exception when it is malformed and std::system_error when it
// cannot be read.
future<toc> read_toc(const descriptor& d);

// The components of d found by listing d.directory (files named like d's with the same version, generation
// and format); TOC.txt itself is listed only if present. Runs the listing off the shard.
future<toc> discover_components(const descriptor& d);

// read_toc when d's TOC.txt exists, discover_components otherwise.
future<toc> read_or_discover_toc(const descriptor& d);

} // namespace reef::sstables
