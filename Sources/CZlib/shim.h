// SPDX-License-Identifier: Apache-2.0
#ifndef TILTD_CZLIB_SHIM_H
#define TILTD_CZLIB_SHIM_H
#include <zlib.h>
#endif
