// libFuzzer target: Index.db entries and promoted-index blocks, with REEF_FUZZ_DATASET's clustering types and
// version; see fuzz_support.hh.
#include "test/fuzz/fuzz_support.hh"

namespace {
reef::fuzz::dataset* ds;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    ds = new reef::fuzz::dataset(reef::fuzz::load_dataset_from_env());
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reef::fuzz::index_input(*ds, {data, size});
    return 0;
}
