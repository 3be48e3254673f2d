// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Starts `body` on a new detached POSIX thread named `name` (the kernel keeps 15 bytes of it,
/// shown by `top -H` and in core dumps). What Foundation's `Thread` did here, without Foundation.
func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
    }
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let rc = pthread_create(
        &thread, &attributes,
        { raw in
            let start = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Start
            // pthread_setname_np is not in Swift's Glibc module; its Linux implementation is this write.
            let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if fd >= 0 {
                let name = Array(start.name.utf8.prefix(15))
                _ = write(fd, name, name.count)
                close(fd)
            }
            start.body()
            return nil
        }, start)
    pthread_attr_destroy(&attributes)
    precondition(rc == 0, "pthread_create failed: \(rc)")
}
