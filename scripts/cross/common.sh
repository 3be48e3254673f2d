# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Shared by scripts/cross-build, scripts/test-arm64 and scripts/build-deb (sourced, not run).
#
# The cross toolchain is made only from Debian's packages and kept in one cache directory:
#
#   $TILTD_CROSS_CACHE (default: ${XDG_CACHE_HOME:-~/.cache}/tiltd-cross)
#     sid-amd64/            Debian sid chroot with Debian's `swiftlang` (the compiler; it needs
#                           sid's glibc, so it runs chrooted, not on the host)
#     bookworm-arm64/       Debian 12 arm64 sysroot: libc6-dev, libstdc++/libgcc, libiio-dev,
#                           libgps-dev, libsqlite3-dev, libsystemd-dev — unpacked, not configured —
#                           plus the arm64 Swift runtime from `swiftlang:arm64`/`libswiftlang:arm64`
#                           of exactly the compiler's version (static libraries, modules, swiftrt.o)
#     sdks/tiltd-arm64.artifactbundle/   the Swift SDK bundle pointing at that sysroot
#     testroot-bookworm-arm64/           a clean, configured Debian 12 arm64 root for scripts/test-arm64
#
# Everything that needs mounts runs in a private mount namespace (unshare -m), so nothing stays
# mounted on the host when a script ends or dies.

cross_cache=${TILTD_CROSS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tiltd-cross}
debian_mirror=${TILTD_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# cross_need_root "$0" "$@": re-runs the calling script as root through sudo when it is not root
# (chroot, debootstrap and mounts need root), keeping the cache directory of the calling user and
# remembering who called, so files in the work tree stay that user's.
cross_need_root() {
    [ "$(id -u)" -eq 0 ] && return 0
    command -v sudo >/dev/null 2>&1 || { echo "$(basename "$1"): needs root (or sudo)" >&2; exit 1; }
    local script=$1; shift
    exec sudo env "TILTD_CROSS_CACHE=$cross_cache" "TILTD_CROSS_USER=$(id -u):$(id -g)" \
        "TILTD_DEBIAN_MIRROR=$debian_mirror" "PATH=$PATH" "$script" "$@"
}

# The user:group that owns the work tree's build output (the caller of sudo, or root).
# shellcheck disable=SC2034  # used by the scripts that source this file
cross_user=${TILTD_CROSS_USER:-$(id -u):$(id -g)}

cross_log() { printf '%s: %s\n' "${cross_tool:-cross}" "$*" >&2; }
cross_die() { cross_log "$*"; exit 1; }

# cross_require_host_tools TOOL...: fails with the Debian package to install for each missing tool.
cross_require_host_tools() {
    local missing=() t
    for t in "$@"; do
        case "$t" in
            debootstrap) command -v debootstrap >/dev/null || missing+=(debootstrap) ;;
            qemu-aarch64-static) command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static) ;;
            unshare|nsenter) command -v "$t" >/dev/null || missing+=(util-linux) ;;
            systemd-nspawn) command -v systemd-nspawn >/dev/null || missing+=(systemd-container) ;;
            *) command -v "$t" >/dev/null || missing+=("$t") ;;
        esac
    done
    [ ${#missing[@]} -eq 0 ] || cross_die "missing host packages: ${missing[*]} (sudo scripts/install-deps --cross)"
}

# cross_chroot_script ROOT USERSPEC SCRIPT [BIND...]: runs the bash SCRIPT inside the chroot ROOT as
# USERSPEC (uid:gid), in a private mount namespace with /proc, /dev, /sys, DNS, the cache directory
# and each BIND directory (for example the work tree) mounted at their own paths.
cross_chroot_script() {
    local root=$1 userspec=$2 script=$3; shift 3
    local binds=("$cross_cache" "$@")
    # The host's git URL rewrites (local package mirrors) apply inside too; /opt/swift-packages
    # is where this machine keeps them.
    [ -d /opt/swift-packages ] && binds+=(/opt/swift-packages)
    unshare -m --propagation private bash -euc '
        root=$1 userspec=$2 script=$3; shift 3
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount --rbind /sys "$root/sys"
        for d in "$@"; do mkdir -p "$root$d"; mount --bind "$d" "$root$d"; done
        cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
        if [ -f /etc/gitconfig ]; then cp /etc/gitconfig "$root/etc/gitconfig"; fi
        exec chroot --userspec="$userspec" "$root" /usr/bin/env -i HOME=/tmp/cross-home \
            PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 /bin/bash -euc "$script"
    ' cross-chroot "$root" "$userspec" "$script" "${binds[@]}"
}

# cross_with_binfmt COMMAND...: runs COMMAND where the kernel starts aarch64 ELF files with
# qemu-aarch64-static (binfmt_misc), so a chroot into an arm64 root works. Uses the host's
# registration when there is one; otherwise registers it (flag F: the interpreter is opened now, so
# it works inside chroots) in a private mount of binfmt_misc and removes it again afterwards.
cross_with_binfmt() {
    local qemu
    qemu=$(command -v qemu-aarch64-static) || cross_die "qemu-aarch64-static missing (apt install qemu-user-static)"
    unshare -m --propagation private bash -euc '
        qemu=$1; shift
        bf=/proc/sys/fs/binfmt_misc
        [ -f "$bf/register" ] || mount -t binfmt_misc binfmt_misc "$bf"
        added=""
        if ! grep -qs "^enabled" "$bf/qemu-aarch64"; then
            [ -e "$bf/qemu-aarch64" ] && echo -1 > "$bf/qemu-aarch64"
            magic="\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00"
            mask="\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"
            printf "%s" ":qemu-aarch64:M::$magic:$mask:$qemu:F" > "$bf/register"
            added=1
        fi
        rc=0; "$@" || rc=$?
        if [ -n "$added" ]; then echo -1 > "$bf/qemu-aarch64"; fi
        exit $rc
    ' cross-binfmt "$qemu" "$@"
}
