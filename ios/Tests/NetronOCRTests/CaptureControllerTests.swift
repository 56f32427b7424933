import Foundation
import XCTest
@testable import NetronOCR

final class CaptureControllerTests: XCTestCase {
    let w = 640, h = 480

    func testUpdatesAsAnAsyncSequence() async throws {
        let controller = try CaptureController(scanner: try NetronScanner(), stableFrames: 2)
        let good = Fixtures.nv12(luma: Fixtures.netronLuma(w: w, h: h), w: w, h: h)
        let flat = Fixtures.nv12(luma: [UInt8](repeating: 128, count: w * h), w: w, h: h)

        controller.submit(planes: [flat.y, flat.uv], info: flat.info)   // searching: nothing to read
        controller.submit(planes: [good.y, good.uv], info: good.info)   // rejected: changed since the flat frame
        controller.submit(planes: [good.y, good.uv], info: good.info)   // steady 1 of 2
        controller.submit(frame: good.y + good.uv, info: good.info)     // steady 2 of 2: captured
        controller.submit(frame: good.y, info: good.info)               // too short: failed, state unchanged
        controller.finish()

        var updates: [ScanUpdate] = []
        for await u in controller { updates.append(u) }
        XCTAssertEqual(updates.count, 5)
        guard case .searching(let hints0, _) = updates[0], hints0.contains(.moveCloser) else {
            return XCTFail("\(updates[0])")
        }
        guard case .searching(let hints1, _) = updates[1], hints1.contains(.holdSteady) else {
            return XCTFail("\(updates[1])")
        }
        guard case .steadying(_, _, let progress) = updates[2] else { return XCTFail("\(updates[2])") }
        XCTAssertEqual(progress, 0.5)
        guard case .captured(_, let result, let graph, let scanError) = updates[3] else {
            return XCTFail("\(updates[3])")
        }
        // The two steady frames were scanned and fused; the Swift model reads the fused JSON.
        XCTAssertNil(scanError)
        let fused = try XCTUnwrap(result)
        XCTAssertEqual(fused.frames, 2)
        try ScanTests.check(fused, width: w, height: h)
        XCTAssertEqual(graph, try NetronGraph.decode(Data(fused.graphJson.utf8)))
        guard case .failed(NetronError.BufferTooShort) = updates[4] else { return XCTFail("\(updates[4])") }
    }

    func testInvalidStableFrames() throws {
        XCTAssertThrowsError(try CaptureController(scanner: try NetronScanner(), stableFrames: 0))
    }

    func testHintMessages() {
        XCTAssertEqual(Hint.holdSteady.message, "Hold steady")
        XCTAssertEqual(Hint.capturedMessage([]), "Captured")
        XCTAssertEqual(Hint.capturedMessage([.moveBack]), "Captured")
        XCTAssertTrue(Hint.capturedMessage([.moveBack, .zoomIn]).hasPrefix("Captured, but the text was small"))
        typealias U = NetronGraph.Uncertain
        XCTAssertNil(U(operators: 0, shapes: 0, names: 0).description)
        XCTAssertEqual(U(operators: 0, shapes: 3, names: 0).description, "3 shapes")
        XCTAssertEqual(U(operators: 2, shapes: 5, names: 1).description, "2 operators, 5 shapes and 1 name")
        XCTAssertEqual(Hint.capturedMessage([], uncertain: U(operators: 0, shapes: 0, names: 0)), "Captured")
        XCTAssertEqual(Hint.capturedMessage([], uncertain: U(operators: 1, shapes: 2, names: 0)),
                       "Captured. Unsure of 1 operator and 2 shapes")
    }
}
