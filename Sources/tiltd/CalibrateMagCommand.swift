// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import TiltCommandLine
import TiltCore
import TiltPlatform
import TiltService

/// `tiltd calibrate mag`: turn the device through all directions; fit hard and soft iron
/// (`MagCalibration`) and write `mag_offset` and `mag_matrix` to the calibration file.
struct CalibrateMag: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mag",
        abstract: "Magnetometer hard- and soft-iron calibration: turn the device through all directions.",
        discussion: """
            Live, turn the device slowly through every direction — each face up and down, and the \
            turns in between — away from iron and magnets, until the coverage line says it is \
            enough (or --timeout). With --replay, the recording's mx,my,mz (recording v2) are used. \
            Prints the fit's residual and the field strength, next to the World Magnetic Model's \
            at --lat/--lon when given. Writes mag_offset and mag_matrix only. Exit status: 0 when \
            written; 3 when the fit refuses the readings: too few, not covering enough directions \
            (what is missing is printed), or not fitting an ellipsoid (nothing written); 1 on any \
            other error, such as no magnetometer samples at all (nothing written).
            """)

    /// The exit status when the fit refuses the readings (too few, too little coverage, no fit).
    static let poorCoverage: Int32 = 3

    @OptionGroup var common: CalibrationOptions

    @Option(help: "Live: give up after this many seconds.")
    var timeout: Double = 120

    @Option(help: "Latitude, degrees, for the expected field strength (World Magnetic Model).")
    var lat: Double?

    @Option(help: "Longitude, degrees, with --lat.")
    var lon: Double?

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard (lat == nil) == (lon == nil) else { throw ValidationError("--lat and --lon go together") }
        if let lat, !(-90...90).contains(lat) { throw ValidationError("--lat must be within -90…90") }
        if let lon, !(-180...180).contains(lon) { throw ValidationError("--lon must be within -180…180") }
    }

    func run() throws {
        let session = try CalibrationSession(common)
        let live = session.isLive
        if live {
            print("Turn the device slowly through all directions (every face up and down), away from iron…")
        }
        final class State {
            var fields: [Vector3] = []; var last = ""; var first: Nanoseconds?; var timedOut = false
            var lastShown: Nanoseconds?; var firstField: Nanoseconds?; var lastField: Nanoseconds?
        }
        let st = State()
        let limit = timeout
        func coverage() -> MagCalibration.Coverage {
            // The middle of each axis's range: a cheap centre that is good enough to guide.
            var lo = st.fields[0], hi = st.fields[0]
            for f in st.fields {
                lo = Vector3(min(lo.x, f.x), min(lo.y, f.y), min(lo.z, f.z))
                hi = Vector3(max(hi.x, f.x), max(hi.y, f.y), max(hi.z, f.z))
            }
            return MagCalibration.coverage(st.fields, center: (lo + hi) / 2)
        }
        _ = try session.streamFields(
            sample: { s in
                if st.first == nil { st.first = s.t }
                if live && Double(s.t - st.first!) * 1e-9 > limit { st.timedOut = true; return true }
                return false
            },
            field: { m in
                st.fields.append(m.field)
                if st.firstField == nil { st.firstField = m.t }
                st.lastField = m.t
                // The coverage line at most twice a second (it scans every reading).
                guard live, st.lastShown.map({ m.t - $0 >= 500_000_000 }) ?? true else { return false }
                st.lastShown = m.t
                let c = coverage()
                session.status("  \(st.fields.count) readings, \(c)", last: &st.last)
                // The rough centre guides; the fit's own coverage decides when to stop.
                return c.isSufficient && st.fields.count >= 4 * MagCalibration.minimumSamples
                    && MagCalibration.fitCoverage(st.fields)?.isSufficient == true
            })
        session.endStatus(&st.last)
        if st.timedOut { print("timed out after \(Int(limit)) s") }
        guard !st.fields.isEmpty else {
            throw ValidationFailure(
                message: "tiltd calibrate mag: no magnetometer samples from the \(session.sourceName) "
                    + "(no magnetometer found, or a recording without mx,my,mz); nothing written")
        }
        let fit: MagCalibration.Fit
        do { fit = try MagCalibration.fit(st.fields) } catch {
            StandardStream.error.write("tiltd calibrate mag: refused: \(error); nothing written\n".utf8)
            throw ExitCode(Self.poorCoverage)
        }
        // Over how long, and so how many a second the source delivered (the kernel rig compares it
        // with the magnetometer's reported rate).
        let span = Double((st.lastField ?? 0) - (st.firstField ?? 0)) * 1e-9
        let over = span > 0 ? cFormat(" over %.1f s (%.2f a second)", span, Double(st.fields.count - 1) / span) : ""
        print("magnetometer calibration from \(st.fields.count) readings\(over) (\(fit.coverage)):")
        print("  offset \(vec(fit.offset, 3)) µT")
        print("  matrix \(fit.matrix.rowMajor.map { cFormat("%.5f", $0) }.joined(separator: ", "))")
        print(
            cFormat(
                "  residual (RMS of |m_cal| − strength): %.3f µT before → %.3f µT after", fit.residualBefore,
                fit.residual))
        var strength = cFormat("  field strength %.2f µT", fit.fieldStrength)
        if let lat, let lon {
            let year = WorldMagneticModel.decimalYear(
                unixNanoseconds: Int64(saturating: Date.now.timeIntervalSince1970 * 1e9))
            let expected =
                WorldMagneticModel.wmm2025.field(latitude: lat, longitude: lon, decimalYear: year).total / 1000
            strength += cFormat(
                "; the World Magnetic Model expects %.2f µT at %.4f, %.4f (%+.1f %%)", expected, lat, lon,
                (fit.fieldStrength / expected - 1) * 100)
        }
        print(strength)
        try session.save(
            "mag_offset, mag_matrix",
            note: "\(st.fields.count) readings, \(fit.coverage), "
                + cFormat(
                    "residual %.3f → %.3f µT, strength %.2f µT", fit.residualBefore, fit.residual, fit.fieldStrength)
        ) {
            $0.magOffset = fit.offset; $0.magMatrix = fit.matrix
        }
    }
}
