// systemd_notify: tells systemd (a Type=notify unit) that the node is ready or stopping, through the datagram
// socket named by $NOTIFY_SOCKET (sd_notify's protocol, no libsystemd). Without that variable it does nothing.
#pragma once

#include <string_view>

namespace reef::node {

// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...", newline-separated) to $NOTIFY_SOCKET. Never throws and
// never blocks: a failure is logged once as a warning (systemd then times the start out, which names the unit).
void systemd_notify(std::string_view state) noexcept;

} // namespace reef::node
