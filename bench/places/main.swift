// SPDX-License-Identifier: Apache-2.0
// PlacesBench: cost per GPS fix of the place pipeline with 100,000 places.
//
// 100,000 places are scattered (fixed seed) over a 30 km × 30 km metro area around central Berlin,
// ~45 % of them food places; every place is also a 30 m geofence. A 3-hour walk (1 fix/s, 1.4 m/s,
// random turns, GPS noise) is replayed through CourseFilter → GeofenceMonitor → QuestGrid →
// NearbyPlaces (update, which refreshes the prompt list after every 25 m moved, and prompts()).
// Prints µs per fix, total and per stage, and separately the cost of one fresh nearby query
// (what a list refresh or prompts(near:) costs). Target: ≤ 50 µs per fix.
//
// Run: swift run -c release PlacesBench [places] [fixes]

import Foundation
import TiltCore

struct Rng {
    var s: UInt64
    mutating func next() -> UInt64 {
        s &+= 0x9E37_79B9_7F4A_7C15
        var z = s
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func gauss() -> Double { (-2 * log(max(1e-300, unit()))).squareRoot() * cos(2 * .pi * unit()) }
}

let args = CommandLine.arguments
let placeCount = args.count > 1 ? Int(args[1]) ?? 100_000 : 100_000
let fixCount = args.count > 2 ? Int(args[2]) ?? 10_800 : 10_800
let centre = GeoPoint(lat: 52.52, lon: 13.40)
let halfSide = 15_000.0
var rng = Rng(s: 2024)

let categories = ["cafe", "restaurant", "bakery", "food market", "shop", "museum", "pharmacy", "park", "bar", "office"]
let weights = [0.15, 0.2, 0.08, 0.02, 0.2, 0.05, 0.05, 0.05, 0.1, 0.1]
func pickCategory(_ rng: inout Rng) -> String {
    var u = rng.unit()
    for (c, w) in zip(categories, weights) { if u < w { return c }; u -= w }
    return "other"
}

let metresPerDegLat = Geo.earthRadius * .pi / 180
let metresPerDegLon = metresPerDegLat * cos(centre.lat * .pi / 180)
func offset(_ e: Double, _ n: Double) -> GeoPoint {
    GeoPoint(lat: centre.lat + n / metresPerDegLat, lon: centre.lon + e / metresPerDegLon)
}

var places: [Place] = []
places.reserveCapacity(placeCount)
for i in 0..<placeCount {
    let p = offset((rng.unit() * 2 - 1) * halfSide, (rng.unit() * 2 - 1) * halfSide)
    places.append(Place(id: "p\(i)", name: "Place \(i)", category: pickCategory(&rng), point: p))
}

// The walk: 1.4 m/s, heading changes slowly, reflects off the area's edge; AR(1) GPS noise.
var fixes: [Fix] = []
var e = 0.0, n = 0.0, heading = 0.3, ne = 0.0, nn = 0.0
for k in 0..<fixCount {
    heading += rng.gauss() * 0.1
    e += 1.4 * sin(heading); n += 1.4 * cos(heading)
    if abs(e) > halfSide * 0.9 || abs(n) > halfSide * 0.9 { heading += .pi }
    ne = 0.95 * ne + rng.gauss() * 0.8; nn = 0.95 * nn + rng.gauss() * 0.8
    let p = offset(e + ne, n + nn)
    fixes.append(Fix(mode: 3, time: Int64(k) * 1_000_000_000, lat: p.lat, lon: p.lon, speed: 1.4, eph: 6))
}
// Steer the walk through a known place so the enter path runs too.
let visitAt = fixes.count / 2
for k in visitAt..<(visitAt + 700) where k < fixes.count {
    let p = places[0].point
    fixes[k] = Fix(mode: 3, time: fixes[k].time, lat: p.lat, lon: p.lon, speed: 0, eph: 5)
}

let clock = ContinuousClock()
let buildStart = clock.now
var monitor = GeofenceMonitor(fences: places.map { Fence($0, defaults: Fence.PlaceDefaults()) })
var quests = QuestGrid()
var nearby = NearbyPlaces(places: places)
var course = CourseFilter()
let buildTime = clock.now - buildStart

func micros(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
}

var tGeofence = Duration.zero, tQuest = Duration.zero, tNearby = Duration.zero, tCourse = Duration.zero
var events = 0, offers = 0, promptTotal = 0, freshTotal = 0
var tFresh = Duration.zero
let fresh = true
// Warm-up pass over the first 500 fixes on copies (caches, page faults), then the measured pass.
do {
    var m = monitor, q = quests, nb = nearby, c = course
    for f in fixes.prefix(500) { let g = c.filter(f); _ = m.update(g); _ = q.update(g); nb.update(g); _ = nb.prompts() }
}
let totalStart = clock.now
for f in fixes {
    let a = clock.now
    let g = course.filter(f)
    let b = clock.now
    events += monitor.update(g).count
    let c = clock.now
    if quests.update(g) != nil { offers += 1 }
    let d = clock.now
    nearby.update(g)
    promptTotal += nearby.prompts()?.count ?? 0
    let e = clock.now
    if fresh { freshTotal += nearby.prompts(near: g).count }
    let e2 = clock.now
    tFresh += e2 - e
    tCourse += b - a; tGeofence += c - b; tQuest += d - c; tNearby += e - d
}
let total = clock.now - totalStart - tFresh
let nFix = Double(fixes.count)

print(
    "PlacesBench: \(placeCount) places (\(nearby.places.count) food), \(fixes.count) fixes, index build \(String(format: "%.0f", micros(buildTime) / 1000)) ms"
)
print(String(format: "  µs per fix, total           %8.2f   (target ≤ 50)", micros(total) / nFix))
print(String(format: "    CourseFilter              %8.2f", micros(tCourse) / nFix))
print(String(format: "    GeofenceMonitor           %8.2f   (%d events)", micros(tGeofence) / nFix, events))
print(String(format: "    QuestGrid                 %8.2f   (%d offers)", micros(tQuest) / nFix, offers))
print(
    String(
        format: "    NearbyPlaces              %8.2f   (update + prompts(); list recomputed after 25 m)",
        micros(tNearby) / nFix))
print(
    String(
        format: "  worst case, fresh query each fix %5.2f", (micros(total) - micros(tNearby) + micros(tFresh)) / nFix))
print(
    String(
        format: "  NearbyPlaces fresh query    %8.2f   (prompts(near:), %.0f names of ≤ 100; not in the total)",
        micros(tFresh) / nFix, Double(freshTotal) / nFix))
