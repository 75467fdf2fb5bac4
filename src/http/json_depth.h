// How deeply a JSON text nests, found by one pass over its bytes before it is parsed: a body of
// a million '[' would otherwise become a million nested documents (about 150 MB) before the
// parser notices that it never closes. Strings are skipped (brackets inside them do not count);
// the text need not be valid JSON (the parser judges that afterwards).
#pragma once

#include <string_view>

namespace gangway {

// Whether arrays and objects in `text` nest more than `max_depth` levels deep.
bool json_nests_deeper_than(std::string_view text, int max_depth);

}  // namespace gangway
