import Foundation
import XCTest
@testable import NetronOCR

/// Scans through the real cdylib and models. The models are still weak, so only structure is checked (the JSON
/// contract, boxes inside the image, the typed records agreeing with the JSON, timings), never counts or ops.
final class ScanTests: XCTestCase {
    static let photoPath = "tests/fixtures/scenes/000000.photo.jpg"

    /// Structural facts every scan result satisfies, whatever the models found.
    static func check(_ r: ScanResult, width w: Int, height h: Int,
                      file: StaticString = #filePath, line: UInt = #line) throws {
        let g = try NetronGraph.decode(Data(r.graphJson.utf8)) // checks format and version
        XCTAssertEqual(g.format, NetronGraph.format, file: file, line: line)
        XCTAssertEqual(g.version, NetronGraph.version, file: file, line: line)
        XCTAssertEqual(g.image, NetronGraph.ImageSize(width: w, height: h), file: file, line: line)
        let t = r.graph
        XCTAssertEqual(t.format, g.format, file: file, line: line)
        XCTAssertEqual(Int(t.version), g.version, file: file, line: line)
        XCTAssertEqual([Int(t.image.width), Int(t.image.height)], [w, h], file: file, line: line)

        func near(_ a: Float, _ b: Double) -> Bool { abs(Double(a) - b) <= 1e-4 * max(1, abs(b)) }
        func same(_ typed: BoundingBox, _ json: NetronGraph.Box) {
            XCTAssert(near(typed.x0, json.x0) && near(typed.y0, json.y0) && near(typed.x1, json.x1)
                      && near(typed.y1, json.y1), "\(typed) vs \(json)", file: file, line: line)
            let eps: Float = 1e-3
            XCTAssert(-eps <= typed.x0 && typed.x0 <= typed.x1 && typed.x1 <= Float(w) + eps
                      && -eps <= typed.y0 && typed.y0 <= typed.y1 && typed.y1 <= Float(h) + eps,
                      "\(typed) outside \(w)x\(h)", file: file, line: line)
        }
        same(t.canvas.bbox, g.canvas.box)

        XCTAssertEqual(t.nodes.map(\.id), g.nodes.map(\.id), file: file, line: line)
        XCTAssertEqual(t.nodes.map(\.op), g.nodes.map(\.op), file: file, line: line)
        for (k, j) in zip(t.nodes, g.nodes) {
            same(k.bbox, j.box)
            XCTAssert(near(k.confidence, j.confidence) && near(k.opConfidence, j.opConfidence), file: file, line: line)
            XCTAssert((0...1).contains(k.confidence), file: file, line: line)
        }
        for (typed, json) in [(t.inputs, g.inputs), (t.outputs, g.outputs)] {
            XCTAssertEqual(typed.map(\.id), json.map(\.id), file: file, line: line)
            XCTAssertEqual(typed.map(\.name), json.map(\.name), file: file, line: line)
            for (k, j) in zip(typed, json) { same(k.bbox, j.box) }
        }
        XCTAssertEqual(t.tensors.map(\.id), g.tensors.map(\.id), file: file, line: line)
        XCTAssertEqual(t.tensors.map(\.text), g.tensors.map(\.text), file: file, line: line)
        let typedShapes: [[NetronGraph.Dim]?] = t.tensors.map { tensor in
            tensor.shape?.map { dim -> NetronGraph.Dim in
                switch dim {
                case .fixed(let value): return .fixed(value)
                case .symbolic(let name): return .symbolic(name)
                }
            }
        }
        XCTAssertEqual(typedShapes, g.tensors.map(\.shape), file: file, line: line)
        for (k, j) in zip(t.tensors, g.tensors) { same(k.bbox, j.box) }
        XCTAssertEqual(t.edges.map { [$0.from, $0.to, $0.tensor ?? "-"] },
                       g.edges.map { [$0.from, $0.to, $0.tensor ?? "-"] }, file: file, line: line)

        let s = r.timings
        let stages = [s.decodeMs, s.qualityMs, s.cropMs, s.detectMs, s.classifyMs, s.readMs, s.assembleMs]
        XCTAssert(stages.allSatisfy { $0 >= 0 }, "\(s)", file: file, line: line)
        XCTAssertEqual(s.totalMs, stages.reduce(0, +), accuracy: 1e-6 * max(1, s.totalMs), file: file, line: line)
        XCTAssertGreaterThan(s.cropMs, 0, "the cropper always runs", file: file, line: line)
        XCTAssert((0...1).contains(r.quality.score), file: file, line: line)
        XCTAssertGreaterThanOrEqual(r.frames, 1, file: file, line: line)
    }

