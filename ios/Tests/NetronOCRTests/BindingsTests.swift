import Foundation
import XCTest
@testable import NetronOCR

final class BindingsTests: XCTestCase {
    let w = 640, h = 480

    func testRenderedSceneFixtureIsAssessedThroughTheCdylib() throws {
        let png = try Fixtures.data("tests/fixtures/scenes/render_000.png")
        let q = try NetronScanner().assessImage(encoded: png)
        XCTAssertGreaterThan(q.content, 0)
        XCTAssert((0...1).contains(q.score))
    }

    func testNetronLikeNv12FrameIsAcceptedAndFlatIsNot() throws {
        let scanner = try NetronScanner()
        let f = Fixtures.nv12(luma: Fixtures.netronLuma(w: w, h: h), w: w, h: h)
        let good = try scanner.assessPlanes(plane0: f.y, plane1: f.uv, plane2: Data(), info: f.info)
        XCTAssertTrue(good.accept, "\(good.hints)")
        XCTAssertNil(good.stability)
        // The same frame as one buffer (planes packed) gives the same verdict, also via the free function.
        XCTAssertEqual(try scanner.assess(frame: f.y + f.uv, info: f.info), good)
        XCTAssertEqual(try assess(frame: f.y + f.uv, info: f.info), good)

        let flat = Fixtures.nv12(luma: [UInt8](repeating: 128, count: w * h), w: w, h: h)
        let q = try scanner.assessPlanes(plane0: flat.y, plane1: flat.uv, plane2: Data(), info: flat.info)
        XCTAssertFalse(q.accept)
        XCTAssert(q.hints.contains(.moveCloser))
    }

    func testTypedErrors() throws {
        let scanner = try NetronScanner()
        let f = Fixtures.nv12(luma: Fixtures.netronLuma(w: w, h: h), w: w, h: h)
        XCTAssertThrowsError(try scanner.assess(frame: f.y, info: f.info)) { error in
            guard case NetronError.BufferTooShort(let message) = error else { return XCTFail("\(error)") }
            XCTAssert(message.contains("needs"), message)
        }
        let badStride = FrameInfo(format: .nv12, width: UInt32(w), height: UInt32(h),
                                  rowStrides: [UInt32(w - 1), UInt32(w)], pixelStride: 2, rotation: .r0)
        XCTAssertThrowsError(try scanner.assess(frame: f.y + f.uv, info: badStride)) { error in
            guard case NetronError.InvalidStride = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try rotationFromDegrees(degrees: 45)) { error in
            guard case NetronError.InvalidFrame = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try NetronScanner.fromModelDir(path: "/nonexistent/models")) { error in
            guard case NetronError.ModelLoad = error else { return XCTFail("\(error)") }
        }
    }

    func testPanicComesBackAsInternalAndTheLibrarySurvives() throws {
        XCTAssertThrowsError(try debugPanic(message: "swift-side")) { error in
            guard case NetronError.Internal(let message) = error else { return XCTFail("\(error)") }
            XCTAssert(message.contains("swift-side"), message)
        }
        XCTAssertEqual(try defaultQualityParams().cellSize, 8)
    }

    func testLogRecordsReachASwiftSink() throws {
        final class Sink: LogSink, @unchecked Sendable {
            let lock = NSLock()
            var records: [LogRecord] = []
            func log(record: LogRecord) {
                lock.lock(); records.append(record); lock.unlock()
            }
        }
        let sink = Sink()
        XCTAssertTrue(try setLogSink(sink: sink, maxLevel: .debug))
        _ = try NetronScanner()
        try clearLogSink()
        XCTAssert(sink.records.contains { $0.level == .debug && $0.message.contains("bundled models") },
                  "\(sink.records)")
    }
}
