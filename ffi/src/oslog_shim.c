// os_log shim for iOS (compiled by build.rs for target_os = "ios" only).
// os_log_with_type is a macro that needs a literal format string, so Rust calls these two functions instead.
#include <os/log.h>
#include <stdint.h>

// Creates a log handle; it is kept for the life of the process (never released).
void *netron_os_log_create(const char *subsystem, const char *category) {
    return (void *)os_log_create(subsystem, category);
}

// Writes one message. `type` is an os_log_type_t value (0 default, 1 info, 2 debug, 0x10 error, 0x11 fault).
// The message is marked public: it holds library diagnostics, never user data.
void netron_os_log_write(void *log, uint8_t type, const char *message) {
    os_log_with_type((os_log_t)log, (os_log_type_t)type, "%{public}s", message);
}
