// Test drivers built into the reef binary (`reef crash-writer`): processes a suite runs, kills and checks.
// Each parses its own options and returns the process exit status.
#pragma once

namespace reef::drivers {

// test/suites/crash_test.py's writer and verifier (test/drivers/crash_writer.cc).
int crash_writer_main(int argc, char** argv);

} // namespace reef::drivers
