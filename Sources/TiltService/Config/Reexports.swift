// The daemon's files use the config model throughout (the engine, the hub's `[socket]` limits,
// the reload), its logging and systemd's notifications; re-exported so that each of them need not import them.
@_exported import TiltConfig
@_exported import TiltLogging
@_exported import TiltSystemd
