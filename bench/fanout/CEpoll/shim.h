// SPDX-License-Identifier: Apache-2.0
// epoll(7) for Swift: the Glibc module does not include <sys/epoll.h>. Declarations only.
#include <sys/epoll.h>
