// SPDX-License-Identifier: Apache-2.0
#ifndef TILTD_CLIBURING_SHIM_H
#define TILTD_CLIBURING_SHIM_H
/* liburing.h defines _XOPEN_SOURCE and _GNU_SOURCE when they are not defined, which would make
 * glibc's headers declare some types (fd_set, …) differently in this module than in Swift's
 * Glibc module, and the two would not merge. A libc header first fixes glibc's feature set as
 * Glibc sees it; liburing.h's defines then come too late to change it. */
#include <sys/types.h>
#include <liburing.h>
#endif
