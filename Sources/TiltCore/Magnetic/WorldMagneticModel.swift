// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// The World Magnetic Model (NOAA NCEI / BGS): the Earth's main field at a place and time, for
/// declination (true heading = magnetic heading + declination) and the field strength and dip a
/// magnetometer should see there. `wmm2025` is the current model (WMM2025Coefficients.swift: the
/// coefficients, their source and terms); `init(cof:)` reads any WMM-format coefficient file.
///
/// The evaluation follows the WMM technical report: geodetic (WGS 84) → geocentric spherical
/// coordinates, Gauss coefficients at the date (main field + secular variation × years since
/// the epoch), the spherical-harmonic sum with Schmidt semi-normalised associated Legendre
/// functions, and the field rotated back to the geodetic frame. Pure: no clock, no I/O.
public struct WorldMagneticModel: Sendable {
    /// The field at one place and time.
    public struct Field: Sendable, Equatable {
        /// North (X), east (Y) and down (Z) components, nT, in the geodetic frame.
        public var north: Double, east: Double, down: Double
        /// Horizontal intensity (H), nT.
        public var horizontal: Double { (north * north + east * east).squareRoot() }
        /// Total intensity (F), nT.
        public var total: Double { (north * north + east * east + down * down).squareRoot() }
        /// Declination (D), degrees east of true north.
        public var declination: Double { atan2(east, north) * 180 / .pi }
        /// Inclination or dip (I), degrees, positive pointing down.
        public var inclination: Double { atan2(down, horizontal) * 180 / .pi }
    }

    /// A coefficient file that could not be read.
    public struct FormatError: Error, Equatable, CustomStringConvertible {
        /// What is wrong, with the line.
        public var description: String
    }

    /// The model's name from the file header, e.g. "WMM-2025".
    public let name: String
    /// The epoch (decimal year) the coefficients are for.
    public let epoch: Double
    /// Highest degree (12 for the WMM).
    public let maxDegree: Int
    // Gauss coefficients g, h (nT) and their secular variation (nT/year), indexed [n][m].
    private let g: [[Double]], h: [[Double]], gDot: [[Double]], hDot: [[Double]]

    /// The current model, WMM2025 (valid 2025.0–2030.0).
    public static let wmm2025: WorldMagneticModel = {
        do { return try WorldMagneticModel(cof: wmm2025COF) } catch { fatalError("WMM2025 coefficients: \(error)") }
    }()

    /// The model's validity: five years from its epoch.
    public var validYears: ClosedRange<Double> { epoch...(epoch + 5) }

