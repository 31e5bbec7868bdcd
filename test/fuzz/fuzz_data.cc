// libFuzzer target: the Data.db parser (mx_parser) with the fragment consumer, under REEF_FUZZ_DATASET's
// serialization header and version; see fuzz_support.hh.
#include "test/fuzz/fuzz_support.hh"

namespace {
reef::fuzz::dataset* ds;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    ds = new reef::fuzz::dataset(reef::fuzz::load_dataset_from_env());
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reef::fuzz::data_input(*ds, {data, size});
    return 0;
}
