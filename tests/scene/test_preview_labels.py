"""Labels of the top-down preview do not cover each other."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from urbanverse.scene.preview import draw_labels


def test_labels_of_objects_at_one_spot_do_not_overlap() -> None:
    image = Image.new("RGB", (400, 300), (255, 255, 255))
    items = [
        ((200.0, 150.0), "young street tree"),
        ((203.0, 151.0), "broadleaf tree"),
        ((200.0, 148.0), "bench"),
    ]
    boxes = draw_labels(ImageDraw.Draw(image), items, ImageFont.load_default(size=12))
    assert len(boxes) == 3
    for i, (a0, b0, a1, b1) in enumerate(boxes):
        assert a1 - a0 > 10 and b1 - b0 > 5
        for c0, d0, c1, d1 in boxes[i + 1 :]:
            assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0, "labels overlap"
    # Something was written: the label backgrounds and text are not all white.
    assert image.convert("L").getextrema()[0] < 100
