// SPDX-License-Identifier: Apache-2.0
/// A 3-vector of doubles: accelerations (m/s²), angular rates (rad/s), or unit directions.
public struct Vector3: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// The x component (sensor frame: the axis the driver calls x).
    public var x: Double
    /// The y component.
    public var y: Double
    /// The z component.
    public var z: Double

    /// A vector from its components.
    @inlinable public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x; self.y = y; self.z = z
    }

    /// (0, 0, 0).
    public static let zero = Vector3(0, 0, 0)

    /// The Euclidean length.
    @inlinable public var norm: Double { (x * x + y * y + z * z).squareRoot() }
    /// The squared length (no square root).
    @inlinable public var normSquared: Double { x * x + y * y + z * z }
    /// The dot product.
    @inlinable public func dot(_ o: Vector3) -> Double { x * o.x + y * o.y + z * o.z }
    /// The cross product `self × o`.
    @inlinable public func cross(_ o: Vector3) -> Vector3 {
        Vector3(y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x)
    }
    /// The unit vector in the same direction, or zero for a zero vector.
    @inlinable public var normalized: Vector3 {
        let n = norm
        return n > 0 ? self / n : .zero
    }
    /// Component `i` (0 = x, 1 = y, 2 = z).
    @inlinable public subscript(i: Int) -> Double {
        get { i == 0 ? x : (i == 1 ? y : z) }
        set { if i == 0 { x = newValue } else if i == 1 { y = newValue } else { z = newValue } }
    }
    /// [x, y, z].
    public var array: [Double] { [x, y, z] }

    /// Component-wise sum.
    @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    /// Component-wise difference.
    @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    /// The opposite vector.
    @inlinable public static prefix func - (a: Vector3) -> Vector3 { Vector3(-a.x, -a.y, -a.z) }
    /// Scaled by `s`.
    @inlinable public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    /// Scaled by `s`.
    @inlinable public static func * (s: Double, a: Vector3) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    /// Divided by `s`.
    @inlinable public static func / (a: Vector3, s: Double) -> Vector3 { Vector3(a.x / s, a.y / s, a.z / s) }
    /// Adds `b` in place.
    @inlinable public static func += (a: inout Vector3, b: Vector3) { a = a + b }
    /// Subtracts `b` in place.
    @inlinable public static func -= (a: inout Vector3, b: Vector3) { a = a - b }

    /// "(x, y, z)".
    public var description: String { "(\(x), \(y), \(z))" }
}

/// A 3×3 matrix, row-major. Used for mount matrices and full accelerometer calibration.
public struct Matrix3: Sendable, Equatable, Codable {
    /// Rows, each a vector.
    public var r0: Vector3, r1: Vector3, r2: Vector3

    /// A matrix from its rows.
    @inlinable public init(_ r0: Vector3, _ r1: Vector3, _ r2: Vector3) {
        self.r0 = r0; self.r1 = r1; self.r2 = r2
    }

    /// Builds a matrix from nine numbers in row-major order; nil unless there are exactly nine.
    public init?(rowMajor v: [Double]) {
        guard v.count == 9 else { return nil }
        self.init(Vector3(v[0], v[1], v[2]), Vector3(v[3], v[4], v[5]), Vector3(v[6], v[7], v[8]))
    }

    /// The identity matrix.
    public static let identity = Matrix3(Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))

    /// The nine elements, row by row (the config files' order).
    public var rowMajor: [Double] { r0.array + r1.array + r2.array }
    /// True for the identity matrix exactly.
    public var isIdentity: Bool { self == .identity }

    /// The matrix applied to a column vector.
    @inlinable public static func * (m: Matrix3, v: Vector3) -> Vector3 {
        Vector3(m.r0.dot(v), m.r1.dot(v), m.r2.dot(v))
    }
    /// The matrix product.
    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let t = b.transposed
        return Matrix3(
            Vector3(a.r0.dot(t.r0), a.r0.dot(t.r1), a.r0.dot(t.r2)),
            Vector3(a.r1.dot(t.r0), a.r1.dot(t.r1), a.r1.dot(t.r2)),
            Vector3(a.r2.dot(t.r0), a.r2.dot(t.r1), a.r2.dot(t.r2)))
    }
    /// Rows and columns swapped (the inverse of a rotation).
    public var transposed: Matrix3 {
        Matrix3(Vector3(r0.x, r1.x, r2.x), Vector3(r0.y, r1.y, r2.y), Vector3(r0.z, r1.z, r2.z))
    }
    /// The determinant (±1 for a rotation or reflection).
    public var determinant: Double { r0.dot(r1.cross(r2)) }
}
