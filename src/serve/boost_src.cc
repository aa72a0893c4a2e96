// Boost.JSON and Boost.URL compiled from their headers: Debian ships their headers in
// libboost1.81-dev, and this spares the build the separate -dev packages of their
// libraries.
#include <boost/json/src.hpp>
#include <boost/url/src.hpp>
