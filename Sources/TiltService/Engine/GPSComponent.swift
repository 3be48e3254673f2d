// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import TiltCore
import TiltSensors

/// GPS: owns `[gps]` — a reload that enables, disables or moves gpsd starts, stops or
/// restarts the client (see `FixSourceControl`). Fixes go to the places component; the
/// `gps` status is kept with the other sources'. Loop-confined (see `Component`).
final class GPSComponent: Component {
    let context: EngineContext
    /// The fix source service, when one runs (not in unit tests).
    let control: (any FixSourceControl)?

    init(context: EngineContext, control: (any FixSourceControl)?) {
        self.context = context; self.control = control
    }

    /// What applying a new `[gps]` needs: the client built, not started.
    struct Staged: Sendable {
        /// Nil: no change. `.some(nil)`: stop.
        var source: (any FixSource)??
        var note: String?
    }

    /// Off the loop: a gpsd client for the new settings when they changed.
    static func stage(_ new: Configuration, current: Configuration, control: (any FixSourceControl)?) -> Staged {
        guard let control, new.gps != current.gps else { return Staged() }
        if control.isReplay { return Staged(note: "[gps] applies after a restart without --gpx") }
        return Staged(source: .some(control.prepare(new.gps)))
    }

    /// On the loop: hands the new client to the service, which stops the old one off the loop.
    func apply(_ staged: Staged, config: Configuration, notes: inout [String]) {
        if let note = staged.note { notes.append(note) }
        guard let control, let source = staged.source else { return }
        control.replace(with: source)
        notes.append(source == nil ? "gps stopped" : "gps started on \(config.gps.host):\(config.gps.port)")
    }
}

/// The fix source service as the engine sees it (see `FixSourceService`).
public protocol FixSourceControl: Sendable {
    /// True when fixes come from a GPX replay (`--gpx`), which `[gps]` does not change.
    var isReplay: Bool { get }
    /// A gpsd client for `gps` (not started), or nil when `gps.enabled` is false.
    func prepare(_ gps: Configuration.GPS) -> (any FixSource)?
    /// Stops the running source and starts `source` (if any), off the caller's thread.
    func replace(with source: (any FixSource)?)
}
