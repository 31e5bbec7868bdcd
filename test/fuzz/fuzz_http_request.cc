// libFuzzer target: arbitrary bytes as an HTTP client's stream, through the request parser, the route table and
// the response writer; see fuzz_http_support.hh.
#include "test/fuzz/fuzz_http_support.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reef::fuzz::http_request_input({data, size});
    return 0;
}
