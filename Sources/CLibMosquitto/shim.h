// SPDX-License-Identifier: Apache-2.0
#ifndef TILTD_CLIBMOSQUITTO_SHIM_H
#define TILTD_CLIBMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
