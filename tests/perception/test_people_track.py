"""Which frames the people are tracked in: every step over the registered span, the span's last frame
included, never more than asked for."""

from __future__ import annotations

from urbanverse.perception.people_track import sample_times
from urbanverse.video.record import CameraIntrinsics, KeyframeSet, Shot


def _video(fps: float = 10.0, frames: int = 795) -> KeyframeSet:
    return KeyframeSet(
        mode="video",
        source="v.mp4",
        source_sha256="0" * 64,
        fps=fps,
        frame_count=frames,
        duration_s=frames / fps,
        original_size=(640, 480),
        working_size=(640, 480),
        shots=(Shot(index=0, start_frame=0, end_frame=frames, start_s=0.0, end_s=frames / fps),),
        selected_shots=(0,),
        keyframes=(),
        intrinsics=CameraIntrinsics.from_hfov(640, 480, 70.0),
    )


def test_frames_every_step_up_to_the_last_keyframe() -> None:
    numbers = sample_times(_video(), (0.0, 79.4), 0.5, 240)
    assert numbers[:3] == [0, 5, 10] and numbers[-2:] == [790, 794]  # the last keyframe's frame


def test_a_long_shot_is_read_more_sparsely_and_its_end_kept() -> None:
    numbers = sample_times(_video(frames=10_000), (0.0, 999.9), 0.5, 100)
    assert len(numbers) <= 100 and numbers[-1] == 9999 and numbers[1] - numbers[0] == 100


def test_a_span_outside_the_shot_reads_nothing() -> None:
    assert sample_times(_video(), (100.0, 120.0), 0.5, 240) == []