    func testFixturePhotoScansToAWellFormedGraph() throws {
        let truth = try JSONSerialization.jsonObject(
            with: Fixtures.data("tests/fixtures/scenes/000000.photo.json")) as? [String: Any]
        let image = try XCTUnwrap(truth?["image"] as? [String: Int])
        let scanner = try NetronScanner()
        let r = try scanner.scanImage(encoded: Fixtures.data(ScanTests.photoPath))
        try ScanTests.check(r, width: try XCTUnwrap(image["width"]), height: try XCTUnwrap(image["height"]))
        XCTAssertEqual(r.frames, 1)
        XCTAssertGreaterThan(r.timings.decodeMs, 0)
        let path = Fixtures.repo.appendingPathComponent(ScanTests.photoPath).path
        XCTAssertEqual(try scanner.scanFile(path: path).graphJson, r.graphJson)
        // One thread reads the same graph as the default count.
        XCTAssertEqual(try scanner.withThreads(threads: 1).scanFile(path: path).graphJson, r.graphJson)
        // Its labels are 15 px high: a text height, and no zoom-in advice.
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(r.textHeight), 9)
        XCTAssertFalse(r.quality.hints.contains(.zoomIn))
    }

    func testSmallTextComesBackWithTheZoomInHint() throws {
        let scanner = try NetronScanner()
        let path = Fixtures.repo.appendingPathComponent("tests/fixtures/dense/000104.photo.jpg").path // 7 px labels
        let r = try scanner.scanFile(path: path)
        XCTAssertLessThan(try XCTUnwrap(r.textHeight), 9)
        XCTAssertTrue(r.quality.hints.contains(.zoomIn))
        XCTAssertTrue(Hint.zoomIn.message.hasPrefix("Text too small"))
        // At that size some labels read under 0.5 calibrated confidence: the capture message says so.
        let uncertain = try NetronGraph.decode(Data(r.graphJson.utf8)).uncertain()
        XCTAssertGreaterThan(uncertain.shapes, 0, "\(uncertain)")
        XCTAssertTrue(Hint.capturedMessage(r.quality.hints, uncertain: uncertain).contains("Unsure of"))
    }

    func testRawNv12FrameScansAsOneBufferAndPerPlane() throws {
        let (w, h) = (640, 480)
        let scanner = try NetronScanner()
        let f = Fixtures.nv12(luma: Fixtures.netronLuma(w: w, h: h), w: w, h: h)
        let r = try scanner.scan(frame: f.y + f.uv, info: f.info)
        try ScanTests.check(r, width: w, height: h)
        let planes = try scanner.scanPlanes(plane0: f.y, plane1: f.uv, plane2: Data(), info: f.info)
        XCTAssertEqual(planes.graphJson, r.graphJson)
    }

    func testShortBufferAndCorruptJpegAreTypedErrors() throws {
        let scanner = try NetronScanner()
        let f = Fixtures.nv12(luma: Fixtures.netronLuma(w: 64, h: 48), w: 64, h: 48)
        XCTAssertThrowsError(try scanner.scan(frame: f.y.prefix(100), info: f.info)) { error in
            guard case NetronError.BufferTooShort = error else { return XCTFail("\(error)") }
        }
        var corrupt = try Fixtures.data(ScanTests.photoPath)
        corrupt.replaceSubrange(4..<corrupt.count, with: Data(count: corrupt.count - 4)) // signature, then zeros
        XCTAssertThrowsError(try scanner.scanImage(encoded: corrupt)) { error in
            guard case NetronError.DecodeFailed = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try scanner.scanFile(path: "/nonexistent/photo.jpg")) { error in
            guard case NetronError.Io = error else { return XCTFail("\(error)") }
        }
    }
}
