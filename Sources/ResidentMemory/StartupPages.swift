// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Gives back the code pages a long-running process needed only to start.
///
/// Why: a process's resident set counts every page of its binary and libraries it has *mapped*,
/// not the pages it keeps using. Starting tiltd parses arguments, reads the TOML config, opens
/// the store, parses libiio's XML context and registers Swift metadata — and each page fault
/// along the way maps a whole block around the page it needed (the kernel's fault-around, 64 KiB;
/// on kernels that keep files in large folios, the whole folio). So the idle daemon kept about
/// 13 MB of code mapped that it no longer ran (`Referenced:` in /proc/PID/smaps after
/// clear_refs: 1.0–1.4 MB of it is touched in 5 s). Mapped executable pages are also the
/// ones the kernel reclaims last under memory pressure.
///
/// `release()` unmaps the read-only mappings of the program's and its libraries' files
/// (`madvise MADV_DONTNEED`). The pages stay in the page cache; whatever code runs next faults its page
/// back in from there (a minor fault, no disk read), and the rest is left for the kernel to
/// reclaim like any other cached file data. Call it once, when startup is over.
///
/// Safety: MADV_DONTNEED on a private mapping also drops pages the process changed (copy on
/// write), which would lose them. A read-only mapping's pages are changed only by the dynamic
/// loader before it made them read-only (relocations, RELRO) or by a debugger (breakpoints), so
/// a mapping is released only when /proc/self/smaps shows no anonymous (changed) page in it;
/// writable mappings, devices and pseudo-files are never touched.
public enum StartupPages {
    /// What `release()` did.
    public struct Report: Sendable, Equatable {
        /// Mappings unmapped.
        public var mappings = 0
        /// Resident bytes of those mappings just before.
        public var releasedBytes = 0
        /// The process's resident set (VmRSS) just before, bytes.
        public var residentBefore = 0
        /// The process's resident set (VmRSS) just after, bytes.
        public var residentAfter = 0
        /// Mappings that changed between reading smaps and releasing them (madvise: ENOMEM).
        public var skipped = 0
        /// Set when madvise refused (e.g. a seccomp filter); nothing else is tried after it.
        public var failure: String?
    }

    /// Unmaps the read-only file-backed mappings whose pages are all unchanged (see the type's
    /// comment). Reads /proc/self/smaps; never throws: a system without it just reports 0.
    public static func release() -> Report {
        var report = Report()
        report.residentBefore = residentBytes()
        guard let smaps = readProcFile("/proc/self/smaps") else { return report }
        for mapping in releasable(smaps: smaps) {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(start, Int(mapping.end - mapping.start), MADV_DONTNEED) != 0 {
                // ENOMEM: part of the range is no longer mapped; another thread unmapped or
                // remapped it since smaps was read. That mapping is skipped, the rest go on.
                if errno == ENOMEM {
                    report.skipped += 1
                    continue
                }
                report.failure = SystemError("madvise").description
                break
            }
            report.mappings += 1
            report.releasedBytes += mapping.residentBytes
        }
        report.residentAfter = residentBytes()
        return report
    }

    /// One mapping that may be released.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var residentBytes: Int
    }

    /// The mappings of `smaps` (the text of /proc/PID/smaps) that are private, not writable,
    /// backed by a regular file that the process also maps executable (the program and its
    /// libraries), resident, and hold no anonymous page.
    ///
    /// Why only code files: a data file another thread maps for a moment (a recording read
    /// whole) can be unmapped between reading smaps and madvise, and its range reused by a new
    /// mapping whose pages MADV_DONTNEED would drop. The program and its libraries stay mapped.
    static func releasable(smaps: String) -> [Mapping] {
        var candidates: [(mapping: Mapping, path: String)] = []
        var codeFiles: Set<String> = []
        var current: (mapping: Mapping, path: String, eligible: Bool, anonymous: Int)?
        func finish() {
            if let c = current, c.eligible, c.anonymous == 0, c.mapping.residentBytes > 0 {
                candidates.append((c.mapping, c.path))
            }
        }
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                // "Rss:     1234 kB", "Anonymous:  0 kB", ...
                guard current != nil, fields.count >= 2, let kib = Int(fields[1]) else { continue }
                if first == "Rss:" { current?.mapping.residentBytes = kib * 1024 }
                if first == "Anonymous:" { current?.anonymous = kib }
                continue
            }
            // "start-end perms offset dev inode [path]"
            let bounds = first.split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16)
            else { continue }
            finish()
            let perms = fields.count > 1 ? Array(fields[1].utf8) : []
            let path = fields.count > 5 ? fields[5...].joined(separator: " ") : ""
            let eligible =
                perms.count == 4 && perms[1] == UInt8(ascii: "-") && perms[3] == UInt8(ascii: "p")
                && path.hasPrefix("/") && !path.hasPrefix("/dev/") && !path.hasSuffix(" (deleted)")
            if perms.count == 4 && perms[2] == UInt8(ascii: "x") && path.hasPrefix("/") { codeFiles.insert(path) }
            current = (Mapping(start: start, end: end, residentBytes: 0), path, eligible, 0)
        }
        finish()
        return candidates.filter { codeFiles.contains($0.path) }.map(\.mapping)
    }

    /// VmRSS from /proc/self/statm, bytes (0 if unreadable).
    public static func residentBytes() -> Int {
        guard let statm = readProcFile("/proc/self/statm") else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// A /proc file's text (their size is not known before reading), or nil.
    static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let bytes = try? Syscall.readAll(fd) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
