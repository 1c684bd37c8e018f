#ifndef CONSUMER_APP_CSQLITE_H
#define CONSUMER_APP_CSQLITE_H

// The consumer app's own C target, named as corrupt-fuzz's system-library target is.

#include <stddef.h>
#include <stdint.h>

/// FNV-1a (32 bits) of `count` bytes: the checksum at the end of a contacts file.
uint32_t contacts_checksum(const uint8_t *bytes, size_t count);

#endif
