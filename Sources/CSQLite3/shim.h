#ifndef TILTD_CSQLITE3_SHIM_H
#define TILTD_CSQLITE3_SHIM_H
#include <sqlite3.h>
#endif
