#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a running process's resident pages of one binary lie: by ELF section, and by the Swift
module of the nearest symbol (a guide for making the binary lean, issue 15).

    bench/footprint/resident.py PID BINARY     # as root (reads /proc/PID/pagemap)

A file-backed page counts in RSS once it is mapped, and the kernel maps up to 64 KiB around each
page a fault needs (fault-around) when the file is in the page cache, so code spread over a large
binary shows as resident well beyond what runs. Only the BINARY's own mappings are counted.
"""
import bisect
import collections
import re
import struct
import subprocess
import sys

PAGE = 4096


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pid, binary = sys.argv[1], sys.argv[2]
    target = subprocess.run(["readlink", "-f", binary], capture_output=True, text=True).stdout.strip()
    maps = []
    for line in open(f"/proc/{pid}/maps"):
        p = line.split()
        if len(p) >= 6 and p[5] == target:
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            maps.append((lo, hi, p[1], int(p[2], 16)))
    if not maps:
        sys.exit(f"{target} is not mapped by process {pid}")
    load_bias = maps[0][0] - maps[0][3]  # first mapping: file offset 0 at the lowest address

    sections = []
    for l in subprocess.run(["readelf", "-SW", target], capture_output=True, text=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
        if m and int(m.group(2), 16):
            sections.append((int(m.group(2), 16), int(m.group(3), 16), m.group(1)))
    symbols = []
    for l in subprocess.run(["nm", "-n", "--defined-only", target], capture_output=True, text=True).stdout.splitlines():
        q = l.split()
        if len(q) == 3:
            symbols.append((int(q[0], 16), q[2]))
    addresses = [a for a, _ in symbols]

    def section_of(addr: int) -> str:
        for start, size, name in sections:
            if start <= addr < start + size:
                return name
        return "?"

    def module_of(name: str) -> str:
        m = re.match(r"\$s(\d+)", name)  # a Swift symbol whose module name comes first
        if m:
            return name[m.end():m.end() + int(m.group(1))]
        if name.startswith("$s"):
            return "Swift standard library / specializations"
        if name.startswith("_ZN6icu") or name.startswith("_ZNK6icu") or "icu" in name.lower():
            return "ICU"
        return "C / C++"

    by_section = collections.Counter()
    by_module = collections.Counter()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for lo, hi, _, _ in maps:
            for va in range(lo, hi, PAGE):
                pagemap.seek(va // PAGE * 8)
                if not (struct.unpack("Q", pagemap.read(8))[0] >> 63) & 1:
                    continue
                addr = va - load_bias
                section = section_of(addr)
                by_section[section] += 1
                if section == ".text":
                    i = bisect.bisect_right(addresses, addr + PAGE // 2) - 1
                    by_module[module_of(symbols[i][1]) if i >= 0 else "?"] += 1
    mib = lambda n: f"{n * PAGE / 1e6:7.2f} MB"
    print(f"resident pages of {target} in process {pid}: {mib(sum(by_section.values()))}")
    print("by section:")
    for name, n in by_section.most_common(12):
        print(f"  {mib(n)}  {name}")
    print(".text by module (nearest symbol):")
    for name, n in by_module.most_common(12):
        print(f"  {mib(n)}  {name}")


main()
