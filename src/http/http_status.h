// The reason phrase of an HTTP status line ("Bad Request", "Too Many Requests", ...), for the
// status codes gangway's servers answer with.
#pragma once

namespace gangway {

// "Unknown" for a code the servers never send.
const char* http_status_text(int status);

}  // namespace gangway
