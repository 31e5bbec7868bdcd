// keyspace_definition: a keyspace as CREATE KEYSPACE declares it (name, replication map, durable_writes), the form
// the CQL parser produces and the database and its schema tables keep.
#pragma once

#include <map>
#include <string>

namespace reef {

struct keyspace_definition {
    std::string name;
    // The replication map as given ({'class': 'SimpleStrategy', 'replication_factor': '1'}).
    std::map<std::string, std::string> replication;
    bool durable_writes = true;

    bool operator==(const keyspace_definition&) const = default;
};

} // namespace reef
