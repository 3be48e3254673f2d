import TiltCore

/// Renders the effective configuration as TOML (for `tiltd check-config`).
public enum EffectiveConfig {
    public static func render(_ c: Configuration) -> String {
        func v(_ x: Vector3) -> String { "[\(x.x), \(x.y), \(x.z)]" }
        func q(_ s: String) -> String { JSONValue.string(s).jsonText }
        var out = "# effective configuration" + (c.sourceFile.map { " of \($0)" } ?? "") + "\n"
        out += "[imu]\ndevice = \(q(c.imu.device))\nrate_hz = \(c.imu.rateHz)\n"
        if let m = c.imu.mountMatrix { out += "mount_matrix = \(m.rowMajor)\n" }
        if let b = c.imu.bufferSamples { out += "buffer_samples = \(b)\n" }
        out += "\n[calibration]\n"
        if let f = c.calibrationFile { out += "file = \(q(f))\n" }
        out += "accel_offset = \(v(c.calibration.accelOffset))\naccel_scale = \(v(c.calibration.accelScale))\n"
        if let m = c.calibration.accelMatrix { out += "accel_matrix = \(m.rowMajor)\n" }
        out += "gyro_bias = \(v(c.calibration.gyroBias))\n"
        if let n = c.calibration.neutral { out += "neutral = [\(n.w), \(n.x), \(n.y), \(n.z)]\n" }
        out += "persist_gyro_bias = \(c.biasPersistence.enabled)\npersist_after_s = \(c.biasPersistence.afterSeconds)\n"
        out += "persist_interval_min = \(c.biasPersistence.intervalMinutes)\n"
        out += "\n[socket]\npath = \(q(c.socket.path))\nmode = \(q("0" + String(c.socket.mode, radix: 8)))\n"
        if let g = c.socket.group { out += "group = \(q(g))\n" }
        out += "trusted_uids = \(c.socket.trustedUIDs)\ntrusted_gids = \(c.socket.trustedGIDs)\n"
        out += "attitude_hz = \(c.socket.attitudeHz)\nqueue_lines = \(c.socket.queueLines)\n"
        out += "max_line_bytes = \(c.socket.maxLineBytes)\nmax_bad_lines = \(c.socket.maxBadLines)\n"
        let g = c.game.rules
        out += "\n[game]\nmode = \(q(g.mode.rawValue))\nlow_threshold_deg = \(g.lowThresholdDeg)\nhigh_threshold_deg = \(g.highThresholdDeg)\n"
        out += "swap_sides = \(g.swapSides)\nhysteresis_deg = \(g.hysteresisDeg)\nhold_s = \(g.holdSeconds)\n"
        out += "neutral_hold_s = \(g.neutralHoldSeconds)\ndebounce_s = \(g.debounceSeconds)\nround_s = \(g.roundSeconds)\n"
        out += "back_axis = \(v(g.backAxis))\ncapture_neutral_at_round_start = \(g.captureNeutralAtRoundStart)\n"
        out += "gestures = \(q(g.gestures.rawValue))\nstill_dps = \(g.stillDps)\nmin_reaction_s = \(g.minReactionSeconds)\n"
        out += "nod_min_peak_dps = \(g.nod.minPeakDps)\nnod_min_swing_deg = \(g.nod.minSwingDeg)\nnod_max_swing_s = \(g.nod.maxSwingSeconds)\n"
        out += "nod_max_gap_s = \(g.nod.maxGapSeconds)\nnod_max_swing_ratio = \(g.nod.maxSwingRatio)\nshake_swings = \(g.nod.shakeSwings)\n"
        if let d = c.game.deck { out += "deck = \(q(d))\n" }
        if let d = c.game.fallbackDeck { out += "fallback_deck = \(q(d))\n" }
        if let s = c.game.seed { out += "seed = \(s)\n" }
        let p = c.places
        out += "\n[places]\n"
        if let f = p.file { out += "file = \(q(f))\n" }
        out += "as_fences = \(p.asFences)\nfence_radius_m = \(p.fenceDefaults.radius)\nfence_dwell_s = \(p.fenceDefaults.dwell)\n"
        out += "fence_cooldown_s = \(p.fenceDefaults.cooldown)\ncredit_categories = \(p.fenceDefaults.creditCategories.sorted())\n"
        out += "nearby_radius_m = \(p.nearby.radius)\nnearby_categories = \(p.nearby.categories.sorted())\nnearby_limit = \(p.nearby.limit)\n"
        for f in c.geofences {
            out += "\n[[geofence]]\nname = \(q(f.name))\nlat = \(f.lat)\nlon = \(f.lon)\nradius_m = \(f.radius)\n"
            out += "dwell_s = \(f.dwell)\ncooldown_s = \(f.cooldown)\ncredit = \(f.credit)\n"
        }
        out += "\n[quests]\nenabled = \(c.quests.enabled)\ncell_m = \(c.quests.options.cellSize)\ncooldown_s = \(c.quests.options.cooldown)\n"
        out += "base_xp = \(c.quests.options.baseXP)\nmin_xp = \(c.quests.options.minXP)\n"
        out += "\n[credits]\nredeem_amount = \(c.redeemAmount)\n"
        out += "\n[snooze]\ndistance_m = \(c.snoozeDistance)\n"
        out += "\n[course]\non_speed = \(c.courseOnSpeed)\noff_speed = \(c.courseOffSpeed)\n"
        out += "\n[store]\npath = \(q(c.store.path))\n"
        out += "\n[gps]\nenabled = \(c.gps.enabled)\nserver = \(q("\(c.gps.host):\(c.gps.port)"))\n"
        out += "\n[log]\nlevel = \(q(c.logLevel))\n"
        return out
    }
}
