// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Judges a candidate nod or shake from its `GestureFeatures`: a deliberate answer, or the
/// gait, a glance, a lean. Gradient-boosted decision trees (small, depth 3), trained by
/// `bench/gestures/train` on the shared data sets (real nods and shakes played onto real walks,
/// stairs, runs and standing, against everything 16 people did wearing IMU glasses), validated
/// leave-one-person-out; docs/dev/game-everyday.md says how and what it scores. Inference only:
/// pure, a few hundred comparisons a candidate.
///
/// The trees are stored flat: node `k` tests `inputs[feature[k]] <= threshold[k]` and goes to
/// `left[k]` or `right[k]`; a node with `feature[k] < 0` is a leaf worth `value[k]`. The score
/// is `base` plus `rate` times the sum of the trees' leaves, a log-odds; `probability` is its
/// logistic.
public struct GestureClassifier: Sendable, Equatable {
    /// The log-odds before any tree.
    public var base: Double
    /// The learning rate the trees' leaves are scaled by.
    public var rate: Double
    /// The first node of each tree.
    public var roots: [Int]
    /// Per node: the input tested (−1 for a leaf), the threshold, the children, the leaf's value.
    public var feature: [Int]
    /// See `feature`.
    public var threshold: [Double]
    /// See `feature`.
    public var left: [Int]
    /// See `feature`.
    public var right: [Int]
    /// See `feature`.
    public var value: [Double]
    /// A candidate answers when its probability is at least this.
    public var accept: Double

    /// A classifier from its parts (the trained one is `GestureClassifier.trained`).
    public init(
        base: Double, rate: Double, roots: [Int], feature: [Int], threshold: [Double], left: [Int], right: [Int],
        value: [Double], accept: Double
    ) {
        self.base = base; self.rate = rate; self.roots = roots; self.feature = feature
        self.threshold = threshold; self.left = left; self.right = right; self.value = value; self.accept = accept
    }

    /// Whether the parts make a classifier whose walk always ends at a leaf within `inputs`
    /// (checked once when a classifier is read from a file; the trained one is tested).
    public func isValid(inputs: Int = GestureFeatures.inputNames.count) -> Bool {
        let n = feature.count
        guard threshold.count == n, left.count == n, right.count == n, value.count == n else { return false }
        for k in 0..<n where feature[k] >= 0 {
            guard feature[k] < inputs, left[k] > k, right[k] > k, left[k] < n, right[k] < n else { return false }
        }
        return roots.allSatisfy { (0..<n).contains($0) } && base.isFinite && rate.isFinite
    }

    /// The probability that `inputs` (`GestureFeatures.inputs`) are a deliberate answer.
    public func probability(_ inputs: [Double]) -> Double {
        var score = base
        for root in roots {
            var k = root
            while feature[k] >= 0 { k = inputs[feature[k]] <= threshold[k] ? left[k] : right[k] }
            score += rate * value[k]
        }
        return 1 / (1 + exp(-score))
    }

    /// Whether `features` are an answer.
    public func accepts(_ features: GestureFeatures) -> Bool { probability(features.inputs) >= accept }
}
