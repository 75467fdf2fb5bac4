// Beast's string_view (the type of header values, targets and method names) as a
// std::string_view, for the code of both servers that reads requests.
#pragma once

#include <boost/beast/core/string.hpp>
#include <string_view>

namespace gangway {

inline std::string_view as_view(boost::beast::string_view text) {
  return {text.data(), text.size()};
}

}  // namespace gangway