    /// Reads a WMM coefficient file (`WMM.COF`): a header "epoch name date", then rows
    /// "n m g h ġ ḣ", ending with a line of 9s.
    public init(cof text: String) throws(FormatError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).makeIterator()
        guard let header = lines.next() else { throw FormatError(description: "empty coefficient file") }
        let head = header.split(separator: " ", omittingEmptySubsequences: true)
        guard head.count >= 2, let epoch = Double(head[0]) else {
            throw FormatError(description: "header is not 'epoch name date': '\(header)'")
        }
        var rows: [(Int, Int, Double, Double, Double, Double)] = []
        var maxDegree = 0
        while let line = lines.next() {
            if line.hasPrefix("9999") { break }
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 6, let n = Int(f[0]), let m = Int(f[1]), n >= 1, m >= 0, m <= n, n <= 30,
                let gv = Double(f[2]), let hv = Double(f[3]), let gd = Double(f[4]), let hd = Double(f[5])
            else { throw FormatError(description: "bad coefficient line '\(line)'") }
            rows.append((n, m, gv, hv, gd, hd))
            maxDegree = max(maxDegree, n)
        }
        guard maxDegree > 0 else { throw FormatError(description: "no coefficients") }
        let zero = [[Double]](repeating: [Double](repeating: 0, count: maxDegree + 1), count: maxDegree + 1)
        var g = zero, h = zero, gDot = zero, hDot = zero
        for (n, m, gv, hv, gd, hd) in rows {
            g[n][m] = gv; h[n][m] = hv; gDot[n][m] = gd; hDot[n][m] = hd
        }
        self.name = String(head[1])
        self.epoch = epoch
        self.maxDegree = maxDegree
        self.g = g; self.h = h; self.gDot = gDot; self.hDot = hDot
    }

    /// The field at geodetic `latitude`, `longitude` (degrees, WGS 84), `height` (km above the
    /// ellipsoid; the geoid's few tens of metres do not matter here) and `decimalYear`.
    public func field(latitude: Double, longitude: Double, height: Double = 0, decimalYear: Double) -> Field {
        let deg = Double.pi / 180
        // Geodetic → geocentric spherical (WGS 84).
        let a = 6378.137, f = 1 / 298.257223563
        let e2 = f * (2 - f)
        let phi = latitude * deg, lambda = longitude * deg
        let rc = a / (1 - e2 * sin(phi) * sin(phi)).squareRoot()
        let p = (rc + height) * cos(phi)
        let z = (rc * (1 - e2) + height) * sin(phi)
        let r = (p * p + z * z).squareRoot()
        let phiC = asin(z / r)

        // Schmidt semi-normalised P_n^m(sin φ′) and dP/dθ (θ the colatitude), by the standard
        // recursions on unnormalised functions, then the Schmidt factors.
        let n = maxDegree
        let ct = sin(phiC), st = max(cos(phiC), 1e-12)  // cos θ, sin θ; st clamped at the poles
        var pnm = [[Double]](repeating: [Double](repeating: 0, count: n + 1), count: n + 1)
        var dp = pnm
        pnm[0][0] = 1
        for i in 1...n {
            for m in 0...i {
                if m == i {
                    pnm[i][m] = st * pnm[i - 1][m - 1]
                    dp[i][m] = st * dp[i - 1][m - 1] + ct * pnm[i - 1][m - 1]
                } else if i == 1 {
                    pnm[i][m] = ct * pnm[i - 1][m]
                    dp[i][m] = ct * dp[i - 1][m] - st * pnm[i - 1][m]
                } else {
                    let k = m > i - 2 ? 0 : Double((i - 1) * (i - 1) - m * m) / Double((2 * i - 1) * (2 * i - 3))
                    let p2 = m > i - 2 ? 0 : pnm[i - 2][m], d2 = m > i - 2 ? 0 : dp[i - 2][m]
                    pnm[i][m] = ct * pnm[i - 1][m] - k * p2
                    dp[i][m] = ct * dp[i - 1][m] - st * pnm[i - 1][m] - k * d2
                }
            }
        }
        // Schmidt factors S[n][m], applied to the functions.
        var s = 1.0
        for i in 1...n {
            s *= Double(2 * i - 1) / Double(i)
            var sm = s
            pnm[i][0] *= sm; dp[i][0] *= sm
            for m in 1...i {
                sm *= (Double(i - m + 1) * (m == 1 ? 2 : 1) / Double(i + m)).squareRoot()
                pnm[i][m] *= sm; dp[i][m] *= sm
            }
        }

        let years = decimalYear - epoch
        let ratio = 6371.2 / r  // geomagnetic reference radius / r
        var xs = 0.0, ys = 0.0, zs = 0.0
        var power = ratio * ratio
        for i in 1...n {
            power *= ratio  // (a/r)^(i+2)
            for m in 0...i {
                let gv = g[i][m] + years * gDot[i][m], hv = h[i][m] + years * hDot[i][m]
                let cm = cos(Double(m) * lambda), sm = sin(Double(m) * lambda)
                let t1 = gv * cm + hv * sm, t2 = gv * sm - hv * cm
                // B = −∇V: north X′ = (1/r)∂V/∂θ, east Y′ = −(1/(r sin θ))∂V/∂λ, down Z′ = ∂V/∂r.
                xs += power * t1 * dp[i][m]
                ys += power * Double(m) * t2 * pnm[i][m]
                zs -= power * Double(i + 1) * t1 * pnm[i][m]
            }
        }
        ys /= st
        // Geocentric → geodetic: rotate by the difference of the latitudes.
        let psi = phiC - phi
        return Field(
            north: xs * cos(psi) - zs * sin(psi), east: ys, down: xs * sin(psi) + zs * cos(psi))
    }

    /// Declination (degrees east of true north) at a place and time: true heading = magnetic + this.
    public func declination(latitude: Double, longitude: Double, height: Double = 0, decimalYear: Double) -> Double {
        field(latitude: latitude, longitude: longitude, height: height, decimalYear: decimalYear).declination
    }

    /// The decimal year of a Unix time in nanoseconds (UTC; e.g. a GPS fix's `time`): the year
    /// plus the fraction of it elapsed, as the WMM counts dates.
    public static func decimalYear(unixNanoseconds ns: Int64) -> Double {
        let day: Int64 = 86_400_000_000_000
        let whole = ns >= 0 ? ns / day : -((-(ns + 1)) / day) - 1  // floor division
        let days = Int(whole)
        let dayFraction = Double(ns - whole * day) / Double(day)
        // Days since 1970-01-01 → civil year (Howard Hinnant's days_from_civil, inverted).
        func daysFromCivil(_ y: Int) -> Int {
            let y1 = y - 1  // January 1st of y: month 1 counts in the previous March-based year
            let era = (y1 >= 0 ? y1 : y1 - 399) / 400
            let yoe = y1 - era * 400
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + 306
            return era * 146_097 + doe - 719_468
        }
        var year = 1970 + Int(saturating: (Double(days) / 365.2425).rounded(.down))
        while daysFromCivil(year) > days { year -= 1 }
        while daysFromCivil(year + 1) <= days { year += 1 }
        let start = daysFromCivil(year), length = daysFromCivil(year + 1) - start
        return Double(year) + (Double(days - start) + dayFraction) / Double(length)
    }
}
