// Java 17's Double.toString and Float.toString (jdk.internal.math.FloatingDecimal), re-implemented.
// Promises: the same text as JDK 8 to 18 for every double and float, including the outputs that are not the
// shortest round-tripping digits (JDK-4511638, changed only in JDK 19), since Cassandra's tools print that way.
#pragma once

#include <string>

namespace reef::utils {

// "1.0", "0.001", "1.0E7", "9.999999999999999E22", "1.15292150460684698E18", "4.9E-324", "-0.0", "NaN",
// "Infinity", "-Infinity": plain decimal for 1e-3 <= |d| < 1e7 with at least one digit after the point,
// otherwise d.dddE±n with at least one digit after the point and no '+' in the exponent.
std::string java_double_to_string(double d);
std::string java_float_to_string(float f);

} // namespace reef::utils
