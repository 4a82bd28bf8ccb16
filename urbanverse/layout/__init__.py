"""From 2D tracks and camera poses to a 3D layout: objects on the ground (``lift``), ground regions
(``ground``)."""
