"""Render a text capture of a terminal (docs/screens/*.txt) as a PNG, in a monospace font, one cell per
character (box-drawing and marks included). Needs Pillow and a monospace TrueType font (DejaVu Sans Mono);
bench/screens.sh calls it when both are there.

    python bench/screens_png.py docs/screens/audit-80.txt 80   # writes docs/screens/audit-80.png
"""

from __future__ import annotations

import sys
from pathlib import Path

FONTS = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu/DejaVuSansMono.ttf",
    "/Library/Fonts/DejaVuSansMono.ttf",
]
COLOURS = {"✗": (230, 90, 90), "✓": (110, 200, 110), "?": (220, 200, 90), "!": (220, 200, 90), "→": (120, 180, 240)}


def render(path: Path, columns: int) -> Path:
    from PIL import Image, ImageDraw, ImageFont

    font_path = next((f for f in FONTS if Path(f).is_file()), None)
    if font_path is None:
        raise SystemExit("no monospace TrueType font found (DejaVu Sans Mono)")
    font = ImageFont.truetype(font_path, 14)
    cell_w = round(font.getlength("M"))
    cell_h = 18
    lines = path.read_text(encoding="utf-8").splitlines()
    pad = 12
    img = Image.new("RGB", (columns * cell_w + 2 * pad, max(1, len(lines)) * cell_h + 2 * pad), (30, 30, 30))
    draw = ImageDraw.Draw(img)
    for row, line in enumerate(lines):
        for col, ch in enumerate(line):  # one cell per character: what the terminal showed
            colour = COLOURS.get(ch, (225, 225, 225))
            draw.text((pad + col * cell_w, pad + row * cell_h), ch, font=font, fill=colour)
    # the terminal's right edge, so that a reader sees nothing runs past it
    draw.line([(pad + columns * cell_w, 0), (pad + columns * cell_w, img.height)], fill=(70, 70, 70))
    out = path.with_suffix(".png")
    img.save(out, optimize=True)
    return out


if __name__ == "__main__":
    print(render(Path(sys.argv[1]), int(sys.argv[2])))
