import FoundationEssentials
import Glibc
import TiltCore
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
        course = CourseFilter(onSpeed: c.courseOnSpeed, offSpeed: c.courseOffSpeed)
        snooze = SnoozeGate(distance: c.snoozeDistance)
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
        snooze.distance = config.snoozeDistance
        course.onSpeed = config.courseOnSpeed
        course.offSpeed = config.courseOffSpeed
    }
}

// MARK: [places], [[geofence]], [snooze], [course]

extension Configuration {
    /// `[places]`: the places file and how places act as fences and prompts.
    public struct Places: Sendable, Equatable {
        /// A GeoJSON file of places (absolute once loaded).
        public var file: String?
        /// Whether every place is also a geofence.
        public var asFences = true
        /// Radius, dwell, cooldown and credit categories of places' fences.
        public var fenceDefaults = Fence.PlaceDefaults()
        /// The "nearby" deck's radius, categories and size.
        public var nearby = NearbyPlaces.Options()
        /// The defaults.
        public init() {}
    }

    mutating func readPlaces(_ t: inout TableReader, base: String) throws(ConfigError) {
        if let f = try t.optionalString("file") { places.file = Self.resolve(f, base: base) }
        places.asFences = try t.bool("as_fences", default: places.asFences)
        places.fenceDefaults.radius = try t.double(
            "fence_radius_m", default: places.fenceDefaults.radius, in: 1...100_000)
        places.fenceDefaults.dwell = try t.double("fence_dwell_s", default: places.fenceDefaults.dwell, in: 0...86_400)
        places.fenceDefaults.cooldown = try t.double(
            "fence_cooldown_s", default: places.fenceDefaults.cooldown, in: 0...31_536_000)
        if let cats = try t.strings("credit_categories") {
            places.fenceDefaults.creditCategories = Set(cats.map(Place.normalizedCategory))
        }
        places.nearby.radius = try t.double("nearby_radius_m", default: places.nearby.radius, in: 10...100_000)
        if let cats = try t.strings("nearby_categories") {
            places.nearby.categories = Set(cats.map(Place.normalizedCategory))
        }
        places.nearby.limit = try t.int("nearby_limit", default: places.nearby.limit, in: 1...10_000)
    }

    /// One `[[geofence]]` table.
    mutating func readGeofence(_ t: inout TableReader) throws(ConfigError) {
        guard let name = try t.optionalString("name") else { throw t.error("name", "every [[geofence]] needs a name") }
        guard !geofences.contains(where: { $0.name == name }) else {
            throw t.error("name", "\"\(name)\" is used by another [[geofence]]")
        }
        guard let lat = try t.optionalDouble("lat", in: -90...90) else {
            throw t.error("lat", "missing (degrees, -90…90)")
        }
        guard let lon = try t.optionalDouble("lon", in: -180...180) else {
            throw t.error("lon", "missing (degrees, -180…180)")
        }
        geofences.append(
            Geofence(
                name: name, lat: lat, lon: lon,
                radius: try t.double("radius_m", default: 50, in: 1...100_000),
                dwell: try t.double("dwell_s", default: Geofence.defaultDwell, in: 0...86_400),
                cooldown: try t.double("cooldown_s", default: Geofence.defaultCooldown, in: 0...31_536_000),
                credit: try t.bool("credit", default: false)))
    }

    mutating func readSnooze(_ t: inout TableReader) throws(ConfigError) {
        snoozeDistance = try t.double("distance_m", default: snoozeDistance, in: 1...100_000)
    }

    mutating func readCourse(_ t: inout TableReader) throws(ConfigError) {
        courseOnSpeed = try t.double("on_speed", default: courseOnSpeed, in: 0...100)
        courseOffSpeed = try t.double("off_speed", default: courseOffSpeed, in: 0...100)
        if courseOffSpeed > courseOnSpeed { throw t.error("off_speed", "must not exceed on_speed (\(courseOnSpeed))") }
    }

    var placesTOML: String {
        let p = places
        var out = "[places]\n"
        if let f = p.file { out += "file = \(TOMLText.quote(f))\n" }
        out +=
            "as_fences = \(p.asFences)\nfence_radius_m = \(p.fenceDefaults.radius)\nfence_dwell_s = \(p.fenceDefaults.dwell)\n"
        out +=
            "fence_cooldown_s = \(p.fenceDefaults.cooldown)\ncredit_categories = \(p.fenceDefaults.creditCategories.sorted())\n"
        out +=
            "nearby_radius_m = \(p.nearby.radius)\nnearby_categories = \(p.nearby.categories.sorted())\nnearby_limit = \(p.nearby.limit)\n"
        for f in geofences {
            out +=
                "\n[[geofence]]\nname = \(TOMLText.quote(f.name))\nlat = \(f.lat)\nlon = \(f.lon)\nradius_m = \(f.radius)\n"
            out += "dwell_s = \(f.dwell)\ncooldown_s = \(f.cooldown)\ncredit = \(f.credit)\n"
        }
        out += "\n[snooze]\ndistance_m = \(snoozeDistance)\n"
        out += "\n[course]\non_speed = \(courseOnSpeed)\noff_speed = \(courseOffSpeed)\n"
        return out
    }
}
