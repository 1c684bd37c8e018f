#ifndef C_LIBXML2_SHIM_H
#define C_LIBXML2_SHIM_H
// Debian's libxml2 is built with ICU, so its encoding.h includes the system's ICU headers,
// whose UErrorCode clashes with the copy in Foundation's _FoundationICU when one Swift module
// sees both (the test-discovery module of a clean build does). corrupt-fuzz never touches
// libxml2's ICU converters (only pointers to encoding handlers), so the shim hides them.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>
#include <libxml/relaxng.h>
#include <libxml/valid.h>
#include <string.h>

/// What cf_xml_read_in_place's reader has left to give libxml2.
struct cf_xml_memory_reader {
    const char *next;
    int left;
};

static int cf_xml_memory_read(void *context, char *buffer, int length) {
    struct cf_xml_memory_reader *reader = (struct cf_xml_memory_reader *)context;
    int count = length < reader->left ? length : reader->left;
    memcpy(buffer, reader->next, (size_t)count);
    reader->next += count;
    reader->left -= count;
    return count;
}

// xmlReadMemory, without a copy of a large document: libxml2 2.9 copies the whole buffer into
// its input before parsing (an 8 MB document cost a validator 17 MB more), so a document of a
// megabyte or more is read through callbacks instead, a few kilobytes at a time, which the
// parser lets go as it goes (its limits without XML_PARSE_HUGE then include one on how much it
// looks ahead, "Huge input lookup", 10,000,000 bytes). Smaller ones are read as before.
static inline xmlDocPtr cf_xml_read_in_place(const char *buffer, int size, const char *url, int options) {
    if (buffer == NULL || size < (1 << 20)) return xmlReadMemory(buffer, size, url, NULL, options);
    struct cf_xml_memory_reader reader = {buffer, size};
    return xmlReadIO(cf_xml_memory_read, NULL, &reader, url, NULL, options);
}
#endif
