// Text that came from a client (a URL, a header, a name in a request body), made safe to put
// into an answer or a log line: invalid UTF-8 becomes U+FFFD (so that a strict JSON writer never
// sees it), and anything longer than a short limit is cut at a character boundary and says how
// long it was (so that a 1 MB model name does not come back as a 1 MB answer). Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gangway {

// The longest piece of client text an error message repeats, in bytes.
inline constexpr size_t kShownClientTextBytes = 128;

// `text` as valid UTF-8 (each byte that is not part of a well-formed UTF-8 sequence becomes
// U+FFFD), at most `max_bytes` of it followed by "... (N bytes)" when it was longer.
std::string shown_client_text(std::string_view text, size_t max_bytes = kShownClientTextBytes);

// The length of the well-formed UTF-8 sequence that `text` starts with (1 to 4), or 0 when it
// starts with a byte that begins none (or is empty).
size_t utf8_sequence_length(std::string_view text);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace gangway
