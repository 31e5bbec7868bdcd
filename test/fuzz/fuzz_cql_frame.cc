// libFuzzer target: arbitrary bytes as a CQL client's stream of frames, through the frame decoder, the
// decompressors and the request parsers; see fuzz_cql_support.hh.
#include "test/fuzz/fuzz_cql_support.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reef::fuzz::cql_frame_input({data, size});
    return 0;
}
