// The daemon's files use the config model throughout (the engine, the hub's `[socket]` limits,
// the reload); re-exported so that each of them need not import it.
@_exported import TiltConfig
