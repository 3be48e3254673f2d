// SPDX-License-Identifier: Apache-2.0
/// Version numbers reported in `hello` and `tiltd --version`.
public enum TiltdVersion {
    /// tiltd's version.
    public static let string = "0.1.0"
    /// Bumped when a change breaks existing clients (declared with the wire model).
    public static let protocolNumber = ProtocolVersion.number
}
