// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltService

/// `LineQueue` (first line inline, the rest in a deque) behaves as an array of lines would.
final class LineQueueTests: XCTestCase {
    func testRandomOperationsMatchAnArray() {
        var rng = SystemRandomNumberGenerator()
        let lines = (0..<8).map { i in
            Array("line \(i)\n".utf8).withUnsafeBytes { SharedLine(copying: $0, isGapNotice: i == 7) }
        }
        for _ in 0..<200 {
            var queue = LineQueue()
            var model: [SharedLine] = []
            for step in 0..<100 {
                let line = lines.randomElement(using: &rng)!
                switch Int.random(in: 0..<6, using: &rng) {
                case 0, 1:
                    queue.append(line); model.append(line)
                case 2:
                    let i = Int.random(in: 0...model.count, using: &rng)
                    queue.insert(line, at: i); model.insert(line, at: i)
                case 3:
                    XCTAssertTrue(queue.popFirst() === (model.isEmpty ? nil : model.removeFirst()), "step \(step)")
                case 4 where !model.isEmpty:
                    let i = Int.random(in: 0..<model.count, using: &rng)
                    XCTAssertTrue(queue.remove(at: i) === model.remove(at: i), "step \(step)")
                case 5 where Int.random(in: 0..<10, using: &rng) == 0:
                    queue.removeAll(); model.removeAll()
                default:
                    break
                }
                XCTAssertEqual(queue.count, model.count)
                XCTAssertEqual(queue.isEmpty, model.isEmpty)
                XCTAssertTrue(queue.first === model.first)
                for i in model.indices { XCTAssertTrue(queue[i] === model[i], "step \(step), line \(i)") }
            }
        }
    }
}
