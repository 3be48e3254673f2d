// SPDX-License-Identifier: Apache-2.0
#ifndef TILTD_CSQLITE3_SHIM_H
#define TILTD_CSQLITE3_SHIM_H
#include <sqlite3.h>
#endif
