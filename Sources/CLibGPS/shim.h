// SPDX-License-Identifier: Apache-2.0
#ifndef TILTD_CLIBGPS_SHIM_H
#define TILTD_CLIBGPS_SHIM_H
#include <gps.h>
#endif
