// libFuzzer target: Statistics.db (parse_statistics, with its serialization header); see fuzz_support.hh.
#include "test/fuzz/fuzz_support.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reef::fuzz::statistics_input({data, size});
    return 0;
}
