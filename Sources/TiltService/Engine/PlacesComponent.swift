// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors

/// Where the wearer is: the course filter, snooze, geofences (config `[[geofence]]` and the
/// places file), the "nearby" deck; the `snooze` command; the `[places]`, `[[geofence]]`,
/// `[snooze]` and `[course]` sections. Loop-confined (see `Component`).
final class PlacesComponent: Component {
    let context: EngineContext
    private var course: CourseFilter
    private var snooze: SnoozeGate
    private var monitor = GeofenceMonitor(fences: [])
    private var nearby: NearbyPlaces
    private(set) var lastFix: Fix?
    private var placesCount = 0

    init(context: EngineContext) {
        self.context = context
        let c = context.config
        course = CourseFilter(onSpeed: c.course.onSpeed, offSpeed: c.course.offSpeed)
        snooze = SnoozeGate(distance: c.snooze.distance)
        nearby = NearbyPlaces(places: [], options: c.places.nearby)
    }

    let commands = ["snooze"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        let distance = command.number("distance_m")
        if let distance { snooze.distance = distance }
        let event = snooze.snooze(at: lastFix?.hasPosition == true ? lastFix : nil)
        reply.ok(["until_moved_m": .number(snooze.distance)])
        context.publish(event)
    }

    func addStatus(to o: inout JSONObject) {
        if let f = lastFix { o["fix"] = .object(Event.fixFields(f)) }
        o["places"] = .int(Int64(placesCount))
        o["inside"] = .array(monitor.insideKeys.map { .string($0) })
        o["snoozing"] = .bool(snooze.snoozing)
    }

    /// A GPS fix: course filter → snooze gate → `fix` line → nearby and geofences. Returns
    /// the fix and its geofence events when it has a position and is not snoozed.
    func ingest(_ raw: Fix) -> (Fix, [GeofenceMonitor.Event])? {
        let fix = course.filter(raw)
        lastFix = fix
        if let t = fix.time { context.lastFixTime = t }
        context.stats.lastFixAt = MonotonicClock.nanoseconds()
        switch snooze.check(fix) {
        case .suppress: return nil
        case .woke(let w): context.publish(w.event)
        case .pass: break
        }
        context.publish(.fix(fix))
        guard fix.hasPosition else { return nil }
        nearby.update(fix)
        let events = monitor.update(fix)
        for e in events { context.publish(e.event) }
        return (fix, events)
    }

    /// Names for the "nearby" deck, or why there are none.
    func nearbyPrompts() -> Result<[String], NearbyUnavailable> {
        if let prompts = nearby.prompts() { return .success(prompts) }
        return .failure(
            NearbyUnavailable(
                reason: lastFix?.hasPosition == true
                    ? "no places within \(Int(context.config.places.nearby.radius)) m" : "no GPS fix yet"))
    }

    // MARK: configuration

    /// The places file read and indexed, off the loop.
    struct Staged: Sendable {
        var placesCount: Int
        var monitor: GeofenceMonitor
        var nearby: NearbyPlaces
    }

    /// Off the loop: reads the places file (bounded) and builds the fences and the nearby index.
    static func stage(_ config: Configuration) throws(ConfigError) -> Staged {
        let places = try loadPlaces(config)
        let fences =
            config.geofences.map(Fence.init)
            + (config.places.asFences ? places.map { Fence($0, defaults: config.places.fenceDefaults) } : [])
        return Staged(
            placesCount: places.count, monitor: GeofenceMonitor(fences: fences),
            nearby: NearbyPlaces(places: places, options: config.places.nearby))
    }

    static func loadPlaces(_ config: Configuration) throws(ConfigError) -> [Place] {
        guard let path = config.places.file else { return [] }
        do {
            return try PlacesFile.parse(try BoundedFile.read(path, limit: BoundedFile.placesLimit)).places
        } catch let e as BoundedFile.Failure {
            throw config.error("places.file", e.description)
        } catch {
            throw config.error("places.file", "\(path): \(error)")
        }
    }

    /// On the loop: swaps in the new fences and index; visits to unchanged fences go on, and
    /// an active snooze keeps its origin with the new distance.
    func apply(_ staged: Staged, config: Configuration) {
        var monitor = staged.monitor
        monitor.continueVisits(from: self.monitor)
        self.monitor = monitor
        nearby = staged.nearby
        if let f = lastFix, f.hasPosition { nearby.update(f) }
        placesCount = staged.placesCount
        snooze.distance = config.snooze.distance
        course.onSpeed = config.course.onSpeed
        course.offSpeed = config.course.offSpeed
    }
}
