// SPDX-License-Identifier: Apache-2.0
#ifndef TILTD_CLIBIIO_SHIM_H
#define TILTD_CLIBIIO_SHIM_H
#include <iio.h>
#endif
