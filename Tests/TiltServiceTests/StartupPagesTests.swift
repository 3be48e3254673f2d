// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import ResidentMemory

final class StartupPagesTests: XCTestCase {
    /// Shaped like /proc/PID/smaps (the first three mappings are tiltd's own, after startup); fields
    /// the parser does not read are left out.
    static let smaps = """
        555555554000-5555561b5000 r-xp 00000000 fe:00 1234 /usr/bin/tiltd
        Size:              12676 kB
        Rss:                8776 kB
        Anonymous:             0 kB
        Referenced:         1376 kB
        5555561b5000-5555561e9000 r--p 00c61000 fe:00 1234 /usr/bin/tiltd
        Size:                208 kB
        Rss:                 532 kB
        Anonymous:           532 kB
        5555561e9000-55555632d000 rw-p 00c95000 fe:00 1234 /usr/bin/tiltd
        Rss:                1340 kB
        Anonymous:           188 kB
        7fd4b5b3b000-7fd4b5b3d000 rw-p 00000000 00:00 0
        Rss:                   8 kB
        Anonymous:             8 kB
        7fd4b6000000-7fd4b6100000 r-xp 00000000 fe:00 77 /usr/lib/x86_64-linux-gnu/libc.so.6
        Rss:                 752 kB
        Anonymous:             0 kB
        7fd4b6200000-7fd4b6210000 r--p 00000000 fe:00 78 /usr/lib/x86_64-linux-gnu/libm.so.6
        Rss:                   0 kB
        Anonymous:             0 kB
        7fd4b6300000-7fd4b6301000 r--s 00000000 00:05 9 /dev/iio:device0
        Rss:                   4 kB
        Anonymous:             0 kB
        7fd4b6400000-7fd4b6401000 r--p 00000000 fe:00 79 /tmp/old copy (deleted)
        Rss:                   4 kB
        Anonymous:             0 kB
        7fd4b6500000-7fd4b6501000 r--p 00000000 fe:00 80 /dev/shm/x
        Rss:                   4 kB
        Anonymous:             0 kB
        7fd4b6580000-7fd4b6590000 r-xp 00000000 fe:00 81 /opt/a lib/libx.so
        Rss:                   0 kB
        Anonymous:             0 kB
        7fd4b6600000-7fd4b6602000 r--p 00010000 fe:00 81 /opt/a lib/libx.so
        Rss:                   8 kB
        Anonymous:             0 kB
        7fd4b6700000-7fd4b6708000 r--p 00000000 fe:00 82 /var/lib/tiltd/recording.csv
        Rss:                  32 kB
        Anonymous:             0 kB
        7ffd1e3f0000-7ffd1e3f2000 r-xp 00000000 00:00 0                          [vdso]
        Rss:                   8 kB
        Anonymous:             0 kB
        """

    /// Code files only: the mapped recording (a data file, mapped by nobody executable) stays.
    func testOnlyUnchangedReadOnlyFileMappingsAreReleasable() {
        let found = StartupPages.releasable(smaps: Self.smaps)
        XCTAssertEqual(
            found,
            [
                .init(start: 0x5555_5555_4000, end: 0x5555_561b_5000, residentBytes: 8776 * 1024),
                .init(start: 0x7fd4_b600_0000, end: 0x7fd4_b610_0000, residentBytes: 752 * 1024),
                .init(start: 0x7fd4_b660_0000, end: 0x7fd4_b660_2000, residentBytes: 8 * 1024),
            ])
    }

    func testReleasingThisProcessKeepsItRunningAndShrinksItsResidentSet() throws {
        let report = StartupPages.release()
        XCTAssertNil(report.failure)
        XCTAssertGreaterThan(report.mappings, 0)
        XCTAssertGreaterThan(report.releasedBytes, 0)
        XCTAssertLessThan(report.residentAfter, report.residentBefore)
        // The code and constant data just unmapped come back from the page cache when used.
        let again = StartupPages.releasable(smaps: try XCTUnwrap(StartupPages.readProcFile("/proc/self/smaps")))
        XCTAssertFalse(again.isEmpty)
    }
}
