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
#endif
