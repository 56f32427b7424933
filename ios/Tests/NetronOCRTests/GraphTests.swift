import Foundation
import XCTest
@testable import NetronOCR

final class GraphTests: XCTestCase {
    func testExampleGraphDecodesIntoCodableTypes() throws {
        let data = try Fixtures.data("tests/fixtures/graphs/example.json")
        let g = try NetronGraph.decode(data)
        let raw = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        XCTAssertEqual(g.format, NetronGraph.format)
        XCTAssertEqual(g.nodes.count, (raw["nodes"] as! [Any]).count)
        XCTAssertEqual(g.tensors.count, (raw["tensors"] as! [Any]).count)
        XCTAssertEqual(g.edges.count, (raw["edges"] as! [Any]).count)
        let ids = Set(g.nodes.map(\.id) + g.inputs.map(\.id) + g.outputs.map(\.id))
        XCTAssert(g.edges.allSatisfy { ids.contains($0.from) && ids.contains($0.to) })
        // Encoding and reading back through the native core reader keeps the graph.
        let normalized = try normalizeGraphJson(json: String(decoding: try g.encoded(), as: UTF8.self))
        XCTAssertEqual(try NetronGraph.decode(Data(normalized.utf8)), g)
    }

    func testFieldValues() throws {
        let json = """
        {"format":"netron-ocr.graph","version":1,"image":{"width":100,"height":80},
         "canvas":{"box":[0,0,100,80],"confidence":0.5},"direction":"horizontal",
         "nodes":[{"id":"n0","op":null,"op_confidence":0.25,"box":[1,2,30,40],"confidence":0.9,
                   "weights":[{"name":"W","shape":[64,"?"],"text":"64×?"}],"future":1}],
         "inputs":[],"outputs":[],
         "tensors":[{"id":"t0","text":"batch×3","shape":["batch",3],"box":[5,5,9,9],"confidence":1}],
         "edges":[{"from":"n0","to":"n0","tensor":null,"confidence":0.7,"points":[[0,0],[5,5]]}]}
        """
        let g = try NetronGraph.decode(Data(json.utf8))
        XCTAssertEqual(g.direction, .horizontal)
        XCTAssertNil(g.nodes[0].op)
        XCTAssertEqual(g.nodes[0].box, .init(x0: 1, y0: 2, x1: 30, y1: 40))
        XCTAssertEqual(g.nodes[0].weights[0].shape, [.fixed(64), .symbolic("?")])
        XCTAssertEqual(g.tensors[0].shape, [.symbolic("batch"), .fixed(3)])
        XCTAssertNil(g.edges[0].tensor)
        XCTAssertEqual(g.edges[0].points, [.init(x: 0, y: 0), .init(x: 5, y: 5)])
        // `op`, `shape` and `tensor` are required even when null: encoding keeps them.
        let encoded = String(decoding: try g.encoded(), as: UTF8.self)
        XCTAssert(encoded.contains("\"op\":null") && encoded.contains("\"tensor\":null"), encoded)
    }

    func testOtherVersionsAndBrokenFilesAreRejected() throws {
        XCTAssertThrowsError(try NetronGraph.decode(try Fixtures.data("tests/fixtures/graphs/invalid/version-2.json"))) {
            XCTAssertEqual($0 as? NetronGraph.ReadError, .unsupportedVersion(found: 2))
        }
        XCTAssertThrowsError(try normalizeGraphJson(json: String(decoding: try Fixtures.data(
            "tests/fixtures/graphs/invalid/version-2.json"), as: UTF8.self))) {
            guard case NetronError.UnsupportedGraphVersion = $0 else { return XCTFail("\($0)") }
        }
        for name in ["not-json", "box-three-numbers", "wrong-format", "top-level-array"] {
            XCTAssertThrowsError(try NetronGraph.decode(try Fixtures.data("tests/fixtures/graphs/invalid/\(name).json")),
                                 name)
        }
    }
}
