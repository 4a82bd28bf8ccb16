"""2D perception of the gen pipeline: detection (``detect.run_detection``) and tracking
(``track.run_tracking``) over keyframes, with their records in ``records``.

Submodules are imported on use (OpenCV, TFLite and torch load only when a stage runs).
"""
