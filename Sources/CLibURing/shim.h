#ifndef TILTD_CLIBURING_SHIM_H
#define TILTD_CLIBURING_SHIM_H
#include <liburing.h>
#endif
