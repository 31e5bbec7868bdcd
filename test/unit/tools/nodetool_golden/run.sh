#!/bin/sh
# Prints what Cassandra 5.0.9's own nodetool classes print for the values nodetool_test.cc scripts, the expected
# texts of that test: ./run.sh tablestats.jsh (or status.jsh, snapshot.jsh, numbers.jsh). Needs a JDK (jshell) and
# the cassandra-peer build's jars (test/interop builds them into build/interop/cassandra-peer/target/c5.0.9/lib).
set -e
here=$(cd "$(dirname "$0")" && pwd)
lib=${CASSANDRA_LIB:-$here/../../../../build/interop/cassandra-peer/target/c5.0.9/lib}
cp=$(ls "$lib"/*.jar | tr '\n' ':')
# Cassandra's FileUtils reaches JDK internals at class load.
exec jshell -R--add-exports=java.base/sun.nio.ch=ALL-UNNAMED -R--add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    -R--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED -R--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
    -R--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED --class-path "$cp" "$here/$1" 2>/dev/null
