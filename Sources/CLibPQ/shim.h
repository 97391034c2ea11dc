#ifndef ORBIT_CLIBPQ_SHIM_H
#define ORBIT_CLIBPQ_SHIM_H
// libpq's public API. Debian/Ubuntu: libpq-dev (pkg-config libpq adds -I/usr/include/postgresql).
#include <libpq-fe.h>
#endif
