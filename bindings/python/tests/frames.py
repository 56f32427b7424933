"""Synthetic camera frames for the binding tests (built in memory, deterministic)."""

import numpy as np


def netron_rgb(w: int, h: int, shift: int = 0) -> np.ndarray:
    """A Netron-like screen, uint8 RGB of shape (h, w, 3): white background, a column of three cards (dark
    border, blue header, light body with text-like strokes) joined by thin edges. `shift` moves it right."""
    img = np.full((h, w, 3), 255, np.uint8)
    card_w, card_h = w // 3, h // 7

    def fill(x0, y0, cw, ch, rgb):
        x0 += shift
        img[max(0, y0) : max(0, y0 + ch), max(0, x0) : max(0, x0 + cw)] = rgb

    for k in range(3):
        x0, y0 = w // 3, h // 10 + k * (card_h + h // 10)
        fill(x0, y0, card_w, card_h, (40, 40, 40))
        fill(x0 + 2, y0 + 2, card_w - 4, card_h - 4, (252, 252, 252))
        fill(x0 + 2, y0 + 2, card_w - 4, card_h // 3, (51, 85, 136))
        for row in range(2):
            for g in range((card_w - 16) // 5):
                if (g * 7 + row * 3 + k) % 5:
                    fill(x0 + 8 + g * 5, y0 + card_h // 3 + 6 + row * 12, 2, 8, (20, 20, 20))
        if k < 2:
            fill(x0 + card_w // 2, y0 + card_h, 2, h // 10, (60, 60, 60))
    return img


def rgb_to_nv21(rgb: np.ndarray) -> bytes:
    """BT.601 full-range RGB -> NV21 (Y plane, then interleaved V,U subsampled 2x2 by taking the top-left
    pixel), tight strides."""
    f = rgb.astype(np.float64)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = np.clip(np.rint(0.299 * r + 0.587 * g + 0.114 * b), 0, 255).astype(np.uint8)
    s = f[::2, ::2]
    r, g, b = s[..., 0], s[..., 1], s[..., 2]
    u = np.clip(np.rint(128 - 0.168736 * r - 0.331264 * g + 0.5 * b), 0, 255).astype(np.uint8)
    v = np.clip(np.rint(128 + 0.5 * r - 0.418688 * g - 0.081312 * b), 0, 255).astype(np.uint8)
    vu = np.stack([v, u], axis=-1)
    return y.tobytes() + vu.tobytes()


def flat_nv21(w: int, h: int, luma: int = 128) -> bytes:
    return bytes([luma]) * (w * h) + bytes([128]) * (w * ((h + 1) // 2))
