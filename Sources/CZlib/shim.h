#ifndef TILTD_CZLIB_SHIM_H
#define TILTD_CZLIB_SHIM_H
#include <zlib.h>
#endif
