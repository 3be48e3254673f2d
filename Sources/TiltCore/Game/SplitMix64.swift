// SPDX-License-Identifier: Apache-2.0
/// A small, fast, seedable random number generator (Steele, Lea & Flood's SplitMix64).
///
/// The game shuffles decks with it so that a given seed always yields the same prompt order:
/// tests can assert exact sequences and a replayed session repeats itself.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    /// The generator's whole state; advancing it by the golden-ratio increment is the algorithm.
    public private(set) var state: UInt64

    /// A generator that starts from `seed` (any value, including 0, is a good seed).
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `0..<bound` (bound > 0), without modulo bias.
    ///
    /// Written out rather than using the standard library's `random(in:using:)`, whose way of
    /// turning bits into a range is not promised to stay the same between Swift releases; the
    /// decks' order must not change under a toolchain upgrade.
    public mutating func next(below bound: UInt64) -> UInt64 {
        precondition(bound > 0, "bound must be positive")
        // Reject the top sliver of the 64-bit range that would make some residues more likely.
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let r = next()
            if r < limit { return r % bound }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates), deterministically for a given generator state.
    public mutating func shuffle<T>(_ items: inout [T]) {
        guard items.count > 1 else { return }
        var i = items.count - 1
        while i > 0 {
            let j = Int(next(below: UInt64(i + 1)))
            if i != j { items.swapAt(i, j) }
            i -= 1
        }
    }
}
