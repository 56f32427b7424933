import Foundation
@testable import NetronOCR

/// Paths and synthetic frames shared by the tests.
enum Fixtures {
    /// The repository root (this file is ios/Tests/NetronOCRTests/Fixtures.swift).
    static let repo = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: repo.appendingPathComponent(relativePath))
    }

    /// A Netron-like luma image of `w`×`h`: white background, three bordered cards with a dark header and
    /// text-like strokes, joined by thin edges. `shift` moves it right.
    static func netronLuma(w: Int, h: Int, shift: Int = 0) -> [UInt8] {
        var y = [UInt8](repeating: 255, count: w * h)
        func fill(_ x0: Int, _ y0: Int, _ cw: Int, _ ch: Int, _ v: UInt8) {
            for r in max(0, y0)..<min(h, y0 + ch) {
                for c in max(0, x0 + shift)..<max(max(0, x0 + shift), min(w, x0 + shift + cw)) { y[r * w + c] = v }
            }
        }
        let cardW = w / 3, cardH = h / 7
        for k in 0..<3 {
            let x0 = w / 3, y0 = h / 10 + k * (cardH + h / 10)
            fill(x0, y0, cardW, cardH, 40)
            fill(x0 + 2, y0 + 2, cardW - 4, cardH - 4, 252)
            fill(x0 + 2, y0 + 2, cardW - 4, cardH / 3, 80)
            for row in 0..<2 {
                for g in 0..<((cardW - 16) / 5) where (g * 7 + row * 3 + k) % 5 != 0 {
                    fill(x0 + 8 + g * 5, y0 + cardH / 3 + 6 + row * 12, 2, 8, 20)
                }
            }
            if k < 2 { fill(x0 + cardW / 2, y0 + cardH, 2, h / 10, 60) }
        }
        return y
    }

    /// NV12 planes (Y, then neutral interleaved CbCr) of a grey-scale image, tight strides.
    static func nv12(luma: [UInt8], w: Int, h: Int) -> (y: Data, uv: Data, info: FrameInfo) {
        let uv = Data(repeating: 128, count: w * ((h + 1) / 2))
        let info = FrameInfo(format: .nv12, width: UInt32(w), height: UInt32(h),
                             rowStrides: [UInt32(w), UInt32(w)], pixelStride: 2, rotation: .r0)
        return (Data(luma), uv, info)
    }
}
